'use strict'
// The asynchronous entry points: readFileUtf8Async, and fs.readFile /
// fs.promises.readFile drop-ins. Open, read, classify and transcode run on
// libuv's thread pool (src/async_read.rs); the main thread only makes the string.
// Whatever we do not serve natively goes to fs itself, which then answers (or
// fails) exactly as it always does.
const fs = require('node:fs')
const EventEmitter = require('node:events')
const { promisify } = require('node:util')

const native = require('./native')
const { failure, FS_ANSWERS, STRING_TOO_LONG } = require('./errors')
const { DELEGATE, isUtf8, requestedEncoding, readerFlags, utf8Request, asUtf8Options } = require('./options')
const { nativeArgument, pathForError, hasNul } = require('./paths')

// Kept at load time, so a later patch of fs (readfile-utf8/register) cannot loop back to us.
const fsReadFile = fs.readFile
const fsPromisesReadFile = fs.promises.readFile
const fsReadFileAsPromise = promisify(fsReadFile)

/**
 * Starts the native read of `path`: `{ promise, arg }` (`arg` the native
 * argument, for the error's path), or DELEGATE for argument forms that only
 * fs should answer. `allowFd`: integer fds are read natively (fs.promises.readFile
 * refuses numbers, so its drop-in does not).
 */
function startNative(path, flags, allowFd) {
  const arg = nativeArgument(path)
  // Paths with NUL bytes are fs's to reject (fs.readFile even throws
  // synchronously), so they never reach the native read.
  if (arg === DELEGATE || (typeof arg === 'number' && !allowFd) || hasNul(arg)) return DELEGATE
  let promise
  if (typeof arg === 'string') promise = native.readPathAsync(arg, flags)
  else if (typeof arg === 'number') promise = native.readFdAsync(arg)
  else promise = native.readPathBytesAsync(arg, flags)
  return { promise, arg }
}

/** fs's check of `options.signal` (validateAbortSignal): undefined, or an object with `aborted`. */
function isValidSignal(signal) {
  return signal === undefined || (signal !== null && typeof signal === 'object' && 'aborted' in signal)
}

let AbortErrorClass
/**
 * The AbortError fs gives for an aborted signal: Node's own (internal) class,
 * borrowed from `events.on`, which throws one synchronously for an aborted signal.
 */
function abortError(signal) {
  if (AbortErrorClass === undefined) {
    try {
      EventEmitter.on(new EventEmitter(), 'x', { signal: AbortSignal.abort() })
    } catch (err) {
      if (err?.name === 'AbortError') AbortErrorClass = err.constructor
    }
    AbortErrorClass ??= class AbortError extends Error {
      constructor(message = 'The operation was aborted', options = undefined) {
        super(message, options)
        this.code = 'ABORT_ERR'
        this.name = 'AbortError'
      }
    }
  }
  return new AbortErrorClass(undefined, { cause: signal.reason })
}

// How this Node's fs shapes a failed read(2) — the error for reading a directory
// — measured once per API: Node 20 names no path and (fs.promises) gives a
// stack, newer Nodes name the path and give no stack frames.
const styles = new Map()
function errorStyle(api) {
  let style = styles.get(api)
  if (style === undefined) {
    const probe = (err) => ({
      readNamesPath: err != null && Object.hasOwn(err, 'path'),
      stackless: typeof err?.stack === 'string' && !err.stack.includes('\n'),
    })
    style =
      api === 'promises'
        ? fsPromisesReadFile(__dirname, 'utf8').then(() => probe(null), probe)
        : new Promise((resolve) => fsReadFile(__dirname, 'utf8', (err) => resolve(probe(err))))
    styles.set(api, style)
  }
  return style
}

/** The error `api` ('promises' or 'callback') gives for a native failure code. */
async function asyncFailure(code, arg, api) {
  if (code === STRING_TOO_LONG) return failure(code) // the same error everywhere, with its stack
  const { readNamesPath, stackless } = await errorStyle(api)
  if (!stackless) return failure(code, pathForError(arg), readNamesPath)
  const limit = Error.stackTraceLimit
  Error.stackTraceLimit = 0
  try {
    return failure(code, pathForError(arg), readNamesPath)
  } finally {
    Error.stackTraceLimit = limit
  }
}

/** The options to give fs.promises for a call it must answer: UTF-8, with the signal. */
function asUtf8AsyncOptions(options) {
  const utf8 = asUtf8Options(options)
  if (typeof utf8 === 'object' && utf8 !== null && options.signal !== undefined) utf8.signal = options.signal
  return utf8
}

/**
 * The shared core of the promise APIs, after options were decoded: the string,
 * or a rejection with fs.promises' error. `delegate()` lets fs.promises answer.
 */
async function readAsync(path, flags, signal, allowFd, delegate) {
  if (flags === DELEGATE || !isValidSignal(signal)) return delegate()
  if (signal?.aborted) throw abortError(signal)
  const started = startNative(path, flags, allowFd)
  if (started === DELEGATE) return delegate()
  const result = await started.promise
  if (typeof result === 'string') {
    // As fs.promises: an abort during the read still wins over the result.
    if (signal?.aborted) throw abortError(signal)
    return result
  }
  // Among these, files of kMaxLength bytes or more: fs.promises decodes chunk by
  // chunk and its answer (a string or which error) depends on the Node version.
  if (result === FS_ANSWERS) return delegate()
  throw await asyncFailure(result, started.arg, 'promises')
}

/**
 * Reads a whole file as UTF-8 text off the main thread:
 * `=== await fs.promises.readFile(path, 'utf8')`, with fs.promises' errors.
 * Accepts readFileUtf8's arguments (integer fds too) plus `options.signal`.
 */
async function readFileUtf8Async(path, options) {
  const flags = readerFlags(options)
  // A signal only comes in an options object (fs.promises rejects other forms itself).
  const signal = typeof options === 'object' && options !== null ? options.signal : undefined
  return readAsync(path, flags, signal, true, () =>
    // fs.promises takes no fds; fs.readFile reads them as readFileUtf8Async does.
    typeof path === 'number'
      ? fsReadFileAsPromise(path, asUtf8AsyncOptions(options))
      : fsPromisesReadFile(path, asUtf8AsyncOptions(options)),
  )
}

/**
 * `fs.promises.readFile` with exactly its signature: UTF-8 requests are read
 * natively, every other call is passed to `fs.promises.readFile` unchanged.
 */
async function promisesReadFile(path, options) {
  const delegate = () => fsPromisesReadFile(path, options)
  if (!isUtf8(requestedEncoding(options))) return delegate()
  const { flags, signal } = utf8Request(options)
  return readAsync(path, flags, signal, false, delegate)
}

/**
 * `fs.readFile` with exactly its signature: UTF-8 requests for paths are read
 * natively, every other call (fds included) is passed to `fs.readFile` unchanged.
 * The callback runs on a later tick, as fs's does, outside any promise.
 */
function readFile(path, options, callback) {
  if (typeof callback !== 'function' || !isUtf8(requestedEncoding(options))) {
    return Reflect.apply(fsReadFile, fs, arguments)
  }
  const { flags, signal } = utf8Request(options)
  const started = flags === DELEGATE || !isValidSignal(signal) || signal?.aborted ? DELEGATE : startNative(path, flags, false)
  if (started === DELEGATE) return Reflect.apply(fsReadFile, fs, arguments)
  started.promise.then(
    (result) => {
      if (typeof result === 'string') {
        if (signal?.aborted) return process.nextTick(callback, abortError(signal))
        return process.nextTick(callback, null, result)
      }
      if (result === FS_ANSWERS) return fsReadFile(path, options, callback)
      return asyncFailure(result, started.arg, 'callback').then((err) => process.nextTick(callback, err))
    },
    (err) => process.nextTick(callback, err), // not expected: a native failure of napi itself
  )
}

module.exports = { readFileUtf8Async, readFile, promisesReadFile, abortError, asyncFailure }
