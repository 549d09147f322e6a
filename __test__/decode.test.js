'use strict'
// decodeUtf8's inputs and start/end: every ArrayBufferView kind, ArrayBuffers,
// and Buffer#toString's clamping of start/end, compared with Node itself.
const { test } = require('node:test')
const assert = require('node:assert/strict')

const { decodeUtf8 } = require('..')
const { errorFields } = require('./helpers')

const bytes = Buffer.from([...Buffer.from('héllo 中文 😀 '), 0xff, 0xe2, 0x82, 0x41, 0xc3])

test('every TypedArray kind, DataView, ArrayBuffer, SharedArrayBuffer and offset views', () => {
  const ab = new ArrayBuffer(bytes.length + 16)
  new Uint8Array(ab).set(bytes, 8)
  const expected = bytes.toString('utf8')
  // Views whose byte range is exactly `bytes` (8-byte aligned offset, 24-byte multiple length as needed).
  const n = bytes.length
  for (const View of [Uint8Array, Int8Array, Uint8ClampedArray]) assert.equal(decodeUtf8(new View(ab, 8, n)), expected, View.name)
  assert.equal(decodeUtf8(new DataView(ab, 8, n)), expected, 'DataView')
  assert.equal(decodeUtf8(Buffer.from(ab, 8, n)), expected, 'Buffer view')
  const padded = new ArrayBuffer(24)
  new Uint8Array(padded).set(bytes.subarray(0, 24))
  for (const View of [Uint16Array, Int16Array, Uint32Array, Int32Array, Float32Array, Float64Array, BigInt64Array, BigUint64Array]) {
    assert.equal(decodeUtf8(new View(padded)), Buffer.from(padded).toString('utf8'), View.name)
  }
  assert.equal(decodeUtf8(padded), Buffer.from(padded).toString('utf8'), 'ArrayBuffer')
  const sab = new SharedArrayBuffer(n)
  new Uint8Array(sab).set(bytes)
  assert.equal(decodeUtf8(sab), expected, 'SharedArrayBuffer')
  assert.equal(decodeUtf8(new Uint8Array(0)), '')
  assert.equal(decodeUtf8(new ArrayBuffer(0)), '')
})

test('start/end are clamped and coerced exactly as buffer.toString("utf8", start, end)', () => {
  const values = [undefined, null, -Infinity, -1, -0.5, 0, 0.5, 1, 1.9, 2, 3, 7, 8, 9, bytes.length - 1, bytes.length, bytes.length + 1, Infinity, NaN, '3', '', 'x', true, false, [], [4], {}]
  let checked = 0
  for (const start of values) {
    for (const end of values) {
      assert.equal(decodeUtf8(bytes, start, end), bytes.toString('utf8', start, end), `start ${String(start)}, end ${String(end)}`)
      checked++
    }
  }
  assert.equal(checked, values.length ** 2)
  // Offsets count bytes of the view, not of its ArrayBuffer.
  const view = new Uint16Array(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + 24))
  assert.equal(decodeUtf8(view, 3, 11), Buffer.from(view.buffer).toString('utf8', 3, 11))
})

test('not a buffer: a TypeError with code ERR_INVALID_ARG_TYPE', () => {
  for (const input of [undefined, null, 'text', 5, {}, [1, 2], () => {}, Symbol('s')]) {
    let err
    try {
      decodeUtf8(input)
    } catch (e) {
      err = e
    }
    assert.ok(err instanceof TypeError, String(input?.toString?.() ?? input))
    assert.equal(err.code, 'ERR_INVALID_ARG_TYPE')
    assert.match(err.message, /must be an instance of ArrayBuffer, Buffer, TypedArray, or DataView/)
  }
})

test('a symbol start throws what buffer.toString throws', () => {
  const catchIt = (fn) => { try { fn() } catch (e) { return errorFields(e) } }
  assert.deepEqual(catchIt(() => decodeUtf8(bytes, Symbol('s'))), catchIt(() => bytes.toString('utf8', Symbol('s'))))
})

test('the input is not retained or modified; the result does not change when the input does', () => {
  for (const source of ['a'.repeat(100000), 'é'.repeat(100000), '中'.repeat(100000), 'ab'.repeat(10)]) {
    const buf = Buffer.from(source)
    const copy = Buffer.from(buf)
    const s = decodeUtf8(buf)
    assert.deepEqual(buf, copy)
    buf.fill(0x41)
    assert.equal(s, source)
  }
})

test('shared memory, which another thread may write at any time, reaches the native decoder only as a copy', () => {
  const native = require('../lib/native')
  const original = native.decodeUtf8
  const seen = []
  native.decodeUtf8 = (bytes, ...rest) => {
    seen.push(Object.prototype.toString.call(bytes.buffer))
    return original(bytes, ...rest)
  }
  try {
    const size = 1 << 20
    const shared = new SharedArrayBuffer(size + 8)
    const text = Buffer.from('é中😀x'.repeat(size)).subarray(0, size)
    new Uint8Array(shared).set(text)
    const view = new Uint8Array(shared, 3, size)
    const expected = Buffer.from(view).toString('utf8')
    assert.equal(decodeUtf8(view), expected)
    assert.equal(decodeUtf8(shared, 5, size - 7), Buffer.from(shared).toString('utf8', 5, size - 7))
    assert.equal(decodeUtf8(text), text.toString('utf8'))
    assert.deepEqual(seen, ['[object ArrayBuffer]', '[object ArrayBuffer]', '[object ArrayBuffer]'])
  } finally {
    native.decodeUtf8 = original
  }
})
