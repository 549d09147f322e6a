'use strict'
// decodeUtf8: the bytes of a Buffer, TypedArray, DataView or ArrayBuffer as a
// string, `===` to `Buffer.from(bytes).toString('utf8', start, end)`.
const { isAnyArrayBuffer, isArrayBufferView, isUint8Array } = require('node:util/types')
const { constants: bufferConstants } = require('node:buffer')

const native = require('./native')
const { stringTooLong } = require('./errors')

const { MAX_STRING_LENGTH } = bufferConstants

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
  // Buffer.prototype.toString's clamping, step by step (same coercions).
  const len = bytes.length
  if (start <= 0) start = 0
  else if (start >= len) return ''
  else start = Math.trunc(start) || 0
  if (end === undefined || end > len) end = len
  else end = Math.trunc(end) || 0
  if (end <= start) return ''
  if (end - start > MAX_STRING_LENGTH) {
    // Whether this is too long depends on the Node version (bytes or characters
    // counted): let Buffer#toString answer these giant inputs itself.
    return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('utf8', start, end)
  }
  const result = native.decodeUtf8(bytes, start, end)
  if (typeof result === 'string') return result
  throw stringTooLong()
}

module.exports = { decodeUtf8 }
