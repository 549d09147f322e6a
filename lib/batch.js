'use strict'
// readFilesUtf8 / readFilesUtf8Async: a list of files read by several threads
// at once (src/exports/batch.rs), the strings made on this thread in list
// order. Every entry the native side does not answer is answered here, in
// list order: fds and argument forms only fs should judge by the single-file
// functions, native reads that failed by fs as it stands (./answers). So every
// result and error is the one a loop over the single-file functions gives, and
// a sync batch that throws stops where that loop stops.
const os = require('node:os')
const { inspect } = require('node:util')
const { isProxy } = require('node:util/types')
const { constants } = require('node:fs')

const native = require('./native')
const pool = require('./pool')
const answers = require('./answers')
const { abortError, stringTooLong, FS_ANSWERS, STRING_TOO_LONG, TOO_LARGE } = require('./errors')
const { onAbort, offAbort, listenable, readFileUtf8Async } = require('./async')
const { readFileUtf8 } = require('./sync')
const { DELEGATE, isUtf8, openFlags } = require('./options')
const { nativeArgument } = require('./paths')

/** Most threads a batch may use, and the default's cap (lib/limits.json). */
const { BATCH_MAX_THREADS: MAX_CONCURRENCY, BATCH_DEFAULT_THREADS: DEFAULT_MAX_CONCURRENCY } = require('./limits')

const hasNative = typeof native.readFilesOpen === 'function'

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
 * The native side's list: `paths` itself when every entry is a string (and
 * it is a plain array), else a copy with Uint8Array paths, file: URLs as
 * strings, and null for what is read here (fds, forms only fs should judge).
 */
function nativeArgs(paths) {
  let args = isProxy(paths) ? Array.prototype.slice.call(paths) : null
  const list = args ?? paths
  for (let i = 0; i < list.length; i++) {
    const path = list[i]
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

/**
 * What the native readers may read before this thread needs it (src/exports/batch.rs
 * `Ahead`): with flags that can create, truncate or append, nothing — entries
 * are opened in list order, as a loop opens them; when the first failure
 * throws, regular files only (a loop stopped there would open no FIFO or
 * device past it, nor wait for one); otherwise everything.
 */
function readAhead(flags, returnErrors) {
  const { O_WRONLY, O_RDWR, O_CREAT, O_TRUNC, O_APPEND } = constants
  if ((flags & (O_WRONLY | O_RDWR | O_CREAT | O_TRUNC | O_APPEND)) !== 0) return 0
  return returnErrors ? 2 : 1
}

/**
 * Entry `i`'s value where the native side left the failure `code` there: the
 * entries it was not given are read by the single-file function, those it
 * failed to read answered by fs as it stands; our own codes are our errors.
 * `read(single, fsAnswer)` calls one of the two.
 */
function answerEntry(args, i, code, read) {
  if (code === STRING_TOO_LONG || code === TOO_LARGE) return stringTooLong()
  return read(args[i] === null)
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

/** Throws `err` as entry `i`'s failure (with `err.index`). */
function failAt(err, i) {
  err.index = i
  throw err
}

/**
 * Reads a list of files as UTF-8 text with several threads: element i is
 * `===` `fs.readFileSync(paths[i], 'utf8')`. Throws the error fs throws for
 * the first failing path in list order, with `err.index`, having touched
 * nothing past it that a loop would not have; with `{ errors: 'return' }`
 * that error takes the path's place instead.
 */
function readFilesUtf8(paths, options) {
  checkPaths(paths)
  const o = batchOptions(options, false)
  const perFile = { encoding: 'utf8', flag: o.flag }
  const readHere = (path) => (single) => (single ? readFileUtf8(path, perFile) : answers.direct.readFileSync(path, perFile))
  if (paths.length === 0 || o.flags === DELEGATE || !hasNative) {
    // One by one, as a loop: every entry to the single-file function.
    const out = new Array(paths.length)
    for (let i = 0; i < out.length; i++) {
      out[i] = valueOrError(() => readFileUtf8(paths[i], perFile))
      if (typeof out[i] !== 'string' && !o.returnErrors) failAt(out[i], i)
    }
    return out
  }
  const args = nativeArgs(paths)
  settleSoon()
  const handle = native.readFilesOpen(args, o.flags, o.concurrency, readAhead(o.flags, o.returnErrors))
  const out = []
  try {
    for (let i = native.readFilesNext(handle, out); i < args.length; i = native.readFilesNext(handle, out)) {
      const read = readHere(paths[i])
      const value = valueOrError(() => answerEntry(args, i, out[i], read))
      if (typeof value !== 'string' && !o.returnErrors) failAt(value, i)
      out[i] = value
    }
  } finally {
    native.readFilesCancel(handle)
  }
  return out
}

/**
 * Runs the native part of an async batch on this thread's pool (./pool):
 * resolves with its array of strings and failure codes (FS_ANSWERS for the
 * entries it was not given), once every entry given is in.
 */
function nativeBatch(args, o) {
  return new Promise((resolve, reject) => {
    const out = new Array(args.length).fill(FS_ANSWERS)
    let left = args.reduce((n, arg) => n + (arg !== null), 0)
    let settled = false
    let forget = null
    let listening = null
    const finish = (err) => {
      if (settled) return
      settled = true
      if (listening !== null) offAbort(o.signal, listening)
      if (err) {
        forget()
        reject(err)
      } else {
        resolve(out)
      }
    }
    const each = (i, value) => {
      out[i] = value
      if (--left === 0) finish(null)
    }
    if (left > 0) forget = pool.readAll(args, o.flags, o.concurrency, each)
    if (forget === null) return resolve(out)
    // The single reads' listener, shared by every read and batch on the signal
    // (none past EventTarget's limit, an 'abort' event without abort() ignored);
    // a signal that is no EventTarget is only looked at, as fs.promises does.
    if (listenable(o.signal)) {
      listening = { abort: () => finish(abortError(o.signal)) }
      onAbort(o.signal, listening)
    }
  })
}

/**
 * `readFilesUtf8` off the main thread: resolves with what
 * `Promise.all(paths.map((p) => fs.promises.readFile(p, 'utf8')))` gives, and
 * rejects with fs.promises' error for the first failing path in list order
 * (with `err.index`), or an AbortError when `options.signal` aborts. As
 * Promise.all starts every read, every entry is read.
 */
async function readFilesUtf8Async(paths, options) {
  checkPaths(paths)
  const o = batchOptions(options, true)
  if (o.signal?.aborted) throw abortError(o.signal)
  const args = nativeArgs(paths)
  const batched = paths.length > 0 && o.flags !== DELEGATE && hasNative
  const out = batched ? await nativeBatch(args, o) : new Array(paths.length).fill(FS_ANSWERS)
  const perFile = { encoding: 'utf8', flag: o.flag, signal: o.signal }
  // The entries left to answer here, all started at once (as Promise.all
  // starts every read), then taken in list order.
  const answering = []
  for (let i = 0; i < out.length; i++) {
    if (typeof out[i] === 'string') continue
    const read = (single) =>
      single || !batched ? readFileUtf8Async(paths[i], perFile) : answers.direct.promisesReadFile(paths[i], perFile)
    answering.push([i, (async () => answerEntry(args, i, out[i], read))().catch((err) => err)])
  }
  for (const [i, answer] of answering) {
    const value = await answer
    if (o.signal?.aborted) throw abortError(o.signal)
    if (typeof value !== 'string' && !o.returnErrors) failAt(value, i)
    out[i] = value
  }
  // As fs.promises: an abort during the reads wins over their results.
  if (o.signal?.aborted) throw abortError(o.signal)
  return out
}

module.exports = { readFilesUtf8, readFilesUtf8Async }
