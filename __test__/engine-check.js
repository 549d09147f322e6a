'use strict'
// Run by engines.slow.js in a child process, under whichever UTF-8 engine the
// addon picked there: a differential run against Node of that engine.
//   - every nasty sequence at every offset 0..70 (across the 16/32/64-byte
//     block edges), mid-text and at the very end, through decodeUtf8, whose
//     decode is the one a read makes (oracle: Buffer#toString);
//   - files ending in each sequence, and with it mid-file, through readFileUtf8
//     and readFileUtf8Async (oracle: fs.readFileSync);
//   - large files with an odd sequence at each place where a read or a decode
//     is split in two: the start, the left half, either side of the split,
//     the end.
// `--full` checks every class and odd sequence of the large files (the run
// for READFILE_UTF8_NO_SIMD, the pure-Rust engine); the others a subset.
// READFILE_UTF8_TEST_FORCE_LATE=v sets SIMDUTF_FORCE_IMPLEMENTATION=v only now,
// after Node started: Node 22+ refuses to start with a broken value (its own
// simdutf), while the addon's simdutf reads it on first use.
// Prints {"engine": …, "checked": n}; exits non-zero on the first mismatch.
if (process.env.READFILE_UTF8_TEST_FORCE_LATE !== undefined) {
  process.env.SIMDUTF_FORCE_IMPLEMENTATION = process.env.READFILE_UTF8_TEST_FORCE_LATE
}
const fs = require('node:fs')
const { readFileUtf8, readFileUtf8Async, decodeUtf8, engine } = require('..')
const { scratch, hex, assertSameAsFs } = require('./helpers')
const { NASTY, FILLERS, BASES, ODD, fill, randomFiles, validBuffer } = require('./cases')

const full = process.argv.includes('--full')
const file = scratch('engine.txt')
let checked = 0

function assertDecodes(bytes, label) {
  const buf = Buffer.from(bytes)
  if (decodeUtf8(buf) !== buf.toString('utf8')) throw new Error(`decodeUtf8 differs from Buffer#toString: ${label} ${hex(buf)}`)
  checked++
}

async function assertReads(bytes, label) {
  const expected = assertSameAsFs(readFileUtf8, file, bytes, label)
  if ((await readFileUtf8Async(file)) !== expected) throw new Error(`readFileUtf8Async differs from fs: ${label} ${hex(bytes)}`)
  checked++
}

/** Where a large input of `length` bytes is split in two (src/two_threads/mod.rs page_aligned_middle). */
const splitOf = (length) => Math.floor(length / 2) & ~4095

/** Offsets at which an odd sequence of `n` bytes is placed in a large input of `length` bytes. */
function placesIn(length, n) {
  const split = splitOf(length)
  return { start: 0, 'left half': length >> 2, 'before the split': split - n, 'at the split': split, end: length - n }
}

async function main() {
  for (const [name, seq] of Object.entries(NASTY)) {
    for (const [fillerName, filler] of Object.entries(FILLERS)) {
      for (let offset = 0; offset <= 70; offset++) {
        assertDecodes([...fill(filler, offset), ...seq], `${name} at the end after ${offset} ${fillerName} bytes`)
        assertDecodes([...fill(filler, offset), ...seq, ...fill(filler, 70)], `${name} after ${offset} ${fillerName} bytes`)
      }
      for (const offset of [0, 1, 15, 16, 31, 32, 33, 63, 64, 65]) {
        await assertReads(Buffer.from([...fill(filler, offset), ...seq]), `${name} at EOF after ${offset} ${fillerName} bytes`)
        await assertReads(Buffer.from([...fill(filler, offset), ...seq, ...fill(filler, 70)]), `${name} after ${offset} ${fillerName} bytes`)
      }
    }
  }
  const seqs = Object.values(NASTY)
  for (const a of seqs) for (const b of seqs) assertDecodes([...fill(FILLERS.latin1, 30), ...a, ...b], 'pair at the end')
  for (const [i, bytes] of randomFiles(0xe9, 300, 3000).entries()) {
    assertDecodes(bytes, `random #${i}`)
    if (i % 10 === 0) await assertReads(Buffer.from(bytes), `random #${i}`)
  }
  // Read in halves (every class, from SPLIT_READ_MIN_BYTES on), and past the
  // two-thread lossy decode (8 MiB on).
  const large = full
    ? [[(2 << 20) + 7, Object.keys(BASES), Object.keys(ODD)], [(9 << 20) + 3, ['latin1', 'utf8_mixed'], Object.keys(ODD)]]
    : [[(2 << 20) + 7, ['ascii', 'latin1', 'utf8_mixed'], ['é (U+00E9)', 'Ā (U+0100)', 'stray FF', 'truncated E2 82']], [(9 << 20) + 3, ['utf8_mixed'], ['stray FF', 'truncated E2 82']]]
  for (const [size, classes, odds] of large) {
    for (const className of classes) {
      const clean = validBuffer(BASES[className], size)
      await assertReads(clean, `${className} ${size} clean`)
      for (const oddName of odds) {
        const odd = ODD[oddName]
        for (const [where, at] of Object.entries(placesIn(clean.length, odd.length))) {
          const bytes = Buffer.from(clean)
          bytes.set(odd, at)
          await assertReads(bytes, `${className} ${size} + ${oddName} ${where}`)
        }
      }
    }
  }
  process.stdout.write(JSON.stringify({ engine: engine(), checked }))
}

main().catch((err) => {
  console.error(err)
  process.exitCode = 1
})
