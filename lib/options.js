'use strict'
// fs's option forms, decoded the way fs decodes them. Anything we do not
// recognise is reported as DELEGATE so that fs itself answers (and throws its
// own exact error for bad input).
const { constants } = require('node:fs')

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

/** Numeric open flags for fs's `flag` option, or DELEGATE if fs would reject it. */
function openFlags(flag) {
  if (flag === undefined || flag === null) return O_RDONLY
  if (typeof flag === 'string') return FLAGS.get(flag) ?? DELEGATE
  if (Number.isInteger(flag) && (flag | 0) === flag) return flag
  return DELEGATE
}

/** The `encoding` an fs options argument asks for (undefined: none, i.e. a Buffer). */
function requestedEncoding(options) {
  if (typeof options === 'string') return options
  if (options !== null && typeof options === 'object') return options.encoding
  return undefined
}

function invalidEncoding(encoding) {
  const shown = typeof encoding === 'string' ? `'${encoding}'` : String(encoding)
  const err = new TypeError(
    `The argument 'encoding' must be 'utf8' or 'utf-8' for readFileUtf8. Received ${shown}`,
  )
  err.code = 'ERR_INVALID_ARG_VALUE'
  return err
}

/**
 * The open flags of readFileUtf8's (and readFileUtf8Async's) options, or
 * DELEGATE where fs must answer (a bad flag, or options of a wrong type). An
 * encoding other than UTF-8 throws.
 */
function readerFlags(options) {
  if (options === undefined) return O_RDONLY
  if (typeof options === 'string') {
    if (!isUtf8(options)) throw invalidEncoding(options)
    return O_RDONLY
  }
  if (options === null || typeof options !== 'object') return DELEGATE
  const { encoding } = options
  if (encoding != null && !isUtf8(encoding)) throw invalidEncoding(encoding)
  return openFlags(options.flag)
}

/** The numeric flags and signal of a UTF-8 request in fs's own option forms (readFileSync, readFile…). */
function utf8Request(options) {
  if (typeof options === 'string') return { flags: O_RDONLY, signal: undefined }
  return { flags: openFlags(options.flag), signal: options.signal }
}

/** The options to give fs for a readFileUtf8 call it must answer: always UTF-8. */
function asUtf8Options(options) {
  if (options === undefined) return 'utf8'
  if (options !== null && typeof options === 'object') return { encoding: 'utf8', flag: options.flag }
  return options // a UTF-8 spelling, or a wrong type fs throws for
}

module.exports = { DELEGATE, FLAGS, isUtf8, openFlags, requestedEncoding, readerFlags, utf8Request, asUtf8Options }
