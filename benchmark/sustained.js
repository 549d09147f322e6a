'use strict'
// sustained: plain loops of reads, as a tool that reads many files runs them:
// no gc() between loops, no batching by a harness, each reader alone in a
// process of its own (so its heap holds only its own strings). The read matrix
// settles the heap with a full GC before every measured loop of a few hundred
// ms; V8's state then stays the one fs is fastest in. On Node 26, fs.readFileSync
// of 256 KiB of Latin-1 text took 35-37 µs a call in the matrix and 145-181 µs
// in plain loops (65-71 µs with a gc() before each loop), ours 37-47 µs either way.
//
// For each content × size, each reader runs in a fresh process per round
// (rounds alternate the order): a warm-up, then `--runs` loops of `--time` ms;
// a loop's result is its mean time per call. Reported: the median loop per
// reader, and fs / ours of those medians.
//
// Run with any Node: `node benchmark/sustained.js [--content a,b] [--size 16KiB,1MiB]
// [--time ms] [--runs n] [--rounds n]`, or `npm run bench -- --suite sustained`.
// Prints Markdown.
const os = require('node:os')
const { parseArgs } = require('node:util')

const { KiB, MiB, ensureFixture, CELL_OPTIONS, selectCells } = require('./fixtures')
const { CONTENDERS } = require('./contender')
const { inProcessesInTurns, quantile } = require('./measure')
const { fmtTime, sizeLabel } = require('./report')

const { values } = parseArgs({
  options: {
    ...CELL_OPTIONS,
    time: { type: 'string', default: '300' },
    runs: { type: 'string', default: '3' },
    rounds: { type: 'string', default: '2' },
    child: { type: 'string' },
    file: { type: 'string' },
  },
})

/** The readers compared: the read matrix's, without the raw Buffer read. */
const READERS = ['ours', 'fs']

/** In a child: loops of reads of one file; prints each loop's mean ns per call as JSON. */
function child(name, file, loopMs, runs) {
  const read = CONTENDERS[name](file)
  const loop = (ms) => {
    let sink = 0
    let calls = 0
    const end = Date.now() + ms
    const started = process.hrtime.bigint()
    while (Date.now() < end) {
      for (let i = 0; i < 50; i++) sink += read().length
      calls += 50
    }
    if (sink === 0) throw new Error('nothing read')
    return Number(process.hrtime.bigint() - started) / calls
  }
  loop(Math.min(200, loopMs))
  const means = Array.from({ length: runs }, () => loop(loopMs))
  process.stdout.write(JSON.stringify(means) + '\n')
}

function main() {
  const loopMs = Number(values.time)
  const runs = Number(values.runs)
  const rounds = Number(values.rounds)
  const { contents, sizes } = selectCells(values, [KiB, 16 * KiB, 256 * KiB, MiB, 4 * MiB])
  console.log(
    `Node ${process.version}, ${os.cpus()[0].model}; plain loops, each reader in a process of its own, ` +
      `${rounds} rounds × ${runs} loops of ${loopMs} ms; time = median of the loops' mean per call`,
  )
  console.log()
  console.log('| content | size | ours | fs | speed-up |')
  console.log('|---|---|---:|---:|---:|')
  for (const content of contents) {
    for (const size of sizes) {
      const { file } = ensureFixture(content, size)
      if (CONTENDERS.ours(file)() !== CONTENDERS.fs(file)()) {
        throw new Error(`result differs from fs: ${content} ${sizeLabel(size)}`)
      }
      const args = ['--file', file, '--time', String(loopMs), '--runs', String(runs)]
      const means = inProcessesInTurns(READERS, rounds, (name) => [__filename, '--child', name, ...args])
      const t = Object.fromEntries(READERS.map((n) => [n, quantile(Float64Array.from(means[n].flat()).sort(), 0.5)]))
      console.log(`| ${content} | ${sizeLabel(size)} | ${fmtTime(t.ours)} | ${fmtTime(t.fs)} | ${(t.fs / t.ours).toFixed(2)}× |`)
    }
  }
}

if (values.child) child(values.child, values.file, Number(values.time), Number(values.runs))
else main()
