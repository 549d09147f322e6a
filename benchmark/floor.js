'use strict'
// floor: how much of a read's time any reader must spend, cell by cell, so that a
// speed-up over fs can be judged against the most it could be.
//
// In one process, interleaved (as the read matrix), for each content × size:
//   ours      readFileUtf8(p)
//   fs        fs.readFileSync(p, 'utf8')
//   read      the read step alone: native readPathLength(p) — our syscalls into
//             our reused buffer, which stays in cache (the fastest read we know)
//   decode    the string step alone, from bytes already in memory: the faster of
//             decodeUtf8(buf) and Node's buf.toString('utf8')
//   read, then decode
//             both steps timed as one contender: readPathLength(p) and then
//             the faster of the two decoders. Timed apart, the steps add up to
//             less than this (each alone keeps its caches; one after the other
//             they share them: ASCII 16 KiB 1.54 + 1.99 µs apart, 4.36 µs
//             together), so the sum would set too high a cap.
// Two caps on the speed-up over fs follow: fs / read, for any reader (every
// reader reads the bytes), and fs / (read, then decode), for one that reads
// and then makes the string, one step after the other. A reader that does part
// of the string step while reading (ours checks ASCII chunk by chunk as it reads,
// and hands large ASCII buffers to V8 as they are) can beat the second cap.
//
// Run with any Node: `node benchmark/floor.js [--content a,b] [--size 1KiB,4MiB]
// [--time ms]`, or `npm run bench -- --suite floor`. Prints Markdown.
const fs = require('node:fs')
const os = require('node:os')
const { parseArgs } = require('node:util')

const addon = require('..')
const native = require('../lib/native')
const { ensureFixture, CELL_OPTIONS, selectCells } = require('./fixtures')
const { measureCell } = require('./measure')
const { fmtTime, sizeLabel } = require('./report')

const { values } = parseArgs({
  options: {
    ...CELL_OPTIONS,
    time: { type: 'string', default: '300' },
  },
})
const { contents, sizes } = selectCells(values)
const budgetMs = Number(values.time)

async function main() {
  console.log(`Node ${process.version}, ${os.cpus()[0].model}; medians per call, ${budgetMs} ms per contender per cell in 3 interleaved rounds`)
  console.log()
  console.log('| content | size | ours | fs | speed-up | read | decode | read, then decode | cap: fs / read | cap: fs / (read, then decode) |')
  console.log('|---|---|---:|---:|---:|---:|---:|---:|---:|---:|')
  for (const content of contents) {
    for (const size of sizes) {
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
      console.log(
        `| ${content} | ${sizeLabel(size)} | ${fmtTime(t.ours)} | ${fmtTime(t.fs)} | ${(t.fs / t.ours).toFixed(2)}× | ` +
          `${fmtTime(t.read)} | ${fmtTime(decode)} | ${fmtTime(twoSteps)} | ${(t.fs / t.read).toFixed(2)}× | ${(t.fs / twoSteps).toFixed(2)}× |`,
      )
    }
  }
}

main().catch((err) => {
  process.stderr.write(`${err.stack || err}\n`)
  process.exitCode = 1
})
