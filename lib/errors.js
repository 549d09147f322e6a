'use strict'
// The failure codes the native functions return instead of a string
// (`failure_code` in src/js_string.rs), and the errors we throw ourselves.
// Every other failure is fs's to answer (./answers), so its error is fs's own.
const EventEmitter = require('node:events')
const { getSystemErrorMap } = require('node:util')
const { constants: bufferConstants } = require('node:buffer')

/** Index = `read::Syscall` in Rust. */
const SYSCALLS = ['open', 'read']
/** fs answers the call itself: a native read that failed, or a path only fs should judge. */
const FS_ANSWERS = -1
/** A read of unknown length (a device, a FIFO) that reached kMaxLength bytes, or a
 * string V8 refused: ERR_STRING_TOO_LONG, as fs's once it has read that much. */
const STRING_TOO_LONG = -2
/** An async read stopped by its aborted signal: lib/async.js has rejected
 * with the AbortError already, so this code is never turned into an error. */
const CANCELLED = -3
/** A regular file of kMaxLength bytes or more, not read (sync reads by path). */
const TOO_LARGE = -4

let systemErrors
function describe(errno) {
  systemErrors ??= getSystemErrorMap()
  return systemErrors.get(errno) ?? ['UNKNOWN', 'unknown error']
}

/**
 * The error fs throws for a failed syscall on an fd (no path): the same
 * message, and own properties errno, code, syscall in fs's order.
 */
function systemError(errno, syscall) {
  const uvErrno = -errno
  const [code, description] = describe(uvErrno)
  const err = new Error(`${code}: ${description}, ${syscall}`)
  err.errno = uvErrno
  err.code = code
  err.syscall = syscall
  return err
}

/** fs's error for a string longer than V8's kMaxLength. */
function stringTooLong() {
  const err = new Error(`Cannot create a string longer than 0x${bufferConstants.MAX_STRING_LENGTH.toString(16)} characters`)
  err.code = 'ERR_STRING_TOO_LONG'
  return err
}

/**
 * The error for a native failure code that fs cannot answer: a string too
 * long, or a read of a caller's fd that failed after taking some of its bytes.
 */
function failure(code) {
  if (code === STRING_TOO_LONG || code === TOO_LARGE) return stringTooLong()
  return systemError(Math.floor(code / 8), SYSCALLS[code % 8])
}

let AbortErrorClass
/**
 * The AbortError fs gives for an aborted signal, with the signal's reason as
 * its cause: the one `events.on` throws at once for an aborted signal, made
 * as fs makes its own in each runtime (Node's internal class; under Bun an
 * Error whose prototype names it). For an object that only looks like a
 * signal, which events.on refuses, Node's class, borrowed from events.on.
 */
function abortError(signal) {
  try {
    EventEmitter.on(new EventEmitter(), 'abort', { signal })
  } catch (err) {
    // (Deno's gives no cause: then made here, with it.)
    if (err?.name === 'AbortError' && err.cause === signal.reason) return err
  }
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

module.exports = { abortError, failure, stringTooLong, FS_ANSWERS, STRING_TOO_LONG, CANCELLED, TOO_LARGE }
