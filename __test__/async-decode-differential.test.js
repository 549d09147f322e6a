'use strict'
// The identity tests of readFileUtf8 (differential.test.js), run against
// decodeUtf8 (oracle: Buffer#toString('utf8')) and readFileUtf8Async (oracle:
// fs.promises.readFile(p, 'utf8')), with the same generated cases; those of
// 4 MiB and more are in async-decode-differential-4mib.test.js.
const { test } = require('node:test')
const assert = require('node:assert/strict')

const { decodeUtf8 } = require('..')
const { scratch, hex } = require('./helpers')
const { NASTY, FILLERS, fill, randomFiles, LARGE_SIZES_BELOW_4MIB, largeCases, sprinkledCases } = require('./cases')
const { assertDecodes, assertReadsAsync } = require('./oracles')

const OFFSETS = Array.from({ length: 71 }, (_, i) => i)

for (const [name, seq] of Object.entries(NASTY)) {
  test(`decodeUtf8: ${name} at every offset 0..70, in every filler, mid-buffer and at the end`, () => {
    let checked = 0
    for (const [fillerName, filler] of Object.entries(FILLERS)) {
      for (const offset of OFFSETS) {
        for (const tail of [[], fill(filler, 80)]) {
          assertDecodes([...fill(filler, offset), ...seq, ...tail], `${name} after ${offset} ${fillerName} bytes`)
          checked++
        }
      }
    }
    assert.equal(checked, Object.keys(FILLERS).length * OFFSETS.length * 2)
  })
}

/** assertReadsAsync for many files at once (each its own file, read concurrently). */
async function assertReadsAsyncBatch(prefix, cases) {
  await Promise.all(cases.map(({ bytes, label }, i) => assertReadsAsync(scratch(`${prefix}-${i}.txt`), bytes, label)))
  return cases.length
}

test('readFileUtf8Async: every nasty sequence at every offset 0..70, in every filler, mid-file and at EOF', async () => {
  let checked = 0
  for (const [name, seq] of Object.entries(NASTY)) {
    const cases = []
    for (const [fillerName, filler] of Object.entries(FILLERS)) {
      for (const offset of OFFSETS) {
        for (const tail of [[], fill(filler, 80)]) {
          cases.push({ bytes: Buffer.from([...fill(filler, offset), ...seq, ...tail]), label: `${name} after ${offset} ${fillerName} bytes` })
        }
      }
    }
    checked += await assertReadsAsyncBatch('async-nasty', cases)
  }
  assert.equal(checked, Object.keys(NASTY).length * Object.keys(FILLERS).length * OFFSETS.length * 2)
})

test('decodeUtf8: pairs of nasty sequences next to each other', () => {
  const seqs = Object.values(NASTY)
  for (const a of seqs) for (const b of seqs) assertDecodes([...fill(FILLERS.ascii, 30), ...a, ...b], 'pair')
})

test('decodeUtf8: every code point class boundary in long runs', () => {
  for (const c of [0x7f, 0x80, 0xff, 0x100, 0x7ff, 0x800, 0xffff, 0x10000, 0x10ffff]) {
    for (const len of [1, 15, 16, 17, 31, 32, 33, 63, 64, 65, 1000]) {
      const s = String.fromCodePoint(c).repeat(len)
      assert.equal(assertDecodes(Buffer.from(s), `U+${c.toString(16)} × ${len}`), s)
    }
  }
})

test('decodeUtf8: 2000 deterministic random buffers (0..4 KiB), and every slice start/end of some', () => {
  const files = randomFiles(0x5eed, 2000, 4096)
  for (const [i, bytes] of files.entries()) assertDecodes(bytes, `random #${i}`)
  // Slices cut through characters: start/end must act on bytes, as Buffer#toString.
  for (const bytes of files.slice(0, 8)) {
    const buf = Buffer.from(bytes.slice(0, 40))
    for (let s = 0; s <= buf.length; s++) {
      for (let e = s; e <= buf.length; e++) assert.equal(decodeUtf8(buf, s, e), buf.toString('utf8', s, e), `${hex(buf)} [${s}, ${e})`)
    }
  }
})

test('readFileUtf8Async: 500 deterministic random files (0..4 KiB)', async () => {
  const files = randomFiles(0xa51c, 500, 4096)
  assert.equal(await assertReadsAsyncBatch('async-random', files.map((bytes, i) => ({ bytes: Buffer.from(bytes), label: `random #${i}` }))), 500)
})

test('decodeUtf8 and readFileUtf8Async: empty input and all 256 one-byte inputs', async () => {
  const file = scratch('async-one-byte.txt')
  assert.equal(assertDecodes([], 'empty'), '')
  assert.equal(await assertReadsAsync(file, Buffer.alloc(0), 'empty'), '')
  for (let b = 0; b < 256; b++) {
    assertDecodes([b], `byte ${b}`)
    await assertReadsAsync(file, Buffer.from([b]), `byte ${b}`)
  }
})

for (const size of LARGE_SIZES_BELOW_4MIB) {
  test(`large inputs of ${size} bytes: every class × odd byte at start, left half, middle, end (decodeUtf8 and readFileUtf8Async)`, async () => {
    const file = scratch(`async-big-${size}.txt`)
    for (const { label, bytes } of largeCases(size)) {
      assertDecodes(bytes, label)
      await assertReadsAsync(file, bytes, label)
    }
  })
}

test('Latin-1 text with invalid bytes sprinkled every ~4 KiB (decodeUtf8 and readFileUtf8Async)', async () => {
  const file = scratch('async-sprinkled.txt')
  for (const bytes of sprinkledCases()) {
    assertDecodes(bytes, 'sprinkled')
    await assertReadsAsync(file, bytes, 'sprinkled')
  }
})
