'use strict'
// Builds the errors fs would throw, from the failure codes the native functions
// return instead of a string (`failure_code` in src/js_string.rs):
// `errno * 8 + syscall` for an OS error, or a negative code (FS_ANSWERS,
// STRING_TOO_LONG, CANCELLED there).
const { getSystemErrorMap } = require('node:util')
const { constants: bufferConstants } = require('node:buffer')

/** Index = `read::Syscall` in Rust. */
const SYSCALLS = ['open', 'read']
/** fs answers the call itself: a path with a NUL byte (fs's argument error), a
 * failure of the portable reader, or (async) a file of kMaxLength bytes or more. */
const FS_ANSWERS = -1
/** A file of kMaxLength bytes or more (sync), or a read of unknown length (a
 * device, a FIFO) that reached kMaxLength bytes: fs's ERR_STRING_TOO_LONG. */
const STRING_TOO_LONG = -2
/** An async read stopped by its aborted signal: lib/async.js has rejected
 * with the AbortError already, so this code is never turned into an error. */
const CANCELLED = -3

let systemErrors
function describe(errno) {
  systemErrors ??= getSystemErrorMap()
  return systemErrors.get(errno) ?? ['UNKNOWN', 'unknown error']
}

/**
 * The error fs throws for a failed syscall: the same message, and own
 * properties errno, code, syscall (and path when fs sets it) in fs's order.
 */
function systemError(errno, syscall, path) {
  const uvErrno = -errno
  const [code, description] = describe(uvErrno)
  let message = `${code}: ${description}, ${syscall}`
  if (path !== undefined) message += ` '${path}'`
  const err = new Error(message)
  err.errno = uvErrno
  err.code = code
  err.syscall = syscall
  if (path !== undefined) err.path = path
  return err
}

/** fs's error for a string longer than V8's kMaxLength. */
function stringTooLong() {
  const err = new Error(`Cannot create a string longer than 0x${bufferConstants.MAX_STRING_LENGTH.toString(16)} characters`)
  err.code = 'ERR_STRING_TOO_LONG'
  return err
}

/**
 * Turns a native failure code into fs's error. `pathForError` is the path fs
 * would name (a string), or undefined for fds. Sync fs names the path only
 * for a failed open(); `readNamesPath` is set where an API names it for a
 * failed read(2) too (fs.promises / fs.readFile on newer Nodes).
 */
function failure(code, pathForError, readNamesPath = false) {
  if (code === STRING_TOO_LONG) return stringTooLong()
  const errno = Math.floor(code / 8)
  const syscall = SYSCALLS[code % 8]
  return systemError(errno, syscall, syscall === 'open' || readNamesPath ? pathForError : undefined)
}

module.exports = { failure, stringTooLong, FS_ANSWERS, STRING_TOO_LONG, CANCELLED }
