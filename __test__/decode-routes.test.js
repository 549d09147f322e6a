'use strict'
// decodeUtf8 takes one of two routes by input length (lib/decode.js, ROUTES):
// the native decoder from NATIVE_FROM bytes on (but for input that looks like
// ASCII below ASCII_TO_NODE_BELOW), and from NATIVE_FROM_IF_CUT on for a range
// that starts or ends inside a character; Node's own decoder otherwise. Inputs on both sides of every threshold in that table (the
// running Node's included), whole and with start/end, must give exactly
// Buffer#toString's string, and the route taken must be the one the
// thresholds say. No timing here.
const { test } = require('node:test')
const assert = require('node:assert/strict')

const native = require('../lib/native')
const routes = require('../lib/decode')
const { decodeUtf8, cutAtAnEdge, looksAscii } = routes
const { NATIVE_FROM, NATIVE_FROM_IF_CUT, ASCII_TO_NODE_BELOW, ROUTES } = routes

/** Texts that exercise each decoder path: ASCII, Latin-1, CJK, emoji, invalid bytes. */
const UNITS = {
  ascii: Buffer.from('plain text, line after line\n'),
  latin1: Buffer.from('déjà vu à Noël, ça coûte très cher\n'),
  cjk: Buffer.from('中文文本，日本語のテキスト。\n'),
  mixed: Buffer.from('x é 中 😀 text\n'),
  invalid: Buffer.from([...Buffer.from('ok é 中 '), 0xff, 0xe2, 0x82, 0x41, 0xc3, 0x80, 0xed, 0xa0, 0x80, 0xf0, 0x9f]),
}

/** `length` bytes of `unit` repeated (cut wherever the length falls, mid-character included). */
function filled(unit, length) {
  const buf = Buffer.alloc(length)
  for (let i = 0; i < length; i += unit.length) unit.copy(buf, i)
  return buf
}

/** Counts the native calls made while `fn` runs (the addon's exports object is patched for the while). */
function nativeCalls(fn) {
  const original = native.decodeUtf8
  let calls = 0
  native.decodeUtf8 = (...args) => {
    calls++
    return original(...args)
  }
  try {
    fn()
  } finally {
    native.decodeUtf8 = original
  }
  return calls
}

const thresholds = [
  ...new Set([
    NATIVE_FROM,
    NATIVE_FROM_IF_CUT,
    ...Object.values(ROUTES).flatMap((r) => [r.all, r.cut, r.asciiBelow].filter((t) => t > 0)),
  ]),
].sort((a, b) => a - b)

/** The route the thresholds give `bytes[start..end)`: 1 native, 0 Node's decoder. */
function expectedRoute(bytes, start, end) {
  const n = end - start
  if (n >= NATIVE_FROM) return n >= ASCII_TO_NODE_BELOW || !looksAscii(bytes, start, end) ? 1 : 0
  return n >= NATIVE_FROM_IF_CUT && cutAtAnEdge(bytes, start, end) ? 1 : 0
}

test('the running Node has its thresholds from the table', () => {
  assert.ok(
    Object.values(ROUTES).some(
      (r) => r.all === NATIVE_FROM && r.cut === NATIVE_FROM_IF_CUT && r.asciiBelow === ASCII_TO_NODE_BELOW,
    ),
    `${NATIVE_FROM} / ${NATIVE_FROM_IF_CUT} / ${ASCII_TO_NODE_BELOW}`,
  )
  assert.ok(Number.isInteger(NATIVE_FROM_IF_CUT) && NATIVE_FROM_IF_CUT > 0 && NATIVE_FROM_IF_CUT <= NATIVE_FROM)
})

test('a Node line not in the table takes the nearest measured one (the newer between two)', () => {
  const line = (version) => Number(Object.entries(ROUTES).find(([, r]) => r === routes.routesFor(version))[0])
  const measured = Object.keys(ROUTES).map(Number)
  for (const major of measured) assert.equal(line(`${major}.1.0`), major)
  const expected = { 18: 20, 19: 20, 21: 22, 23: 24, 25: 26, 27: 26, 30: 26 }
  for (const [major, nearest] of Object.entries(expected)) {
    if (!measured.includes(Number(major))) assert.equal(line(`${major}.0.0`), nearest, `Node ${major}`)
  }
})

test('cutAtAnEdge: true exactly where a range of valid text is not on character boundaries', () => {
  const text = Buffer.from('aé中😀b\u0080\u07ff\u0800\uffff\u{10000}\u{10ffff}z')
  let checked = 0
  for (let start = 0; start < text.length; start++) {
    for (let end = start + 1; end <= text.length; end++) {
      const onBoundaries = Buffer.from(text.toString('utf8', start, end)).equals(text.subarray(start, end))
      assert.equal(cutAtAnEdge(text, start, end), !onBoundaries, `[${start}, ${end})`)
      checked++
    }
  }
  assert.ok(checked > 300)
  // Bytes no character has count as cut; so do too many continuation bytes.
  for (const bytes of [[0xff], [0x41, 0xf8], [0xc3, 0xa9, 0x80], [0x41, 0x80], [0xf0, 0x9f, 0x98, 0x80, 0x80]]) {
    assert.equal(cutAtAnEdge(Buffer.from(bytes), 0, bytes.length), true, Buffer.from(bytes).toString('hex'))
  }
})

test('both sides of every threshold: === Buffer#toString, whole and with start/end', () => {
  let checked = 0
  for (const threshold of thresholds) {
    for (const [kind, unit] of Object.entries(UNITS)) {
      for (const length of [threshold - 3, threshold - 1, threshold, threshold + 1, threshold + 5]) {
        const buf = filled(unit, length)
        assert.equal(decodeUtf8(buf), buf.toString('utf8'), `${kind} ${length} whole`)
        // Ranges whose length is just below, at and just above the threshold,
        // starting and ending inside characters as well as on their edges.
        for (const start of [0, 1, 2, 3, 7]) {
          for (const end of [length, length - 1, length - 2, start + threshold - 1, start + threshold, start + threshold + 1]) {
            const expected = buf.toString('utf8', start, end)
            assert.equal(decodeUtf8(buf, start, end), expected, `${kind} ${length} [${start}, ${end})`)
            checked++
          }
        }
      }
    }
  }
  assert.ok(checked >= thresholds.length * 5 * 5 * 30)
})

test('the route follows the running Node thresholds, for every input kind', () => {
  const ab = new ArrayBuffer(NATIVE_FROM + 16)
  filled(UNITS.mixed, ab.byteLength).copy(Buffer.from(ab))
  const sab = new SharedArrayBuffer(NATIVE_FROM + 8)
  filled(UNITS.invalid, sab.byteLength).copy(Buffer.from(sab))
  for (const n of [NATIVE_FROM - 1, NATIVE_FROM]) {
    const inputs = {
      Buffer: Buffer.from(ab, 3, n),
      Uint8Array: new Uint8Array(ab, 5, n),
      Int8Array: new Int8Array(ab, 1, n),
      DataView: new DataView(ab, 2, n),
      'Uint16Array (bytes)': new Uint16Array(ab, 0, n >> 1),
      ArrayBuffer: ab.slice(0, n),
      SharedArrayBuffer: sab.slice(0, n),
    }
    for (const [name, input] of Object.entries(inputs)) {
      const bytes = Buffer.from(ArrayBuffer.isView(input) ? input.buffer : input, input.byteOffset ?? 0, input.byteLength)
      const route = (start, end) => expectedRoute(bytes, start, end)
      const whole = route(0, bytes.length)
      let result
      assert.equal(nativeCalls(() => (result = decodeUtf8(input))), whole, `${name} ${bytes.length} whole: route`)
      assert.equal(result, bytes.toString('utf8'), `${name} ${bytes.length} whole`)
      // A range one byte shorter than the input: below the threshold if the input is at it.
      const ranged = route(1, bytes.length)
      assert.equal(nativeCalls(() => (result = decodeUtf8(input, 1))), ranged, `${name} [1, ${bytes.length}): route`)
      assert.equal(result, bytes.toString('utf8', 1), `${name} [1, ${bytes.length})`)
    }
  }
})

test('a range cut inside a character goes native from NATIVE_FROM_IF_CUT on', () => {
  const buf = filled(UNITS.cjk, NATIVE_FROM + 64)
  for (const n of [NATIVE_FROM_IF_CUT - 1, NATIVE_FROM_IF_CUT, NATIVE_FROM_IF_CUT + 1, NATIVE_FROM - 1]) {
    if (n < 1) continue
    for (const start of [0, 1, 3]) {
      const end = start + n
      const cut = cutAtAnEdge(buf, start, end)
      const expectNative = expectedRoute(buf, start, end)
      let result
      assert.equal(nativeCalls(() => (result = decodeUtf8(buf, start, end))), expectNative, `[${start}, ${end}) cut ${cut}`)
      assert.equal(result, buf.toString('utf8', start, end), `[${start}, ${end})`)
      const whole = buf.subarray(start, end)
      assert.equal(nativeCalls(() => (result = decodeUtf8(whole))), expectNative, `whole ${n} cut ${cut}`)
      assert.equal(result, whole.toString('utf8'), `whole ${n}`)
    }
  }
})

test('looksAscii: true on ASCII, false once a sampled byte is not; either way the string is exact', () => {
  const size = 256 << 10
  const ascii = filled(UNITS.ascii, size)
  assert.equal(looksAscii(ascii, 0, size), true)
  assert.equal(looksAscii(ascii, 5, size - 3), true)
  for (const unit of [UNITS.latin1, UNITS.cjk, UNITS.mixed, UNITS.invalid]) {
    assert.equal(looksAscii(filled(unit, size), 0, size), false, unit.toString('latin1'))
  }
  // One non-ASCII byte at the last position is always seen; one between the
  // samples may not be, and then Node's decoder must still get it right.
  for (const [at, bytes] of [[size - 1, [0xc3]], [size - 3, [0xe2, 0x82, 0xac]], [1, [0xff]], [size >> 1, [0xc3, 0xa9]]]) {
    const buf = Buffer.from(ascii)
    Buffer.from(bytes).copy(buf, at)
    if (at + bytes.length === size) assert.equal(looksAscii(buf, 0, size), false, `last byte at ${at}`)
    let result
    const calls = nativeCalls(() => (result = decodeUtf8(buf)))
    assert.equal(calls, expectedRoute(buf, 0, size), `route with ${bytes} at ${at}`)
    assert.equal(result, buf.toString('utf8'), `${bytes} at ${at}`)
  }
})

test('ASCII goes to Node\'s decoder below ASCII_TO_NODE_BELOW on the lines that have one, native from there on', () => {
  for (const n of [NATIVE_FROM, NATIVE_FROM + 1, ASCII_TO_NODE_BELOW - 1, ASCII_TO_NODE_BELOW, ASCII_TO_NODE_BELOW + 7]) {
    if (n < NATIVE_FROM) continue
    const buf = filled(UNITS.ascii, n)
    let result
    const expected = n >= ASCII_TO_NODE_BELOW ? 1 : 0
    assert.equal(nativeCalls(() => (result = decodeUtf8(buf))), expected, `ascii ${n}`)
    assert.equal(result, buf.toString('utf8'))
    const cjk = filled(UNITS.cjk, n)
    assert.equal(nativeCalls(() => (result = decodeUtf8(cjk))), 1, `cjk ${n}`)
    assert.equal(result, cjk.toString('utf8'))
  }
})

test('the native decoder itself, on short inputs it is no longer given on every Node', () => {
  // Below the threshold decodeUtf8 no longer calls it, but it must still agree
  // with Node there: other Node lines and the file reads use it at every size.
  let checked = 0
  for (const [kind, unit] of Object.entries(UNITS)) {
    for (let length = 0; length <= 70; length++) {
      const buf = filled(unit, length)
      const view = new Uint8Array(buf.buffer, buf.byteOffset, buf.length)
      assert.equal(native.decodeUtf8(view), buf.toString('utf8'), `${kind} ${length}`)
      for (let start = 0; start <= Math.min(length, 5); start++) {
        for (const end of [start, length, length - 1, start + 1]) {
          if (end < start || end > length) continue
          assert.equal(native.decodeUtf8(view, start, end), buf.toString('utf8', start, end), `${kind} ${length} [${start}, ${end})`)
          checked++
        }
      }
    }
  }
  assert.ok(checked > 1000)
})

test('the native entry point refuses what lib/decode.js never passes', () => {
  assert.throws(() => native.decodeUtf8('text'), TypeError)
  assert.throws(() => native.decodeUtf8(new Uint16Array(4)), TypeError)
  assert.throws(() => native.decodeUtf8(new Uint8Array(4), 'a', 2), TypeError)
  // Out-of-range offsets are clamped, never read out of bounds.
  assert.equal(native.decodeUtf8(Buffer.from('abc'), -5, 99), 'abc')
  assert.equal(native.decodeUtf8(Buffer.from('abc'), 2, 1), '')
})
