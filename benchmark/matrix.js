'use strict'
// The read matrix: readFileUtf8(p) against fs.readFileSync(p, 'utf8') for every
// content class × file size, each speed-up (fs time / ours time) in five views,
// because a reader can win in one and lose in another:
//   median     per-call medians of mitata's loops, a gc() before each loop
//   mean       the means of the same samples (they carry the GC pauses)
//              (median, mean, batched and gapped run each cell in a process
//              of its own: V8 keeps freed large pages for reuse, so a cell in a
//              heap the cells before it used would inherit their page sizes)
//   sustained  each reader alone in a fresh process, in a plain loop of calls:
//              total time / calls, with GC and fresh memory paid in the loop
//   batched    batches of back-to-back calls, the two readers taking turns in
//              one heap, no gc() of ours
//   loaded     the sustained loop in a process whose heap holds LOADED_HEAP_MIB
//              of live objects, as a compiler's or bundler's does: there every
//              full GC, which external strings bring on, marks them all
//   gapped     single calls, each after an idle sleep of --gap-ms, the readers
//              taking turns in one heap (a server's requests): per-call medians
// The raw fs.readFileSync(p) (the bytes alone) is timed beside them in mitata's view.
//
//   node benchmark/matrix.js [--quick] [--content a,b] [--size 64B,4MiB]
//        [--views median,sustained,batched,loaded,gapped] [--time ms] [--rounds n]
//        [--loop-ms ms] [--loop-rounds n] [--batch-ms ms] [--gap-ms ms] [--gapped-ms ms]
//
// Progress goes to stderr, the Markdown report to stdout.
const path = require('node:path')

const { CONTENTS, SIZES, ensureFixture } = require('./fixtures')
const { KiB, MiB, sizeLabel, fmtTime, fmtRatio, table, matrix, duration } = require('./format')
const { suiteOptions, parseList, usageExit } = require('./options')
const { SYNC_READERS } = require('./readers')
const { measureCell, timeBatches, timeAfterGaps, inChildren, median, SAMPLING, LOADED_HEAP_MIB, hasGc } = require('./timing')

const VIEWS = ['median', 'sustained', 'batched', 'loaded', 'gapped']
const opts = suiteOptions(
  'matrix.js',
  {
    views: { type: 'string' },
    time: { type: 'string' },
    rounds: { type: 'string' },
    'loop-ms': { type: 'string' },
    'loop-rounds': { type: 'string' },
    'batch-ms': { type: 'string' },
    'gap-ms': { type: 'string' },
    'gapped-ms': { type: 'string' },
    // Internal: measure the in-process views of this one file, print them as JSON.
    cell: { type: 'string' },
  },
  { sizes: SIZES, quickSizes: [KiB, 256 * KiB, 4 * MiB] },
)
const views = opts.values.views ? parseList(opts.values.views) : VIEWS
for (const v of views) if (!VIEWS.includes(v)) usageExit('matrix.js', new Error(`unknown view '${v}' (known: ${VIEWS.join(', ')})`))
const settings = {
  // mitata: measured time per contender per cell, in interleaved rounds.
  budgetMs: opts.number('time', 500, 200),
  rounds: Math.round(opts.number('rounds', 3)),
  // sustained: one loop per reader per round, each in a fresh process.
  loopMs: opts.number('loop-ms', 250, 100),
  loopRounds: Math.round(opts.number('loop-rounds', 3, 1)),
  // batched: time per reader per cell; each batch lasts about BATCH_MS of fs's calls.
  batchMs: opts.number('batch-ms', 250, 100),
  // gapped: the idle sleep before each call (longer than any spin of a thread
  // kept waiting for the next call), and the wall time per reader per cell.
  gapMs: opts.number('gap-ms', 1, 1),
  gappedMs: opts.number('gapped-ms', 250, 100),
}
/** Long enough that a batch holds the young-generation GCs its calls cause. */
const BATCH_MS = 20

function progress(text) {
  process.stderr.write(process.stderr.isTTY ? `\r\x1b[2K${text}` : `${text}\n`)
}

/** Never time a wrong answer. */
function verify(file, content, size) {
  if (SYNC_READERS.ours(file)() !== SYNC_READERS.fs(file)()) {
    throw new Error(`readFileUtf8 !== fs.readFileSync(p, 'utf8') for ${content} ${sizeLabel(size)} (${file})`)
  }
}

const IN_PROCESS_VIEWS = ['median', 'batched', 'gapped']

/** ns per call of each view's readers for one file: the in-process views in a child of their own. */
function measure(file) {
  const cell = {}
  if (views.some((v) => IN_PROCESS_VIEWS.includes(v))) {
    const args = () => [__filename, ...process.argv.slice(2), '--cell', file]
    Object.assign(cell, inChildren(['cell'], 1, args, process.execArgv).cell[0])
  }
  for (const [view, heapMib] of [['sustained', 0], ['loaded', LOADED_HEAP_MIB]]) {
    if (!views.includes(view)) continue
    const args = (name) => [path.join(__dirname, 'loop-child.js'), name, file, '--ms', String(settings.loopMs), '--heap-mib', String(heapMib)]
    const runs = inChildren(['ours', 'fs'], settings.loopRounds, args)
    cell[view] = { ours: median(runs.ours.map((r) => r.nsPerCall)), fs: median(runs.fs.map((r) => r.nsPerCall)) }
  }
  return cell
}

/** The in-process views of one file, in this process. */
async function measureHere(file) {
  const cell = {}
  let fsCallNs
  if (views.includes('median')) {
    const stats = await measureCell(
      ['ours', 'fs', 'buffer'].map((name) => ({ name, fn: SYNC_READERS[name](file) })),
      { budgetMs: settings.budgetMs, rounds: settings.rounds, minSamples: 3 * settings.rounds, warmupMs: opts.quick ? 10 : 25 },
    )
    Object.assign(cell, { median: pick(stats, 'median'), mean: pick(stats, 'mean'), spread: stats, buffer: stats.buffer.median })
    fsCallNs = stats.fs.median
  }
  const readers = ['ours', 'fs'].map((name) => ({ name, fn: SYNC_READERS[name](file) }))
  if (views.includes('batched')) {
    fsCallNs ??= median(Array.from({ length: 5 }, () => timeOne(readers[1].fn)))
    const calls = Math.max(1, Math.round((BATCH_MS * 1e6) / fsCallNs))
    cell.batched = timeBatches(readers, { calls, budgetMs: settings.batchMs })
  }
  if (views.includes('gapped')) {
    cell.gapped = timeAfterGaps(readers, { gapMs: settings.gapMs, budgetMs: settings.gappedMs })
  }
  return cell
}

const pick = (stats, key) => ({ ours: stats.ours[key], fs: stats.fs[key] })

function timeOne(fn) {
  const t0 = process.hrtime.bigint()
  fn()
  return Number(process.hrtime.bigint() - t0)
}

/** fs time / ours time of one view of a cell. */
const speedup = (cell, view) => (cell[view] ? cell[view].fs / cell[view].ours : NaN)

function report(cells) {
  const shownViews = VIEWS.flatMap((v) => (!views.includes(v) ? [] : v === 'median' ? ['median', 'mean'] : [v]))
  const get = (content, size) => cells.get(`${content}/${size}`)
  const out = [
    '#### Speed-up over `fs.readFileSync(p, \'utf8\')` (fs time / readFileUtf8 time; under 1.00× is slower than fs)',
    '',
    `Views: ${shownViews.join(', ')}. median and mean: ${settings.budgetMs} ms per reader per cell in ${settings.rounds} interleaved rounds, ` +
      `a gc() before each loop${hasGc ? '' : ' (no gc() available)'}; ${SAMPLING}; each cell in a fresh process. ` +
      `sustained: ${settings.loopRounds} round(s) of a ${settings.loopMs} ms plain loop per reader, each in a fresh process; median of the rounds. ` +
      `batched: batches of ~${BATCH_MS} ms of fs's calls, the readers taking turns for ${settings.batchMs} ms each in the cell's process; median batch. ` +
      `loaded: the sustained loop in a process holding ~${LOADED_HEAP_MIB} MiB of live objects. ` +
      `gapped: one call at a time after a ${settings.gapMs} ms idle sleep, the readers taking turns for ${settings.gappedMs} ms each in the cell's process; median call.`,
  ]
  if (shownViews.length > 1) {
    out.push('', `Lowest of the views (${shownViews.join(', ')}):`, '')
    out.push(matrix('lowest', opts.contents, opts.sizes, (c, s) => fmtRatio(Math.min(...shownViews.map((v) => speedup(get(c, s), v))))))
  }
  for (const view of shownViews) {
    out.push('', `${view}:`, '', matrix(view, opts.contents, opts.sizes, (c, s) => fmtRatio(speedup(get(c, s), view))))
  }
  out.push('', '#### Times per call', '')
  const columns = [['size', 'l']]
  if (views.includes('median')) {
    columns.push(['ours median', 'r'], ['p75–p99', 'r'], ['fs median', 'r'], ['p75–p99', 'r'], ['fs Buffer', 'r'])
    columns.push(['ours mean', 'r'], ['fs mean', 'r'])
  }
  if (views.includes('sustained')) columns.push(['ours sustained', 'r'], ['fs sustained', 'r'])
  if (views.includes('batched')) columns.push(['ours batched', 'r'], ['fs batched', 'r'])
  if (views.includes('loaded')) columns.push(['ours loaded', 'r'], ['fs loaded', 'r'])
  if (views.includes('gapped')) columns.push(['ours gapped', 'r'], ['fs gapped', 'r'])
  const spread = (s) => `${fmtTime(s.p75)}–${fmtTime(s.p99)}`
  for (const content of opts.contents) {
    const rows = opts.sizes.map((size) => {
      const cell = get(content, size)
      const row = [sizeLabel(size)]
      if (cell.median) {
        row.push(fmtTime(cell.median.ours), spread(cell.spread.ours), fmtTime(cell.median.fs), spread(cell.spread.fs))
        row.push(fmtTime(cell.buffer), fmtTime(cell.mean.ours), fmtTime(cell.mean.fs))
      }
      if (cell.sustained) row.push(fmtTime(cell.sustained.ours), fmtTime(cell.sustained.fs))
      if (cell.batched) row.push(fmtTime(cell.batched.ours), fmtTime(cell.batched.fs))
      if (cell.loaded) row.push(fmtTime(cell.loaded.ours), fmtTime(cell.loaded.fs))
      if (cell.gapped) row.push(fmtTime(cell.gapped.ours), fmtTime(cell.gapped.fs))
      return row
    })
    out.push(`${content}: ${CONTENTS[content]}`, '', table(columns, rows), '')
  }
  return out.join('\n')
}

async function main() {
  if (opts.values.cell) {
    process.stdout.write(JSON.stringify(await measureHere(opts.values.cell)))
    return
  }
  // Fixtures first, so that generating 64 MiB files never lands inside a measurement.
  const files = new Map()
  for (const content of opts.contents) {
    for (const size of opts.sizes) {
      const { file } = ensureFixture(content, size, () => progress(`generating fixture ${content} ${sizeLabel(size)}`))
      files.set(`${content}/${size}`, file)
    }
  }
  const cells = new Map()
  const started = performance.now()
  for (const [key, file] of files) {
    const [content, size] = [key.split('/')[0], Number(key.split('/')[1])]
    const done = cells.size
    const eta = done ? `, ~${duration(((performance.now() - started) / done) * (files.size - done))} to go` : ''
    progress(`read [${done + 1}/${files.size}] ${content} ${sizeLabel(size)}${eta}`)
    verify(file, content, size)
    cells.set(key, measure(file))
  }
  if (process.stderr.isTTY) process.stderr.write('\r\x1b[2K')
  process.stdout.write(report(cells) + '\n')
}

main().catch((err) => {
  process.stderr.write(`\n${err.stack || err}\n`)
  process.exitCode = 1
})
