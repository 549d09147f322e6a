'use strict'
// Differential tests: for generated files, our string must be `===` to
// fs.readFileSync(p, 'utf8') — Node itself is the oracle.
const { test } = require('node:test')
const assert = require('node:assert/strict')
const fs = require('node:fs')

const { readFileUtf8, readFileSync } = require('..')
const { scratch, assertSameAsFs } = require('./helpers')
const { NASTY, FILLERS, fill, randomFiles, BASES, ODD, WHERE, LARGE_SIZES_BELOW_4MIB, largeCases, sprinkledCases } = require('./cases')

// Offsets 0..70 put each sequence before, on and after the 16-, 32- and 64-byte
// block edges that SIMD decoders work in.
const OFFSETS = Array.from({ length: 71 }, (_, i) => i)

for (const [name, seq] of Object.entries(NASTY)) {
  test(`${name} at every offset 0..70, in every filler, mid-file and at EOF`, () => {
    const file = scratch('nasty.txt')
    let checked = 0
    for (const [fillerName, filler] of Object.entries(FILLERS)) {
      for (const offset of OFFSETS) {
        const prefix = fill(filler, offset)
        for (const tail of [[], fill(filler, 80)]) {
          const bytes = Buffer.from([...prefix, ...seq, ...tail])
          assertSameAsFs(readFileUtf8, file, bytes, `${name} after ${offset} ${fillerName} bytes`)
          checked++
        }
      }
    }
    assert.equal(checked, Object.keys(FILLERS).length * OFFSETS.length * 2)
  })
}

test('readFileSync(p, utf8 spellings) matches fs on every nasty sequence', () => {
  const file = scratch('spellings.txt')
  for (const [name, seq] of Object.entries(NASTY)) {
    const bytes = Buffer.from([...fill(FILLERS.latin1, 33), ...seq])
    fs.writeFileSync(file, bytes)
    const expected = fs.readFileSync(file, 'utf8')
    for (const options of ['utf8', 'utf-8', 'UTF8', 'Utf-8', { encoding: 'utf8' }, { encoding: 'utf-8', flag: 'r' }]) {
      assert.equal(readFileSync(file, options), expected, `${name} with ${JSON.stringify(options)}`)
    }
  }
})

test('pairs of nasty sequences next to each other', () => {
  const file = scratch('pairs.txt')
  const seqs = Object.values(NASTY)
  let checked = 0
  for (const a of seqs) {
    for (const b of seqs) {
      assertSameAsFs(readFileUtf8, file, Buffer.from([...fill(FILLERS.ascii, 30), ...a, ...b]), 'pair')
      checked++
    }
  }
  assert.equal(checked, seqs.length ** 2)
})

test('every code point class boundary in long runs (one-byte vs two-byte strings)', () => {
  const file = scratch('runs.txt')
  for (const c of [0x7f, 0x80, 0xff, 0x100, 0x7ff, 0x800, 0xffff, 0x10000, 0x10ffff]) {
    for (const len of [1, 15, 16, 17, 31, 32, 33, 63, 64, 65, 1000]) {
      const s = String.fromCodePoint(c).repeat(len)
      assert.equal(assertSameAsFs(readFileUtf8, file, Buffer.from(s), `U+${c.toString(16)} × ${len}`), s)
    }
  }
})

test('deterministic random byte files (2000 files, 0..4 KiB)', () => {
  const file = scratch('random.txt')
  const files = randomFiles(0x5eed, 2000, 4096)
  for (const [i, bytes] of files.entries()) assertSameAsFs(readFileUtf8, file, Buffer.from(bytes), `random #${i}`)
  assert.equal(files.length, 2000)
})

test('empty file and one-byte files for all 256 byte values', () => {
  const file = scratch('one-byte.txt')
  assert.equal(assertSameAsFs(readFileUtf8, file, Buffer.alloc(0)), '')
  for (let b = 0; b < 256; b++) assertSameAsFs(readFileUtf8, file, Buffer.from([b]), `byte ${b}`)
})

// Large files: around the external-string thresholds (src/js_string.rs) and
// at 4 MiB+, for each class, with an odd byte that changes the class placed at
// each place of WHERE (cases.js); from 4 MiB on in differential-4mib.test.js.
for (const size of LARGE_SIZES_BELOW_4MIB) {
  test(`large files of ${size} bytes: every class × odd byte at start, left half, middle, end`, () => {
    const file = scratch(`big-${size}.txt`)
    let checked = 0
    for (const { label, bytes } of largeCases(size)) {
      assertSameAsFs(readFileUtf8, file, bytes, label)
      checked++
    }
    assert.equal(checked, Object.keys(BASES).length * (1 + Object.keys(ODD).length * WHERE.length))
  })
}

test('Latin-1 text with invalid bytes sprinkled every ~4 KiB (the bench "invalid" shape)', () => {
  const file = scratch('sprinkled.txt')
  for (const bytes of sprinkledCases()) assertSameAsFs(readFileUtf8, file, bytes, 'sprinkled')
})
