'use strict'
// decodeUtf8: the bytes of a Buffer, TypedArray, DataView or ArrayBuffer as a
// string, `===` to `Buffer.from(bytes).toString('utf8', start, end)`.
const { isAnyArrayBuffer, isArrayBufferView, isUint8Array, isSharedArrayBuffer } = require('node:util/types')
const { Buffer, constants: bufferConstants } = require('node:buffer')

const native = require('./native')
const limits = require('./limits')
const { stringTooLong } = require('./errors')

const { MAX_STRING_LENGTH } = bufferConstants

/**
 * Which decoder takes an input, by its length in bytes, per Node line (from
 * lib/limits.json): from `all` bytes on the native one; from `cut` bytes on
 * also any shorter input that starts or ends inside a character (Node's
 * decoder takes its slow path for any invalid input); below, Node's own
 * decoder, the function `buffer.toString('utf8', start, end)` ends in. Below
 * `asciiBelow` bytes, an input whose sampled bytes are all ASCII goes to
 * Node's decoder whatever its length.
 */
const ROUTE_VALUES = { all: limits.table.tuned.DECODE_NATIVE_FROM, cut: limits.table.tuned.DECODE_NATIVE_FROM_IF_CUT, asciiBelow: limits.table.tuned.DECODE_ASCII_TO_NODE_BELOW }
const LINES = [...new Set(Object.values(ROUTE_VALUES).flatMap((entry) => Object.keys(entry.byNode ?? {})))].map(Number)
const ROUTES = Object.fromEntries(
  LINES.map((line) => [line, Object.fromEntries(Object.entries(ROUTE_VALUES).map(([key, entry]) => [key, limits.valueOn(entry, line)]))]),
)
/** The running Node's routes. */
const { all: NATIVE_FROM, cut: NATIVE_FROM_IF_CUT, asciiBelow: ASCII_TO_NODE_BELOW } = routesFor(process.versions.node)

/** A line not in the table is taken to behave like the nearest one measured (the newer between two). */
function routesFor(version) {
  return ROUTES[limits.nearestLine(ROUTES, Number(version.split('.')[0]))]
}

/** How many bytes `looksAscii` reads, spread evenly over the range. */
const ASCII_SAMPLES = limits.DECODE_ASCII_SAMPLES

/**
 * True if every sampled byte of `bytes[start..end)` is ASCII: a guess from
 * `ASCII_SAMPLES` bytes, never a pass over the range. Either answer gives the
 * same string; a wrong one only gives the input the other decoder.
 */
function looksAscii(bytes, start, end) {
  const step = Math.max(1, Math.floor((end - start) / ASCII_SAMPLES))
  let seen = bytes[end - 1]
  for (let i = start; i < end; i += step) seen |= bytes[i]
  return seen < 0x80
}

/** Whether decodeUtf8 gives `bytes[start..end)` (non-empty) to the native decoder. */
function takesNative(bytes, start, end) {
  const n = end - start
  if (n < NATIVE_FROM) return n >= NATIVE_FROM_IF_CUT && cutAtAnEdge(bytes, start, end)
  return n >= ASCII_TO_NODE_BELOW || !looksAscii(bytes, start, end)
}

/**
 * True if `bytes[start..end)` starts or ends inside a character (or on a byte
 * no character has): a few bytes looked at, never the whole range.
 */
function cutAtAnEdge(bytes, start, end) {
  if ((bytes[start] & 0xc0) === 0x80) return true
  if (bytes[end - 1] < 0x80) return false
  let lead = end - 1
  while (lead > start && end - lead < 4 && (bytes[lead] & 0xc0) === 0x80) lead--
  const b = bytes[lead]
  const length = b >= 0xf8 ? 0 : b >= 0xf0 ? 4 : b >= 0xe0 ? 3 : b >= 0xc0 ? 2 : 0
  return end - lead !== length
}

/**
 * Node's UTF-8 decoder, which `buffer.toString('utf8', start, end)` calls after
 * its clamping (done here already) and encoding lookup; it reads the bytes of
 * any Uint8Array, so no Buffer is made. Through toString where it is missing.
 */
const { utf8Slice } = Buffer.prototype
const nodeUtf8Slice =
  typeof utf8Slice === 'function'
    ? (bytes, start, end) => utf8Slice.call(bytes, start, end)
    : (bytes, start, end) => Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('utf8', start, end)

function invalidInput(input) {
  let shown
  if (input == null) shown = ` Received ${input}`
  else if (typeof input === 'function') shown = ` Received function ${input.name}`
  else if (typeof input === 'object') shown = ` Received an instance of ${input.constructor?.name ?? 'Object'}`
  else shown = ` Received type ${typeof input} (${String(input).slice(0, 25)})`
  const err = new TypeError(
    `The "input" argument must be an instance of ArrayBuffer, Buffer, TypedArray, or DataView.${shown}`,
  )
  err.code = 'ERR_INVALID_ARG_TYPE'
  return err
}

/** A Uint8Array over the same memory (no copy). */
function asBytes(input) {
  if (isUint8Array(input)) return input
  if (isArrayBufferView(input)) return new Uint8Array(input.buffer, input.byteOffset, input.byteLength)
  if (isAnyArrayBuffer(input)) return new Uint8Array(input)
  throw invalidInput(input)
}

/**
 * Decodes UTF-8 bytes to a string: `=== Buffer.from(bytes).toString('utf8', start, end)`
 * (one U+FFFD per maximal invalid subpart, a BOM kept). `start`/`end` are byte
 * offsets, clamped exactly as `buffer.toString` clamps them.
 * @param {ArrayBufferView | ArrayBuffer | SharedArrayBuffer} input
 * @param {number} [start]
 * @param {number} [end]
 * @returns {string}
 */
function decodeUtf8(input, start, end) {
  const bytes = asBytes(input)
  const len = bytes.length
  const whole = start === undefined && end === undefined
  if (whole) {
    start = 0
    end = len
  } else {
    // Buffer.prototype.toString's clamping, step by step (same coercions).
    if (start <= 0) start = 0
    else if (start >= len) return ''
    else start = Math.trunc(start) || 0
    if (end === undefined || end > len) end = len
    else end = Math.trunc(end) || 0
    if (end <= start) return ''
  }
  if (!takesNative(bytes, start, end)) return nodeUtf8Slice(bytes, start, end)
  if (end - start > MAX_STRING_LENGTH) return tooLongForUs(bytes, start, end)
  // Another thread may write shared memory while the decoder reads it (twice,
  // for some text): it decodes a copy, which nobody else can change.
  if (isSharedArrayBuffer(bytes.buffer)) return decodeNative(bytes.slice(start, end), true, 0, end - start)
  return decodeNative(bytes, whole, start, end)
}

function decodeNative(bytes, whole, start, end) {
  const result = whole ? native.decodeUtf8(bytes) : native.decodeUtf8(bytes, start, end)
  if (typeof result === 'string') return result
  throw stringTooLong()
}

/**
 * Whether this is too long depends on the Node version (bytes or characters
 * counted): Buffer#toString answers these giant inputs itself.
 */
function tooLongForUs(bytes, start, end) {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('utf8', start, end)
}

module.exports = {
  decodeUtf8,
  routesFor,
  NATIVE_FROM,
  NATIVE_FROM_IF_CUT,
  ASCII_TO_NODE_BELOW,
  ROUTES,
  cutAtAnEdge,
  looksAscii,
  takesNative,
}
