'use strict'
// Run by engines.test.js in a child process with SIMDUTF_FORCE_IMPLEMENTATION
// set: a compact differential run under whichever engine the addon picked.
// Prints {"engine": …, "checked": n}; exits non-zero on the first mismatch.
const { readFileUtf8, engine } = require('..')
const { scratch, assertSameAsFs } = require('./helpers')
const { NASTY, FILLERS, fill, randomFiles } = require('./cases')

const file = scratch('engine.txt')
let checked = 0
for (const seq of Object.values(NASTY)) {
  for (const filler of Object.values(FILLERS)) {
    for (const offset of [0, 1, 15, 16, 31, 32, 33, 63, 64, 65]) {
      assertSameAsFs(readFileUtf8, file, Buffer.from([...fill(filler, offset), ...seq, ...fill(filler, 70)]))
      checked++
    }
  }
}
for (const bytes of randomFiles(0xe9, 300, 3000)) {
  assertSameAsFs(readFileUtf8, file, Buffer.from(bytes))
  checked++
}
for (const base of ['plain ascii text\n', 'déjà vu\n', 'mixed 中文 😀\n']) {
  const big = Buffer.from(base.repeat(Math.ceil(300000 / Buffer.byteLength(base))))
  assertSameAsFs(readFileUtf8, file, big)
  big[big.length >> 1] = 0xff
  assertSameAsFs(readFileUtf8, file, big)
  checked += 2
}
// Past the two-thread decode (8 MiB, src/parallel.rs): invalid bytes around the
// middle, where the input is split, decoded by this engine's lossy decoder.
const huge = Buffer.from('mixed 中文 😀 déjà\n'.repeat(Math.ceil((9 << 20) / 24)))
const middle = huge.length >> 1
for (const fault of [[0xff], [0xe2, 0x82], [0x80, 0x80, 0x80], [0xf0, 0x9f, 0x98]]) {
  const bytes = Buffer.from(huge)
  for (let at = middle - 6; at < middle + 6; at += 4) bytes.set(fault, at)
  assertSameAsFs(readFileUtf8, file, bytes)
  checked++
}
process.stdout.write(JSON.stringify({ engine: engine(), checked }))
