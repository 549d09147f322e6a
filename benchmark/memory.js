'use strict'
// memory: what a loop of reads costs in RSS, ours side by side with fs, each
// reader in a fresh process (loop-child.js) per content × size: the peak RSS of
// the loop, and the RSS left after gc() and a second of idleness (what a caller
// cannot see or release). Ours also in the lean memory mode (setMemoryMode),
// with each loop's time. Every reader makes the same number of calls. Sync: a
// plain loop of readFileUtf8 vs fs.readFileSync(p, 'utf8'); async: reads kept
// `--concurrency` in flight, readFileUtf8Async vs fs.promises.readFile(p, 'utf8'),
// of 4 MiB files.
//
//   node benchmark/memory.js [--quick] [--content a,b] [--size 1MiB,64MiB]
//        [--loop-mib n] [--idle-ms ms] [--async-reads n] [--concurrency n]
const path = require('node:path')

const { ensureFixture } = require('./fixtures')
const { MiB, sizeLabel, fmtTime, fmtMiB, fmtRatio, table } = require('./format')
const { suiteOptions } = require('./options')
const { inChildren } = require('./timing')

const opts = suiteOptions(
  'memory.js',
  {
    'loop-mib': { type: 'string' },
    'idle-ms': { type: 'string' },
    'async-reads': { type: 'string' },
    concurrency: { type: 'string' },
  },
  { sizes: [MiB, 4 * MiB, 64 * MiB], quickSizes: [4 * MiB] },
)
const loopBytes = opts.number('loop-mib', 256, 128) * MiB
const idleMs = opts.number('idle-ms', 1000)
const asyncReads = Math.round(opts.number('async-reads', 256, 128))
const concurrency = Math.round(opts.number('concurrency', 64))
const ASYNC_SIZE = 4 * MiB
/** Calls of a sync loop at least, so that a peak is a loop's, not one call's. */
const MIN_CALLS = 5

/** { ours, lean, fs } results of loop-child.js, each in a fresh process, with `args`. */
function each(file, args) {
  const child = path.join(__dirname, 'loop-child.js')
  const names = ['ours', 'lean', 'fs']
  const runs = inChildren(names, 1, (name) => [child, name, file, '--idle-ms', String(idleMs), ...args], ['--expose-gc'])
  return Object.fromEntries(names.map((name) => [name, runs[name][0]]))
}

const signedMiB = (bytes) => `${bytes >= 0 ? '+' : '−'}${fmtMiB(Math.abs(bytes))}`
const memoryCells = (r) => [
  fmtMiB(r.ours.peakRss),
  fmtMiB(r.fs.peakRss),
  fmtRatio(r.ours.peakRss / r.fs.peakRss),
  fmtMiB(r.ours.idleRss),
  fmtMiB(r.fs.idleRss),
  signedMiB(r.ours.idleRss - r.fs.idleRss),
]
const MEMORY_COLUMNS = [
  ['ours peak', 'r'],
  ['fs peak', 'r'],
  ['peak ours / fs', 'r'],
  ['ours idle', 'r'],
  ['fs idle', 'r'],
  ['idle ours − fs', 'r'],
]
const leanCells = (r) => [
  fmtMiB(r.lean.peakRss),
  fmtRatio(r.lean.peakRss / r.fs.peakRss),
  signedMiB(r.lean.idleRss - r.fs.idleRss),
  fmtTime(r.lean.nsPerCall),
  fmtTime(r.ours.nsPerCall),
  fmtTime(r.fs.nsPerCall),
  fmtRatio(r.fs.nsPerCall / r.lean.nsPerCall),
]
const LEAN_COLUMNS = [
  ['lean peak', 'r'],
  ['peak lean / fs', 'r'],
  ['idle lean − fs', 'r'],
  ['lean time', 'r'],
  ['ours time', 'r'],
  ['fs time', 'r'],
  ['speed-up lean', 'r'],
]

function main() {
  const progress = (text) => process.stderr.write(`${text}\n`)
  const syncRows = []
  const leanSyncRows = []
  for (const content of opts.contents) {
    for (const size of opts.sizes) {
      progress(`memory: sync ${content} ${sizeLabel(size)}`)
      const { file } = ensureFixture(content, size)
      const calls = Math.max(MIN_CALLS, Math.round(loopBytes / size))
      const r = each(file, ['--calls', String(calls)])
      syncRows.push([content, sizeLabel(size), String(calls), ...memoryCells(r)])
      leanSyncRows.push([content, sizeLabel(size), ...leanCells(r)])
    }
  }
  const asyncRows = []
  const leanAsyncRows = []
  for (const content of opts.contents) {
    progress(`memory: async ${content} ${sizeLabel(ASYNC_SIZE)}`)
    const { file } = ensureFixture(content, ASYNC_SIZE)
    const r = each(file, ['--async', '--concurrency', String(concurrency), '--calls', String(asyncReads)])
    const time = [fmtTime(r.ours.nsPerCall), fmtTime(r.fs.nsPerCall), fmtRatio(r.fs.nsPerCall / r.ours.nsPerCall)]
    asyncRows.push([content, ...memoryCells(r), ...time])
    leanAsyncRows.push([content, sizeLabel(ASYNC_SIZE), ...leanCells(r)])
  }
  const out = [
    '#### Memory: RSS of a loop of reads, each reader in a fresh process',
    '',
    `peak: the process's peak RSS; idle: RSS after gc() and ${idleMs} ms idle. ` +
      `Sync: readFileUtf8 vs fs.readFileSync(p, 'utf8'), a plain loop of ${fmtMiB(loopBytes)} of reads (at least ${MIN_CALLS} calls).`,
    '',
    table([['content', 'l'], ['size', 'l'], ['calls', 'r'], ...MEMORY_COLUMNS], syncRows),
    '',
    `Async: ${asyncReads} reads of ${sizeLabel(ASYNC_SIZE)}, ${concurrency} in flight, readFileUtf8Async vs ` +
      "fs.promises.readFile(p, 'utf8'); time: total / reads, speed-up: fs / ours.",
    '',
    table(
      [['content', 'l'], ...MEMORY_COLUMNS, ['ours time', 'r'], ['fs time', 'r'], ['speed-up', 'r']],
      asyncRows,
    ),
    '',
    "Lean: ours after setMemoryMode('lean'), in the same sync loops and async reads as above; " +
      'time: a call (sync) or total / reads (async); speed-up lean: fs / lean.',
    '',
    table([['content', 'l'], ['size', 'l'], ...LEAN_COLUMNS], [...leanSyncRows, ...leanAsyncRows.map((row) => [`${row[0]} (async)`, ...row.slice(1)])]),
  ]
  process.stdout.write(out.join('\n') + '\n')
}

main()
