'use strict'
// The asynchronous entry points: readFileUtf8Async, and fs.readFile /
// fs.promises.readFile drop-ins. Open, read, classify and transcode run on
// this thread's pool of readers (./pool, src/exports/pool/), which reads in
// flight together share; the main thread only makes the strings. Whatever we do not serve natively, and every native read that
// failed, goes to fs as it stands (./answers), which then answers (or fails)
// exactly as it always does.
const fs = require('node:fs')

const native = require('./native')
const pool = require('./pool')
const answers = require('./answers')
const { abortError, failure, FS_ANSWERS } = require('./errors')
const { DELEGATE, isUtf8, requestedEncoding, readerFlags, utf8Request, asUtf8Options } = require('./options')
const { nativeArgument, hasNul } = require('./paths')
const { readFdAsync } = require('./fd-async')

/**
 * What is in flight per signal: native reads and async batches, each with an
 * `abort()`. One listener per signal, not one per read: a signal shared by
 * many reads would otherwise pass EventTarget's listener limit and print a
 * warning.
 */
const inFlight = new WeakMap()

/** The 'abort' listener (`this` is the signal); a dispatched event alone, without abort(), is ignored. */
function abortAll() {
  if (!this.aborted) return
  const reads = inFlight.get(this)
  inFlight.delete(this)
  this.removeEventListener('abort', abortAll)
  for (const read of reads ?? []) read.abort()
}

/** Calls `read.abort()` when `signal` aborts, until `offAbort(signal, read)`. */
function onAbort(signal, read) {
  let reads = inFlight.get(signal)
  if (reads === undefined) {
    reads = new Set()
    inFlight.set(signal, reads)
    signal.addEventListener('abort', abortAll)
  }
  reads.add(read)
}

/** Stops calling `read.abort()` when `signal` aborts. */
function offAbort(signal, read) {
  const reads = inFlight.get(signal)
  if (reads === undefined) return
  reads.delete(read)
  if (reads.size === 0) {
    inFlight.delete(signal)
    signal.removeEventListener('abort', abortAll)
  }
}

/** A signal whose 'abort' we can listen to (fs.promises only looks at the others' `aborted`). */
const listenable = (signal) => typeof signal?.addEventListener === 'function'

/**
 * An async read of `arg` (a native argument: string, bytes or fd) on this
 * thread's pool (./pool), for a caller who asked for `path` with `options`.
 * When `signal` aborts, the read's `fail` gets fs's AbortError at once, its
 * `done` never, and the native read stops at its next chunk (a read blocked
 * in read(2), e.g. on a silent FIFO, once data comes). Subclasses say how the
 * caller is answered: `done(result)` with the pool's result, `fail(err)`.
 */
class NativeRead extends pool.Read {
  constructor(arg, flags, signal, path, options) {
    super(arg, flags, listenable(signal))
    this.signal = signal
    this.path = path
    this.options = options
    this.aborted = false
  }

  start() {
    if (this.cancellable) onAbort(this.signal, this)
    pool.readOne(this)
  }

  settled(result) {
    if (this.cancellable) offAbort(this.signal, this)
    if (!this.aborted) this.done(result)
  }

  abort() {
    this.aborted = true
    this.stop()
    this.fail(abortError(this.signal))
  }
}

/**
 * The native argument for an async read of `path`, after options were
 * decoded, or DELEGATE for calls only fs should answer. `allowFd`: integer
 * fds are read natively (fs.promises.readFile refuses numbers, so its drop-in
 * does not).
 */
function nativeArgumentOf(path, flags, allowFd) {
  if (flags === DELEGATE) return DELEGATE // a bad flag or signal among them
  const arg = nativeArgument(path)
  // Paths with NUL bytes are fs's to reject (fs.readFile even throws
  // synchronously), so they never reach the native read.
  if (arg === DELEGATE || (typeof arg === 'number' && !allowFd) || hasNul(arg)) return DELEGATE
  return arg
}

/**
 * What a native read's result (a string or a failure code) means: the
 * string, DELEGATE where fs must answer, or our error, thrown.
 */
function outcome(result, signal) {
  // As fs: an abort during the read wins over its result.
  if (signal?.aborted) throw abortError(signal)
  if (typeof result === 'string') return result
  // Among these, files of kMaxLength bytes or more: fs.promises decodes chunk by
  // chunk and its answer (a string or which error) depends on the Node version.
  if (result === FS_ANSWERS) return DELEGATE
  throw failure(result)
}

/** The read whose promise `new Promise(takeResolvers)` is making. */
let making

function takeResolvers(resolve, reject) {
  making.resolve = resolve
  making.reject = reject
}

/**
 * A read of the promise APIs: its one promise, settled from the pool's
 * wake-up, resolves with the string or rejects with fs.promises' error;
 * `delegate(path, options)` lets fs.promises answer. A Promise.all of many
 * reads keeps few objects alive and waits no extra turn of microtasks.
 */
class PromiseRead extends NativeRead {
  constructor(arg, flags, signal, path, options, delegate) {
    super(arg, flags, signal, path, options)
    this.delegate = delegate
    this.resolve = undefined
    this.reject = undefined
  }

  promise() {
    making = this
    const promise = new Promise(takeResolvers)
    making = undefined
    this.start()
    return promise
  }

  done(result) {
    try {
      const text = outcome(result, this.signal)
      this.resolve(text === DELEGATE ? this.delegate(this.path, this.options) : text)
    } catch (err) {
      this.reject(err)
    }
  }

  fail(err) {
    this.reject(err)
  }
}

/** The promise APIs' read: the string, or a rejection with fs.promises' error. */
function readAsync(path, options, flags, signal, allowFd, delegate) {
  // As fs.promises: an aborted signal rejects before the path is looked at.
  if (flags !== DELEGATE && signal?.aborted) return Promise.reject(abortError(signal))
  const arg = nativeArgumentOf(path, flags, allowFd)
  if (arg === DELEGATE) return delegate(path, options)
  return new PromiseRead(arg, flags, signal, path, options, delegate).promise()
}

/** Where readFileUtf8Async lets fs answer. */
function readFileUtf8AsyncByFs(path, options) {
  // fs.promises takes no fds; fd-async reads them as its FileHandle.readFile does.
  return typeof path === 'number'
    ? readFdAsync(path, asUtf8Options(options))
    : answers.direct.promisesReadFile(path, asUtf8Options(options))
}

/**
 * Reads a whole file as UTF-8 text off the main thread:
 * `=== await fs.promises.readFile(path, 'utf8')`, with fs.promises' errors.
 * Accepts readFileUtf8's arguments (integer fds too) plus `options.signal`.
 */
function readFileUtf8Async(path, options) {
  try {
    const flags = readerFlags(options)
    // A signal only comes in an options object (fs.promises rejects other forms itself).
    const signal = typeof options === 'object' && options !== null ? options.signal : undefined
    return readAsync(path, options, flags, signal, true, readFileUtf8AsyncByFs)
  } catch (err) {
    return Promise.reject(err)
  }
}

/**
 * `fs.promises.readFile` with exactly its signature: UTF-8 requests are read
 * natively, every other call is passed to `fs.promises.readFile` unchanged —
 * as `answer` (lib/answers.js) says which: the exported drop-in, or the hook.
 */
function promisesReadFileAnsweredBy(answer) {
  const delegate = (path, options) => answer.promisesReadFile(path, options)
  return function readFile(path, options) {
    try {
      if (!isUtf8(requestedEncoding(options))) return Promise.resolve(delegate(path, options))
      const { flags, signal } = utf8Request(options)
      return readAsync(path, options, flags, signal, false, delegate)
    } catch (err) {
      return Promise.reject(err)
    }
  }
}

/**
 * `fs.readFile` with exactly its signature: UTF-8 requests for paths are read
 * natively, every other call (fds included) is passed to `fs.readFile`
 * unchanged (which one: see `promisesReadFileAnsweredBy`). The callback runs
 * on a later tick, as fs's does, outside any promise.
 */
function readFileAnsweredBy(answer) {
  return function readFile(path, options, callback) {
    if (typeof callback !== 'function' || !isUtf8(requestedEncoding(options))) {
      return Reflect.apply(answer.readFile, fs, arguments)
    }
    const { flags, signal } = utf8Request(options)
    // An aborted signal: fs calls back with its AbortError itself.
    const arg = signal?.aborted ? DELEGATE : nativeArgumentOf(path, flags, false)
    if (arg === DELEGATE) return Reflect.apply(answer.readFile, fs, arguments)
    new CallbackRead(arg, flags, signal, path, options, answer, callback).start()
  }
}

/** A read of the fs.readFile drop-in: its callback runs on a later tick, as fs's does, outside any promise. */
class CallbackRead extends NativeRead {
  constructor(arg, flags, signal, path, options, answer, callback) {
    super(arg, flags, signal, path, options)
    this.answer = answer
    this.callback = callback
  }

  done(result) {
    let text
    try {
      text = outcome(result, this.signal)
    } catch (err) {
      return this.fail(err)
    }
    if (text === DELEGATE) process.nextTick(() => this.answer.readFile(this.path, this.options, this.callback))
    else process.nextTick(this.callback, null, text)
  }

  fail(err) {
    process.nextTick(this.callback, err)
  }
}

const readFile = answers.ourFunction('readFile', readFileAnsweredBy(answers.direct))
const promisesReadFile = answers.ourFunction('promisesReadFile', promisesReadFileAnsweredBy(answers.direct))
/** What readfile-utf8/register installs as fs.readFile and fs.promises.readFile. */
const hooks = {
  readFile: answers.ourFunction('readFile', readFileAnsweredBy(answers.hooked)),
  promisesReadFile: answers.ourFunction('promisesReadFile', promisesReadFileAnsweredBy(answers.hooked)),
}

module.exports = { readFileUtf8Async, readFile, promisesReadFile, hooks, onAbort, offAbort, listenable }
