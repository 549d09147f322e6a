'use strict'
// floor: how much of a read's time any reader must spend, cell by cell, so that a
// speed-up over fs can be judged against the most it could be.
//
// In one process, interleaved (as the read matrix), for each content × size:
//   ours      readFileUtf8(p)
//   fs        fs.readFileSync(p, 'utf8')
//   read      the read step alone: native readPathLength(p) — our syscalls into
//             our reused buffer, which stays in cache (the fastest read we know).
//             It is in the bench build only: `npm run build:bench` first.
//   decode    the string step alone, from bytes already in memory: the faster of
//             decodeUtf8(buf) and Node's buf.toString('utf8')
//   read, then decode
//             both steps timed as one contender: readPathLength(p) and then
//             the faster of the two decoders. Timed apart, the steps add up to
//             less than this (each alone keeps its caches; one after the other
//             they share them), so the sum would set too high a cap.
// Two caps on the speed-up over fs follow: fs / read, for any reader (every
// reader reads the bytes), and fs / (read, then decode), for one that reads
// and then makes the string, one step after the other. A reader that does part
// of the string step while reading (ours checks ASCII chunk by chunk as it reads,
// and hands large ASCII buffers to V8 as they are) can beat the second cap.
//
// Run with any Node: `node benchmark/floor.js [--quick] [--content a,b] [--size 1KiB,4MiB]
// [--time ms]`, or `npm run bench -- --suite floor`. Prints Markdown.
const fs = require('node:fs')

const path = require('node:path')

const addon = require('..')
const { findBinary } = require('../lib/binary-name')
const { SIZES, ensureFixture } = require('./fixtures')
const { KiB, MiB, fmtTime, fmtRatio, sizeLabel, table } = require('./format')
const { suiteOptions } = require('./options')
const { measureCell } = require('./timing')

const opts = suiteOptions('floor.js', { time: { type: 'string' } }, { sizes: SIZES, quickSizes: [KiB, 256 * KiB, 4 * MiB] })
const budgetMs = opts.number('time', 300, 100)

async function main() {
  const benchBuild = findBinary(path.join(__dirname, 'bench-build'))
  if (benchBuild === null) throw new Error('floor needs the bench build of the addon (readPathLength, the read step alone): run `npm run build:bench` first')
  const native = require(benchBuild)
  const rows = []
  for (const content of opts.contents) {
    for (const size of opts.sizes) {
      process.stderr.write(`floor: ${content} ${sizeLabel(size)}\n`)
      const { file, bytes } = ensureFixture(content, size)
      const buf = fs.readFileSync(file)
      const expected = buf.toString('utf8')
      if (addon.readFileUtf8(file) !== expected || addon.decodeUtf8(buf) !== expected) {
        throw new Error(`result differs from fs: ${content} ${sizeLabel(size)}`)
      }
      if (native.readPathLength(file, 0) !== bytes) throw new Error(`readPathLength: wrong length for ${file}`)
      const stats = await measureCell(
        [
          { name: 'ours', fn: () => addon.readFileUtf8(file) },
          { name: 'fs', fn: () => fs.readFileSync(file, 'utf8') },
          { name: 'read', fn: () => native.readPathLength(file, 0) },
          { name: 'decodeUtf8', fn: () => addon.decodeUtf8(buf) },
          { name: 'toString', fn: () => buf.toString('utf8') },
          { name: 'read, then decodeUtf8', fn: () => (native.readPathLength(file, 0), addon.decodeUtf8(buf)) },
          { name: 'read, then toString', fn: () => (native.readPathLength(file, 0), buf.toString('utf8')) },
        ],
        { budgetMs, rounds: 3, minSamples: 9, warmupMs: 25 },
      )
      const t = Object.fromEntries(Object.entries(stats).map(([name, s]) => [name, s.median]))
      const decode = Math.min(t.decodeUtf8, t.toString)
      const twoSteps = Math.min(t['read, then decodeUtf8'], t['read, then toString'])
      const times = [t.ours, t.fs].map(fmtTime)
      const steps = [t.read, decode, twoSteps].map(fmtTime)
      rows.push([content, sizeLabel(size), ...times, fmtRatio(t.fs / t.ours), ...steps, fmtRatio(t.fs / t.read), fmtRatio(t.fs / twoSteps)])
    }
  }
  const columns = [['content', 'l'], ['size', 'l'], ...['ours', 'fs', 'speed-up', 'read', 'decode', 'read, then decode'].map((h) => [h, 'r'])]
  columns.push(['cap: fs / read', 'r'], ['cap: fs / (read, then decode)', 'r'])
  console.log(`#### Floor: the read step and the string step alone\n\nMedians per call, ${budgetMs} ms per contender per cell in 3 interleaved rounds.\n`)
  console.log(table(columns, rows))
}

main().catch((err) => {
  process.stderr.write(`${err.stack || err}\n`)
  process.exitCode = 1
})
