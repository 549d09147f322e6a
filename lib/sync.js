'use strict'
// The synchronous reads: readFileUtf8, and the fs.readFileSync drop-in. The
// common argument forms go to the native pipeline; everything else, and every
// read the native side could not make, is answered by fs (./answers).
const fs = require('node:fs')

const native = require('./native')
const answers = require('./answers')
const { failure, stringTooLong, FS_ANSWERS, TOO_LARGE } = require('./errors')
const { DELEGATE, isUtf8, requestedEncoding, readerFlags, utf8Request, asUtf8Options } = require('./options')
const { nativeArgument } = require('./paths')

/**
 * Reads with the native pipeline. Returns the string, throws our own error
 * (a read of unknown length past kMaxLength; bytes of a caller's fd lost to a
 * failed read), returns TOO_LARGE for a regular file of kMaxLength bytes or
 * more, or DELEGATE where fs answers.
 */
function readNative(path, flags) {
  const arg = nativeArgument(path)
  if (arg === DELEGATE) return DELEGATE
  let result
  if (typeof arg === 'string') result = native.readPath(arg, flags)
  else if (typeof arg === 'number') result = native.readFd(arg)
  else result = native.readPathBytes(arg, flags)
  if (typeof result === 'string' || result === TOO_LARGE) return result
  if (result === FS_ANSWERS) return DELEGATE
  throw failure(result)
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
  if (result === TOO_LARGE) throw stringTooLong()
  return result === DELEGATE ? answers.direct.readFileSync(path, asUtf8Options(options)) : result
}

/**
 * `fs.readFileSync` with exactly fs's signature: UTF-8 requests take the native
 * path, every other call is passed to fs's `readFileSync` unchanged — as
 * `answer` (lib/answers.js) says which: the exported drop-in, or the hook.
 */
function readFileSyncAnsweredBy(answer) {
  return function readFileSync(path, options) {
    const encoding = requestedEncoding(options)
    if (!isUtf8(encoding)) return answer.readFileSync(path, options)
    const { flags } = utf8Request(options)
    // A file too large for any string: Node's UTF-8 path (the exact spellings
    // 'utf8' and 'utf-8') reads it and throws ERR_STRING_TOO_LONG, which we
    // throw without reading it; other spellings take fs's Buffer path, which
    // refuses a regular file over 2 GiB by its size (ERR_FS_FILE_TOO_LARGE).
    const exact = encoding === 'utf8' || encoding === 'utf-8'
    let result
    try {
      result = flags === DELEGATE ? DELEGATE : readNative(path, flags)
    } catch (err) {
      // A caller's fd is read to its end whatever its size (its offset may
      // leave less than kMaxLength): fs's Buffer path refuses it up front.
      if (exact || err.code !== 'ERR_STRING_TOO_LONG' || !overIoMaxLength(path)) throw err
      result = DELEGATE
    }
    if (typeof result === 'string') return result
    if (result === TOO_LARGE && exact) throw stringTooLong()
    return answer.readFileSync(path, options)
  }
}

/** kIoMaxLength: fs reads no file larger than this into a Buffer. */
const IO_MAX_LENGTH = require('./limits').facts.NODE_IO_MAX_BYTES

/** Whether the fd `path` is a regular file fs's Buffer path refuses by its size. */
function overIoMaxLength(path) {
  try {
    const stats = fs.fstatSync(path)
    return stats.isFile() && stats.size > IO_MAX_LENGTH
  } catch {
    return false
  }
}

const readFileSync = answers.ourFunction('readFileSync', readFileSyncAnsweredBy(answers.direct))
/** What readfile-utf8/register installs as fs.readFileSync. */
const readFileSyncHook = answers.ourFunction('readFileSync', readFileSyncAnsweredBy(answers.hooked))

module.exports = { readFileUtf8, readFileSync, readFileSyncHook }
