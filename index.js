'use strict'
// readfile-utf8: fs.readFileSync(path, 'utf8'), faster, with the same result and
// the same errors. This file is the thin JS layer: it decodes fs's argument forms
// and hands the common ones to the native pipeline (src/lib.rs); everything else
// goes to fs itself, which then answers (or throws) exactly as it always does.
const fs = require('node:fs')

const native = require('./lib/native')
const { noteHeap } = require('./lib/heap')
const { readFileUtf8Async, readFile, promisesReadFile } = require('./lib/async')
const { decodeUtf8 } = require('./lib/decode')
const { readFilesUtf8, readFilesUtf8Async } = require('./lib/batch')
const { failure, FS_ANSWERS } = require('./lib/errors')
const { DELEGATE, isUtf8, requestedEncoding, readerFlags, utf8Request, asUtf8Options } = require('./lib/options')
const { nativeArgument, pathForError } = require('./lib/paths')

// Kept at load time, so a later patch of fs (readfile-utf8/register) cannot loop back to us.
const fsReadFileSync = fs.readFileSync

/**
 * Reads with the native pipeline. Returns the string, throws fs's error, or
 * returns DELEGATE for argument forms that only fs should answer.
 */
function readNative(path, flags) {
  const arg = nativeArgument(path)
  if (arg === DELEGATE) return DELEGATE
  noteHeap()
  let result
  if (typeof arg === 'string') result = native.readPath(arg, flags)
  else if (typeof arg === 'number') result = native.readFd(arg)
  else result = native.readPathBytes(arg, flags)
  if (typeof result === 'string') return result
  if (result === FS_ANSWERS) return DELEGATE
  throw failure(result, pathForError(arg))
}

/**
 * Reads a whole file as UTF-8 text: `===` to `fs.readFileSync(path, 'utf8')`.
 * @param {string | Buffer | URL | number} path file path, `file:` URL or fd
 * @param {'utf8' | 'utf-8' | { encoding?: 'utf8' | 'utf-8' | null, flag?: string | number }} [options]
 * @returns {string}
 */
function readFileUtf8(path, options) {
  const flags = readerFlags(options)
  const result = flags === DELEGATE ? DELEGATE : readNative(path, flags)
  return result === DELEGATE ? fsReadFileSync(path, asUtf8Options(options)) : result
}

/**
 * `fs.readFileSync` with exactly fs's signature: UTF-8 requests take the native
 * path, every other call is passed to `fs.readFileSync` unchanged.
 */
function readFileSync(path, options) {
  const encoding = requestedEncoding(options)
  if (!isUtf8(encoding)) return fsReadFileSync(path, options)
  const { flags } = utf8Request(options)
  let result
  try {
    result = flags === DELEGATE ? DELEGATE : readNative(path, flags)
  } catch (err) {
    if (err.code === 'ERR_STRING_TOO_LONG' && refusedBySizeInFs(path, encoding)) result = DELEGATE
    else throw err
  }
  return result === DELEGATE ? fsReadFileSync(path, options) : result
}

/** kIoMaxLength: fs reads no file larger than this into a Buffer. */
const IO_MAX_LENGTH = 2 ** 31 - 1

/**
 * Whether fs.readFileSync refuses this file by its size before reading it: a
 * UTF-8 spelling other than 'utf8' or 'utf-8' takes fs's Buffer path, which
 * throws ERR_FS_FILE_TOO_LARGE for a regular file over 2 GiB, where its
 * UTF-8 path (and ours) gives ERR_STRING_TOO_LONG.
 */
function refusedBySizeInFs(path, encoding) {
  if (encoding === 'utf8' || encoding === 'utf-8') return false
  try {
    const stats = typeof path === 'number' ? fs.fstatSync(path) : fs.statSync(path)
    return stats.isFile() && stats.size > IO_MAX_LENGTH
  } catch {
    return false
  }
}

const MEMORY_MODES = ['fast', 'lean']

/**
 * Sets how the whole process's sync calls make strings: 'lean' (the default:
 * external only where fs's own are, so loops of reads peak as fs's) or 'fast'
 * (large ones external, which saves a copy but holds dead strings until a
 * full GC).
 * @param {'lean' | 'fast'} mode
 * @returns {'lean' | 'fast'} the mode it replaces
 */
function setMemoryMode(mode) {
  if (!MEMORY_MODES.includes(mode)) {
    const shown = typeof mode === 'string' ? `'${mode}'` : String(mode)
    const err = new TypeError(`The argument 'mode' must be 'fast' or 'lean'. Received ${shown}`)
    err.code = 'ERR_INVALID_ARG_VALUE'
    throw err
  }
  return native.setLeanStrings(mode === 'lean') ? 'lean' : 'fast'
}

// READFILE_UTF8_MEMORY_MODE sets the mode without code (e.g. under `-r
// readfile-utf8/register`), once: on the main thread, so that a Worker
// started later does not undo a setMemoryMode call.
const modeFromEnv = process.env.READFILE_UTF8_MEMORY_MODE
if (modeFromEnv && require('node:worker_threads').isMainThread) {
  if (MEMORY_MODES.includes(modeFromEnv)) setMemoryMode(modeFromEnv)
  else {
    process.emitWarning(`READFILE_UTF8_MEMORY_MODE must be 'fast' or 'lean', not '${modeFromEnv}': it is ignored.`, {
      code: 'READFILE_UTF8_BAD_MEMORY_MODE',
    })
  }
}

module.exports = {
  readFileUtf8,
  readFileSync,
  readFileUtf8Async,
  readFilesUtf8,
  readFilesUtf8Async,
  decodeUtf8,
  /** `fs.readFile` with fs's signature: UTF-8 requests for paths are ours. */
  readFile,
  /** `fs.promises.readFile` with its signature: UTF-8 requests are ours. */
  promises: { readFile: promisesReadFile },
  /** Which UTF-8 engine the addon uses in this process: 'simdutf' or 'fallback'. */
  engine: native.engine,
  setMemoryMode,
}
