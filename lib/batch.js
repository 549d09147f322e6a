'use strict'
// readFilesUtf8 / readFilesUtf8Async: a list of files read by several threads
// at once (src/batch.rs), the strings made on this thread in list order. What
// the native side cannot answer (fds, argument forms only fs should judge,
// FS_ANSWERS) is read here, one by one in list order, by the single-file
// functions, so every result and error is the one a loop over them gives.
const os = require('node:os')
const { inspect } = require('node:util')

const native = require('./native')
const { noteHeap } = require('./heap')
const { failure, FS_ANSWERS } = require('./errors')
const { abortError, asyncFailure } = require('./async')
const { DELEGATE, isUtf8, openFlags } = require('./options')
const { nativeArgument, pathForError } = require('./paths')

/** Most threads a batch may use (src/batch.rs MAX_THREADS). */
const MAX_CONCURRENCY = 256
/** The default: every core, up to this many; beyond it, reads wait on the disk or the page cache. */
const DEFAULT_MAX_CONCURRENCY = 16

const hasNative = typeof native.readFiles === 'function'

// index.js requires this file, so its functions are looked up when first needed.
let single
function singleReads() {
  single ??= require('../index')
  return single
}

/** How Node's validators name a wrong value ("Received ..."). */
function received(value) {
  if (value === null || value === undefined) return String(value)
  if (typeof value === 'function') return `function ${value.name}`
  if (typeof value === 'object') {
    return value.constructor?.name ? `an instance of ${value.constructor.name}` : inspect(value, { depth: -1 })
  }
  let shown = inspect(value)
  if (typeof value === 'string' && value.length > 28) shown = inspect(`${value.slice(0, 25)}...`)
  return `type ${typeof value} (${shown})`
}

function invalidArgType(name, expected, value) {
  const what = name.includes('.') ? 'property' : 'argument'
  const err = new TypeError(`The "${name}" ${what} must be ${expected}. Received ${received(value)}`)
  err.code = 'ERR_INVALID_ARG_TYPE'
  return err
}

function outOfRange(name, range, value) {
  const err = new RangeError(`The value of "${name}" is out of range. It must be ${range}. Received ${inspect(value)}`)
  err.code = 'ERR_OUT_OF_RANGE'
  return err
}

function invalidArgValue(name, reason, value) {
  const err = new TypeError(`The property '${name}' ${reason}. Received ${inspect(value)}`)
  err.code = 'ERR_INVALID_ARG_VALUE'
  return err
}

/** The default concurrency: this machine's available parallelism, capped. */
function defaultConcurrency() {
  const cores = typeof os.availableParallelism === 'function' ? os.availableParallelism() : os.cpus().length
  return Math.max(1, Math.min(cores, DEFAULT_MAX_CONCURRENCY))
}

/**
 * The batch's options, validated as Node validates its own (thrown errors:
 * ERR_INVALID_ARG_TYPE, ERR_OUT_OF_RANGE, ERR_INVALID_ARG_VALUE). `flags` is
 * DELEGATE for a flag fs must judge (every entry then goes to fs, which throws
 * its error for it).
 */
function batchOptions(options, withSignal) {
  if (options === undefined || options === null) {
    return { flags: openFlags(undefined), flag: undefined, concurrency: defaultConcurrency(), returnErrors: false }
  }
  if (typeof options === 'string') {
    if (!isUtf8(options)) throw invalidArgValue('options.encoding', "must be 'utf8' or 'utf-8'", options)
    return batchOptions(undefined, withSignal)
  }
  if (typeof options !== 'object') throw invalidArgType('options', 'of type object', options)
  const { encoding, flag, concurrency = defaultConcurrency(), errors = 'throw', signal } = options
  if (encoding != null && !isUtf8(encoding)) throw invalidArgValue('options.encoding', "must be 'utf8' or 'utf-8'", encoding)
  if (typeof concurrency !== 'number') throw invalidArgType('options.concurrency', 'of type number', concurrency)
  if (!Number.isInteger(concurrency)) throw outOfRange('options.concurrency', 'an integer', concurrency)
  if (concurrency < 1 || concurrency > MAX_CONCURRENCY) {
    throw outOfRange('options.concurrency', `>= 1 && <= ${MAX_CONCURRENCY}`, concurrency)
  }
  if (errors !== 'throw' && errors !== 'return') {
    throw invalidArgValue('options.errors', "must be one of: 'throw', 'return'", errors)
  }
  if (withSignal && signal !== undefined && (signal === null || typeof signal !== 'object' || !('aborted' in signal))) {
    throw invalidArgType('options.signal', 'an instance of AbortSignal', signal)
  }
  return { flags: openFlags(flag), flag, concurrency, returnErrors: errors === 'return', signal }
}

/**
 * The native side's list: `paths` itself when every entry is a string, else
 * a copy with Uint8Array paths, file: URLs as strings, and null for what is
 * read here (fds, forms only fs should judge).
 */
function nativeArgs(paths) {
  let args = null
  for (let i = 0; i < paths.length; i++) {
    const path = paths[i]
    if (typeof path === 'string' && nativeArgument(path) === path) continue
    args ??= paths.slice()
    const arg = nativeArgument(path)
    args[i] = arg === DELEGATE || typeof arg === 'number' ? null : arg
  }
  return args ?? paths
}

function checkPaths(paths) {
  if (!Array.isArray(paths)) throw invalidArgType('paths', 'an instance of Array', paths)
}

/** Every entry left to the single-file functions (no addon, or a flag only fs judges). */
function allHere(n) {
  return new Array(n).fill(FS_ANSWERS)
}

/** The entries the native batch left unanswered (not a string): [index, failure code]. */
function* unanswered(out) {
  for (let i = 0; i < out.length; i++) if (typeof out[i] !== 'string') yield [i, out[i]]
}

/**
 * Puts entry `i`'s value in place: its string, or fs's Error for it, which is
 * thrown (with `err.index`) unless errors are returned in place.
 */
function place(out, i, value, returnErrors) {
  if (typeof value !== 'string' && !returnErrors) {
    value.index = i
    throw value
  }
  out[i] = value
}

/** What `read()` returns, or the error it throws. */
function valueOrError(read) {
  try {
    return read()
  } catch (err) {
    return err
  }
}

let settleQueued = false
/**
 * Once this task's synchronous code is done, tells V8's GC of the bytes of
 * the strings a sync batch made: the batch itself reports them only at the
 * next batch's start (see src/external_memory.rs).
 */
function settleSoon() {
  if (settleQueued) return
  settleQueued = true
  queueMicrotask(() => {
    settleQueued = false
    native.readFilesSettle()
  })
}

/**
 * Reads a list of files as UTF-8 text with several threads: element i is
 * `===` `fs.readFileSync(paths[i], 'utf8')`. Throws the error fs throws for
 * the first failing path in list order, with `err.index`; with
 * `{ errors: 'return' }` that error takes the path's place instead.
 */
function readFilesUtf8(paths, options) {
  checkPaths(paths)
  const o = batchOptions(options, false)
  const args = nativeArgs(paths)
  let out
  if (paths.length === 0 || o.flags === DELEGATE || !hasNative) {
    out = allHere(paths.length)
  } else {
    settleSoon()
    noteHeap(true)
    out = native.readFiles(args, o.flags, o.concurrency, !o.returnErrors)
  }
  const perFile = { encoding: 'utf8', flag: o.flag }
  for (const [i, code] of unanswered(out)) {
    const value =
      code === FS_ANSWERS
        ? valueOrError(() => singleReads().readFileUtf8(paths[i], perFile))
        : failure(code, pathForError(args[i]))
    place(out, i, value, o.returnErrors)
  }
  return out
}

/** Runs the native async batch: resolves with its array of strings and failure codes. */
function nativeBatch(args, o) {
  return new Promise((resolve, reject) => {
    let handle
    let settled = false
    const finish = (err, out) => {
      if (settled) return
      settled = true
      o.signal?.removeEventListener('abort', onAbort)
      if (err) {
        native.readFilesCancel(handle)
        reject(err)
      } else {
        resolve(out)
      }
    }
    const onAbort = () => finish(abortError(o.signal))
    const out = []
    const onReady = () => {
      if (settled) return
      try {
        if (native.readFilesTake(handle, out)) finish(null, out)
      } catch (err) {
        finish(err)
      }
    }
    noteHeap(true)
    handle = native.readFilesStart(args, o.flags, o.concurrency, !o.returnErrors, onReady)
    o.signal?.addEventListener('abort', onAbort, { once: true })
  })
}

/**
 * `readFilesUtf8` off the main thread: resolves with what
 * `Promise.all(paths.map((p) => fs.promises.readFile(p, 'utf8')))` gives, and
 * rejects with fs.promises' error for the first failing path in list order
 * (with `err.index`), or an AbortError when `options.signal` aborts.
 */
async function readFilesUtf8Async(paths, options) {
  checkPaths(paths)
  const o = batchOptions(options, true)
  if (o.signal?.aborted) throw abortError(o.signal)
  const args = nativeArgs(paths)
  const out =
    paths.length === 0 || o.flags === DELEGATE || !hasNative ? allHere(paths.length) : await nativeBatch(args, o)
  const perFile = { encoding: 'utf8', flag: o.flag }
  for (const [i, code] of unanswered(out)) {
    const value =
      code === FS_ANSWERS
        ? await singleReads().readFileUtf8Async(paths[i], perFile).catch((err) => err)
        : await asyncFailure(code, args[i], 'promises')
    place(out, i, value, o.returnErrors)
  }
  // As fs.promises: an abort during the reads wins over their results.
  if (o.signal?.aborted) throw abortError(o.signal)
  return out
}

module.exports = { readFilesUtf8, readFilesUtf8Async }
