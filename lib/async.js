'use strict'
// The asynchronous entry points: readFileUtf8Async, and fs.readFile /
// fs.promises.readFile drop-ins. Open, read, classify and transcode run on
// libuv's thread pool (src/async_read.rs); the main thread only makes the string.
// Whatever we do not serve natively goes to fs itself, which then answers (or
// fails) exactly as it always does.
const fs = require('node:fs')
const EventEmitter = require('node:events')
const { fileURLToPath } = require('node:url')
const { isUint8Array } = require('node:util/types')

const native = require('./native')
const { systemError, stringTooLong, SYSCALLS, NUL_IN_PATH, STRING_TOO_LONG, TOO_BIG_FOR_US } = require('./errors')
const { DELEGATE, isUtf8, openFlags, requestedEncoding, invalidEncoding, asUtf8Options, O_RDONLY } = require('./options')

// Kept at load time, so a later patch of fs (readfile-utf8/register) cannot loop back to us.
const fsReadFile = fs.readFile
const fsPromisesReadFile = fs.promises.readFile

/**
 * Starts the native read of `path`: `{ promise, pathForError }`, or DELEGATE
 * for argument forms that only fs should answer. `allowFd`: integer fds are
 * read natively (fs.promises.readFile refuses numbers, so its drop-in does not).
 */
function startNative(path, flags, allowFd) {
  // Paths with NUL bytes are fs's to reject (fs.readFile even throws synchronously).
  if (typeof path === 'string') {
    if (path.includes('\0')) return DELEGATE
    return { promise: native.readPathAsync(path, flags), pathForError: path }
  }
  if (typeof path === 'number') {
    if (!allowFd || (path | 0) !== path) return DELEGATE
    return { promise: native.readFdAsync(path), pathForError: undefined }
  }
  if (isUint8Array(path)) {
    if (path.includes(0)) return DELEGATE
    const pathForError = Buffer.from(path.buffer, path.byteOffset, path.byteLength).toString('utf8')
    return { promise: native.readPathBytesAsync(path, flags), pathForError }
  }
  if (path instanceof URL && path.protocol === 'file:') {
    let pathForError
    try {
      pathForError = fileURLToPath(path)
    } catch {
      return DELEGATE // fs gives the same URL error
    }
    if (pathForError.includes('\0')) return DELEGATE
    return { promise: native.readPathAsync(pathForError, flags), pathForError }
  }
  return DELEGATE
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

function withoutStack(make) {
  const limit = Error.stackTraceLimit
  Error.stackTraceLimit = 0
  try {
    return make()
  } finally {
    Error.stackTraceLimit = limit
  }
}

/** The error `api` ('promises' or 'callback') gives for a native failure code. */
async function asyncFailure(code, pathForError, api) {
  if (code === STRING_TOO_LONG) return stringTooLong()
  const { readNamesPath, stackless } = await errorStyle(api)
  const errno = Math.floor(code / 8)
  const syscall = SYSCALLS[code % 8]
  const path = syscall === 'open' || readNamesPath ? pathForError : undefined
  const make = () => systemError(errno, syscall, path)
  return stackless ? withoutStack(make) : make()
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
  // kMaxLength bytes or more: fs.promises decodes chunk by chunk and its answer
  // (a string or which error) depends on the Node version.
  if (result === NUL_IN_PATH || result === TOO_BIG_FOR_US) return delegate()
  throw await asyncFailure(result, started.pathForError, 'promises')
}

/**
 * Reads a whole file as UTF-8 text off the main thread:
 * `=== await fs.promises.readFile(path, 'utf8')`, with fs.promises' errors.
 * Accepts readFileUtf8's arguments (integer fds too) plus `options.signal`.
 */
async function readFileUtf8Async(path, options) {
  let flags = O_RDONLY
  let signal
  if (options !== undefined) {
    const encoding = requestedEncoding(options)
    if (typeof options === 'object' && options !== null) {
      if (encoding != null && !isUtf8(encoding)) throw invalidEncoding(encoding)
      flags = openFlags(options.flag)
      signal = options.signal
    } else if (typeof options === 'string') {
      if (!isUtf8(options)) throw invalidEncoding(options)
    } else {
      flags = DELEGATE // fs.promises rejects with its ERR_INVALID_ARG_TYPE for the options
    }
  }
  return readAsync(path, flags, signal, true, () => fsPromisesReadFile(path, asUtf8AsyncOptions(options)))
}

/** The numeric flags and signal of a UTF-8 request in fs's option forms. */
function utf8Request(options) {
  if (typeof options === 'string') return { flags: O_RDONLY, signal: undefined }
  return { flags: openFlags(options.flag), signal: options.signal }
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
      if (result === NUL_IN_PATH || result === TOO_BIG_FOR_US) return fsReadFile(path, options, callback)
      return asyncFailure(result, started.pathForError, 'callback').then((err) => process.nextTick(callback, err))
    },
    (err) => process.nextTick(callback, err), // not expected: a native failure of napi itself
  )
}

module.exports = { readFileUtf8Async, readFile, promisesReadFile }
