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
 * The native reads in flight per signal, each a function that stops it. One
 * listener per signal, not one per read: a signal shared by many reads would
 * otherwise pass EventTarget's listener limit and print a warning.
 */
const inFlight = new WeakMap()

/** The 'abort' listener (`this` is the signal); a dispatched event alone, without abort(), is ignored. */
function stopAll() {
  if (!this.aborted) return
  const stops = inFlight.get(this)
  inFlight.delete(this)
  this.removeEventListener('abort', stopAll)
  for (const stop of stops ?? []) stop()
}

/** Calls `stop` when `signal` aborts; returns the function that forgets it. */
function onAbort(signal, stop) {
  let stops = inFlight.get(signal)
  if (stops === undefined) {
    stops = new Set()
    inFlight.set(signal, stops)
    signal.addEventListener('abort', stopAll)
  }
  stops.add(stop)
  return () => {
    stops.delete(stop)
    if (stops.size === 0 && inFlight.get(signal) === stops) {
      inFlight.delete(signal)
      signal.removeEventListener('abort', stopAll)
    }
  }
}

/**
 * Starts the native read of `arg` (a native argument: string, bytes or fd) on
 * this thread's pool (./pool): a promise of its result, a string or a failure
 * code. When `signal` aborts, the promise rejects with fs's AbortError at once
 * and the native read stops at its next chunk (a read blocked in read(2),
 * e.g. on a silent FIFO, once data comes).
 */
function startNative(arg, flags, signal) {
  const listens = typeof signal?.addEventListener === 'function'
  const read = pool.readOne(arg, flags, listens)
  if (!listens) return read.promise
  return new Promise((resolve, reject) => {
    const forget = onAbort(signal, () => {
      read.stop()
      reject(abortError(signal))
    })
    read.promise.then(resolve, reject).finally(forget)
  })
}

/**
 * The read every async API shares, after options were decoded. Returns
 * DELEGATE, synchronously, for calls only fs should answer; otherwise a
 * promise of the string, or of DELEGATE when fs must answer after all, or
 * rejected with our own error (see lib/errors.js). `allowFd`: integer
 * fds are read natively (fs.promises.readFile refuses numbers, so its drop-in
 * does not).
 */
function startRead(path, flags, signal, allowFd) {
  if (flags === DELEGATE) return DELEGATE // a bad flag or signal among them
  const arg = nativeArgument(path)
  // Paths with NUL bytes are fs's to reject (fs.readFile even throws
  // synchronously), so they never reach the native read.
  if (arg === DELEGATE || (typeof arg === 'number' && !allowFd) || hasNul(arg)) return DELEGATE
  return startNative(arg, flags, signal)
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

/**
 * The promise APIs' read: the string, or a rejection with fs.promises' error.
 * `delegate()` lets fs.promises answer. One promise on top of the native
 * read's: a Promise.all of many reads keeps fewer objects alive.
 */
function readAsync(path, flags, signal, allowFd, delegate) {
  // As fs.promises: an aborted signal rejects before the path is looked at.
  if (flags !== DELEGATE && signal?.aborted) return Promise.reject(abortError(signal))
  const reading = startRead(path, flags, signal, allowFd)
  if (reading === DELEGATE) return delegate()
  return reading.then((result) => {
    const text = outcome(result, signal)
    return text === DELEGATE ? delegate() : text
  })
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
    return readAsync(path, flags, signal, true, () =>
      // fs.promises takes no fds; fd-async reads them as its FileHandle.readFile does.
      typeof path === 'number'
        ? readFdAsync(path, asUtf8Options(options))
        : answers.direct.promisesReadFile(path, asUtf8Options(options)),
    )
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
  return function readFile(path, options) {
    try {
      const delegate = () => answer.promisesReadFile(path, options)
      if (!isUtf8(requestedEncoding(options))) return Promise.resolve(delegate())
      const { flags, signal } = utf8Request(options)
      return readAsync(path, flags, signal, false, delegate)
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
    const reading = signal?.aborted ? DELEGATE : startRead(path, flags, signal, false)
    if (reading === DELEGATE) return Reflect.apply(answer.readFile, fs, arguments)
    reading.then(
      (result) => {
        let text
        try {
          text = outcome(result, signal)
        } catch (err) {
          return process.nextTick(callback, err)
        }
        if (text === DELEGATE) answer.readFile(path, options, callback)
        else process.nextTick(callback, null, text)
      },
      (err) => process.nextTick(callback, err),
    )
  }
}

const readFile = answers.ourFunction('readFile', readFileAnsweredBy(answers.direct))
const promisesReadFile = answers.ourFunction('promisesReadFile', promisesReadFileAnsweredBy(answers.direct))
/** What readfile-utf8/register installs as fs.readFile and fs.promises.readFile. */
const hooks = {
  readFile: answers.ourFunction('readFile', readFileAnsweredBy(answers.hooked)),
  promisesReadFile: answers.ourFunction('promisesReadFile', promisesReadFileAnsweredBy(answers.hooked)),
}

module.exports = { readFileUtf8Async, readFile, promisesReadFile, hooks, onAbort }
