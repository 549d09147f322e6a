'use strict'
// fs's option forms, decoded the way fs decodes them. Anything we do not
// recognise is reported as DELEGATE so that fs itself answers (and throws its
// own exact error for bad input).
const { constants } = require('node:fs')
const { inspect } = require('node:util')

const DELEGATE = Symbol('let fs handle this call')

const { O_RDONLY, O_RDWR, O_WRONLY, O_CREAT, O_TRUNC, O_APPEND, O_EXCL, O_SYNC } = constants

/** fs's string flags (lib/internal/fs/utils.js stringToFlags). */
const FLAGS = new Map([
  ['r', O_RDONLY],
  ['rs', O_RDONLY | O_SYNC],
  ['sr', O_RDONLY | O_SYNC],
  ['r+', O_RDWR],
  ['rs+', O_RDWR | O_SYNC],
  ['sr+', O_RDWR | O_SYNC],
  ['w', O_TRUNC | O_CREAT | O_WRONLY],
  ['wx', O_TRUNC | O_CREAT | O_WRONLY | O_EXCL],
  ['xw', O_TRUNC | O_CREAT | O_WRONLY | O_EXCL],
  ['w+', O_TRUNC | O_CREAT | O_RDWR],
  ['wx+', O_TRUNC | O_CREAT | O_RDWR | O_EXCL],
  ['xw+', O_TRUNC | O_CREAT | O_RDWR | O_EXCL],
  ['a', O_APPEND | O_CREAT | O_WRONLY],
  ['ax', O_APPEND | O_CREAT | O_WRONLY | O_EXCL],
  ['xa', O_APPEND | O_CREAT | O_WRONLY | O_EXCL],
  ['as', O_APPEND | O_CREAT | O_WRONLY | O_SYNC],
  ['sa', O_APPEND | O_CREAT | O_WRONLY | O_SYNC],
  ['a+', O_APPEND | O_CREAT | O_RDWR],
  ['ax+', O_APPEND | O_CREAT | O_RDWR | O_EXCL],
  ['xa+', O_APPEND | O_CREAT | O_RDWR | O_EXCL],
  ['as+', O_APPEND | O_CREAT | O_RDWR | O_SYNC],
  ['sa+', O_APPEND | O_CREAT | O_RDWR | O_SYNC],
])

/** True for every spelling fs decodes as UTF-8 ('utf8', 'UTF-8', …). */
function isUtf8(encoding) {
  if (encoding === 'utf8' || encoding === 'utf-8') return true
  if (typeof encoding !== 'string' || (encoding.length !== 4 && encoding.length !== 5)) return false
  const lower = encoding.toLowerCase()
  return lower === 'utf8' || lower === 'utf-8'
}

/**
 * O_DIRECT (Linux): reads must then use buffers aligned to the device's
 * blocks, which fs's are not (it fails with EINVAL) and ours may or may not be.
 */
const O_DIRECT = constants.O_DIRECT ?? 0

/**
 * Numeric open flags for fs's `flag` option, or DELEGATE if fs would reject
 * it or must answer it. A write-only open can never be read (fs opens, then
 * fails with EBADF): fs makes that call whole, so that a file it creates
 * exclusively is created once, by fs, as a loop of fs calls creates it.
 */
function openFlags(flag) {
  if (flag === undefined || flag === null) return O_RDONLY
  const flags = typeof flag === 'string' ? FLAGS.get(flag) : flag
  if (!Number.isInteger(flags) || (flags | 0) !== flags || (flags & O_DIRECT) !== 0) return DELEGATE
  return (flags & (O_WRONLY | O_RDWR)) === O_WRONLY ? DELEGATE : flags
}

/** fs's check of `options.signal` (validateAbortSignal): undefined, or an object with `aborted`. */
function isValidSignal(signal) {
  return signal === undefined || (signal !== null && typeof signal === 'object' && 'aborted' in signal)
}

/** fs's own default for options: none, null or a function (a callback in their place). */
function isDefaultOptions(options) {
  return options === undefined || options === null || typeof options === 'function'
}

/** The `encoding` an fs options argument asks for (undefined: none, i.e. a Buffer). */
function requestedEncoding(options) {
  if (typeof options === 'string') return options
  if (options !== null && typeof options === 'object') return options.encoding
  return undefined
}

/** ERR_INVALID_ARG_VALUE for an encoding we do not read, the value shown as Node's errors show it. */
function invalidEncoding(encoding) {
  const inspected = inspect(encoding)
  const shown = inspected.length > 128 ? `${inspected.slice(0, 128)}...` : inspected
  const err = new TypeError(`The argument 'encoding' must be 'utf8' or 'utf-8' for readFileUtf8. Received ${shown}`)
  err.code = 'ERR_INVALID_ARG_VALUE'
  return err
}

/**
 * The open flags of readFileUtf8's (and readFileUtf8Async's) options, or
 * DELEGATE where fs must answer (a bad flag or signal, or options of a wrong
 * type). An encoding other than UTF-8 throws.
 */
function readerFlags(options) {
  if (isDefaultOptions(options)) return O_RDONLY
  if (typeof options === 'string') {
    if (!isUtf8(options)) throw invalidEncoding(options)
    return O_RDONLY
  }
  if (typeof options !== 'object') return DELEGATE
  const { encoding } = options
  if (encoding != null && !isUtf8(encoding)) throw invalidEncoding(encoding)
  return isValidSignal(options.signal) ? openFlags(options.flag) : DELEGATE
}

/**
 * The numeric flags and signal of a UTF-8 request in fs's own option forms
 * (readFileSync, readFile…): flags DELEGATE where fs must answer (a bad flag,
 * or a signal fs rejects, even in a synchronous call).
 */
function utf8Request(options) {
  if (typeof options === 'string') return { flags: O_RDONLY, signal: undefined }
  const { signal } = options
  return { flags: isValidSignal(signal) ? openFlags(options.flag) : DELEGATE, signal }
}

/** The options to give fs for a readFileUtf8 call it must answer: always UTF-8, with the signal fs checks. */
function asUtf8Options(options) {
  if (isDefaultOptions(options)) return 'utf8'
  if (typeof options === 'object') {
    const utf8 = { encoding: 'utf8', flag: options.flag }
    if (options.signal !== undefined) utf8.signal = options.signal
    return utf8
  }
  return options // a UTF-8 spelling, or a wrong type fs throws for
}

module.exports = { DELEGATE, FLAGS, isUtf8, openFlags, requestedEncoding, readerFlags, utf8Request, asUtf8Options }
