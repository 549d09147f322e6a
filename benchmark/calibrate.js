'use strict'
// calibrate: where each tuned value of lib/limits.json lies on this machine and
// this Node, one row per value (the run stops if a value has none). Each is
// swept with the bench build (`npm run build:bench`, which reads its values
// from READFILE_UTF8_TUNE; calibrate-child.js sets the JS side's): the same
// plain loop of calls, each variant in a fresh process, in turns (A B A B …),
// and the median of the rounds' loop means.
//
// A crossover prints the point from which one side wins at every larger (or
// smaller) point of the sweep, beside the value we ship; a trade-off prints
// time, peak and idle RSS per value. The table's facts are listed apart.
//
//   node benchmark/calibrate.js [--quick] [--only NAME,NAME] [--rounds n] [--loop-mib n]
const fs = require('node:fs')
const path = require('node:path')
const { spawnSync } = require('node:child_process')

const { ensureFixture, generate, fixtureDir } = require('./fixtures')
const { KiB, MiB, sizeLabel, fmtTime, fmtMiB, fmtRatio, table } = require('./format')
const { suiteOptions } = require('./options')
const { inChildren, median } = require('./timing')

const opts = suiteOptions('calibrate.js', { only: { type: 'string' }, rounds: { type: 'string' }, 'loop-mib': { type: 'string' } }, { sizes: [], quickSizes: [] })
const quick = opts.quick
const rounds = Math.round(opts.number('rounds', 3, 2))
const loopBytes = opts.number('loop-mib', 256, 64) * MiB
const only = opts.values.only ? opts.values.only.split(',') : null

/** The bench build's addon, brought up to date by `npm run build:bench` (cargo rebuilds only what changed). */
function benchBuild() {
  const dir = path.join(__dirname, 'bench-build')
  process.stderr.write('calibrate: npm run build:bench\n')
  const r = spawnSync('npm', ['run', 'build:bench'], { cwd: path.join(__dirname, '..'), stdio: ['ignore', 2, 2] })
  const file = fs.existsSync(dir) ? fs.readdirSync(dir).find((f) => f.endsWith('.node')) : undefined
  if (r.status !== 0 || !file) throw new Error('calibrate: `npm run build:bench` failed')
  return path.join(dir, file)
}
let BUILD
const limitsTable = require('../lib/limits.json')
const tunedTable = limitsTable.tuned
/** A value no input reaches: the threshold is never crossed. */
const NEVER = 2 ** 50

const callsFor = (bytes) => Math.max(20, Math.min(5000, Math.round(loopBytes / bytes)))
const fixture = (content, size) => ensureFixture(content, size).file

/** A 1 MiB file of utf8_mixed text with a stray 0xFF every `spacing` bytes. */
function errorsEvery(spacing) {
  const file = path.join(fixtureDir(), `calibrate-errors-every-${spacing}.txt`)
  if (!fs.existsSync(file)) {
    const bytes = Buffer.from(generate('utf8_mixed', MiB))
    for (let i = spacing - 1; i < bytes.length; i += spacing) bytes[i] = 0xff
    fs.mkdirSync(path.dirname(file), { recursive: true })
    fs.writeFileSync(file, bytes)
  }
  return file
}

const grid = (contents, sizes) => contents.flatMap((content) => sizes.map((size) => ({ group: content, x: size, label: sizeLabel(size), file: fixture(content, size), calls: callsFor(size) })))

/** A list of `count` small files of mixed text (each under 64 KiB, the sizes of a source tree), as a JSON file of paths. */
function treeList(count) {
  const dir = path.join(fixtureDir(), `calibrate-tree-${count}`)
  const listFile = `${dir}.json`
  if (!fs.existsSync(listFile)) {
    fs.mkdirSync(dir, { recursive: true })
    const contents = ['ascii', 'latin1', 'utf8_mixed', 'cjk']
    const files = Array.from({ length: count }, (_, i) => {
      const file = path.join(dir, `${i}.txt`)
      fs.writeFileSync(file, generate(contents[i % 4], 512 + ((i * 7919) % (60 * KiB))))
      return file
    })
    fs.writeFileSync(listFile, JSON.stringify(files))
  }
  return listFile
}

/** A file of `size` bytes of CJK text that ends inside a character. */
function endsCut(size) {
  const file = path.join(fixtureDir(), `calibrate-ends-cut-${size}.txt`)
  if (!fs.existsSync(file)) {
    const bytes = Buffer.from(generate('cjk', size + 8))
    let end = size
    while (bytes[end - 1] < 0xe0) end++
    fs.mkdirSync(path.dirname(file), { recursive: true })
    fs.writeFileSync(file, bytes.subarray(0, end))
  }
  return file
}

/** The batch rows: a tree of small files read as a sync batch, an async batch and a Promise.all of single reads. */
const treeRows = () => ['batch', 'async-batch', 'async-all'].map((workload) => ({ group: `${quick ? 500 : 2000} files`, label: workload, workload, file: treeList(quick ? 500 : 2000), calls: quick ? 5 : 10 }))
const valuesOf = (name, values) => Object.fromEntries(values.map((v) => [shown(name, v), { [name]: v }]))

// One row per tuned value of lib/limits.json, by its name there; each
// entry's `calibrate` says which kind.
//
// Crossovers: `off` and `on` are the thresholds' values either side; `onWins`
// says where on the x axis the on side should win ('above' or 'below').
const CROSSOVERS = {
  SPLIT_READ_MIN_BYTES: {
    about: 'a file read and converted by two threads (on) or one (off)',
    workload: 'read',
    rows: () => grid(['ascii', 'latin1', 'utf8_mixed', 'cjk'], quick ? [256 * KiB, 768 * KiB, MiB] : [128 * KiB, 256 * KiB, 512 * KiB, 768 * KiB, MiB, 2 * MiB]),
    off: { SPLIT_READ_MIN_BYTES: NEVER },
    on: { SPLIT_READ_MIN_BYTES: 0 },
    onWins: 'above',
    axis: sizeLabel,
  },
  PARALLEL_MIN_BYTES: {
    about: 'decodeUtf8 of a buffer converted by two threads (on) or one (off)',
    workload: 'native-decode',
    rows: () => grid(['utf8_mixed', 'cjk'], quick ? [2 * MiB, 4 * MiB, 8 * MiB] : [MiB, 2 * MiB, 4 * MiB, 8 * MiB, 16 * MiB]),
    off: { PARALLEL_MIN_BYTES: NEVER },
    on: { PARALLEL_MIN_BYTES: 0 },
    onWins: 'above',
    axis: sizeLabel,
  },
  DENSE_ERROR_SPACING: {
    about: 'decodeUtf8 of 1 MiB with an error every x bytes: dense-error decoder (on) or the SIMD route (off)',
    workload: 'native-decode',
    rows: () => (quick ? [16, 64, 256] : [8, 16, 32, 64, 128, 256, 512]).map((k) => ({ group: 'utf8_mixed 1 MiB', x: k, label: `1 per ${k} B`, file: errorsEvery(k), calls: callsFor(MiB) })),
    off: { DENSE_ERROR_SPACING: 0 },
    on: { DENSE_ERROR_SPACING: NEVER },
    onWins: 'below',
    axis: (x) => `1 per ${x} B`,
  },
  EXTERNAL_FROM_BYTES: {
    about: "a sync read's string external (on) or copied into V8's heap (off), in a loop of reads",
    workload: 'read',
    rows: () => grid(['latin1', 'utf8_mixed', 'cjk'], quick ? [32 * KiB, 128 * KiB, 512 * KiB, MiB] : [32 * KiB, 128 * KiB, 512 * KiB, 768 * KiB, MiB, 2 * MiB, 4 * MiB, 8 * MiB]),
    off: { EXTERNAL_FROM_BYTES: NEVER },
    on: { EXTERNAL_FROM_BYTES: 0, EXTERNAL_HEAP_BELOW: NEVER },
    onWins: 'above',
    axis: sizeLabel,
  },
  EXTERNAL_HEAP_BELOW: {
    about: 'a loop of 1 MiB reads in a heap of x MiB of small objects: strings external (on) or copied (off)',
    workload: 'read',
    rows: () =>
      (quick ? [0, 64, 256] : [0, 32, 64, 128, 256]).map((heap) => ({ group: 'latin1 1 MiB', x: heap * MiB, label: `${heap} MiB`, file: fixture('latin1', MiB), calls: callsFor(MiB), args: ['--heap-mib', String(heap)] })),
    off: { EXTERNAL_FROM_BYTES: NEVER },
    on: { EXTERNAL_FROM_BYTES: 0, EXTERNAL_HEAP_BELOW: NEVER },
    onWins: 'below',
    axis: sizeLabel,
  },
  DECODE_NATIVE_FROM: {
    about: "decodeUtf8 of valid text: the native decoder (on) or Node's own, buffer.utf8Slice (off), per call",
    rows: () => grid(['utf8_mixed', 'cjk'], quick ? [256, 16 * KiB, 256 * KiB] : [64, 256, KiB, 16 * KiB, 64 * KiB, 128 * KiB, 256 * KiB, MiB]),
    workloads: { off: 'node-decode', on: 'native-decode' },
    onWins: 'above',
    axis: sizeLabel,
  },
  DECODE_NATIVE_FROM_IF_CUT: {
    about: "decodeUtf8 of text that ends inside a character: the native decoder (on) or Node's (off)",
    rows: () => (quick ? [64, 256, KiB] : [16, 64, 128, 256, 512, KiB, 4 * KiB]).map((size) => ({ group: 'cjk, cut', x: size, label: sizeLabel(size), file: endsCut(size), calls: callsFor(size) })),
    workloads: { off: 'node-decode', on: 'native-decode' },
    onWins: 'above',
    axis: sizeLabel,
  },
  DECODE_ASCII_TO_NODE_BELOW: {
    about: "decodeUtf8 of ASCII: Node's decoder (on) or the native one (off)",
    rows: () => grid(['ascii'], quick ? [16 * KiB, 256 * KiB, 2 * MiB] : [KiB, 16 * KiB, 64 * KiB, 256 * KiB, MiB, 2 * MiB, 8 * MiB]),
    workloads: { off: 'native-decode', on: 'node-decode' },
    onWins: 'below',
    axis: sizeLabel,
  },
}

// Trade-offs: each value is run, time against peak and idle RSS; what a
// value buys is shown, not a crossover. `rows` may name their own workload.
const TRADE_OFFS = {
  READ_CHUNK_BYTES: {
    about: 'a large ASCII file read in chunks of this size, each checked while in cache',
    rows: () => grid(['ascii'], quick ? [64 * MiB] : [4 * MiB, 64 * MiB]),
    values: [64 * KiB, 256 * KiB, MiB, 4 * MiB],
  },
  DENSE_MIN_ERRORS: {
    about: 'errors in a row, each within DENSE_ERROR_SPACING of the last, before the dense-error decoder takes over',
    workload: 'native-decode',
    rows: () => [32, 4096].map((k) => ({ group: 'utf8_mixed 1 MiB', label: `1 error per ${k} B`, file: errorsEvery(k), calls: callsFor(MiB) })),
    values: [4, 16, 64],
  },
  LEAN_READ_FREED_FROM: {
    about: 'lean mode: from this size a read copied into V8 frees its read buffer first (peak against time)',
    rows: () => grid(['utf8_mixed'], quick ? [8 * MiB] : [2 * MiB, 8 * MiB, 32 * MiB]).map((r) => ({ ...r, args: ['--lean'] })),
    values: [MiB, 4 * MiB, 8 * MiB, NEVER],
  },
  V8_DECODES_INVALID_FROM: {
    about: "a sync read of text invalid from its start: ours or V8's decoder, from this size; time against peak",
    rows: () => grid(['invalid'], quick ? [32 * MiB] : [8 * MiB, 32 * MiB, 64 * MiB]),
    values: [8 * MiB, 32 * MiB, NEVER],
  },
  HEAP_CHECK_EVERY: {
    about: 'how often (in strings) the addon asks the heap size, once strings may be external',
    rows: () => grid(['latin1'], [256 * KiB]).concat(grid(['ascii'], [KiB]).map((r) => ({ ...r, calls: 20000 }))),
    values: [1, 16, 64, 1024],
  },
  SHARED_MIN_BYTES: {
    about: 'buffers from this size are shared between threads; smaller ones stay with their thread',
    rows: () => grid(['cjk'], [256 * KiB]).concat(grid(['utf8_mixed'], [2 * MiB])),
    values: [16 * KiB, 64 * KiB, 256 * KiB],
  },
  MAX_WASTE_FACTOR: {
    about: 'most idle memory behind a pooled buffer, as a factor of what it holds: loop speed against peak and idle RSS',
    rows: () => grid(['utf8_mixed'], [4 * MiB]).map((r) => ({ ...r, args: ['--idle-ms', '1000'] })),
    values: [1, 2, 4],
  },
  KEEP_IDLE_FOR: {
    about: 'how long idle threads and memory stay after the work stops: idle RSS 1 s after a loop',
    rows: () => grid(['utf8_mixed'], [4 * MiB]).map((r) => ({ ...r, args: ['--idle-ms', '1000'] })),
    values: [100, 500, 2000],
  },
  LARGE_STEP_BYTES: {
    about: 'large buffers rounded up to a multiple of this, so one fits the next read of about the same size',
    rows: () => grid(['utf8_mixed'], [3 * MiB, 12 * MiB]),
    values: [256 * KiB, 2 * MiB, 8 * MiB],
  },
  BATCH_WINDOW: { about: 'results a sync batch holds ahead of the JS thread', rows: treeRows, values: [256, 1024, 4096] },
  BATCH_RUN: { about: 'results the JS thread makes into strings at a time (sync batches, and the pool per turn)', rows: treeRows, values: [64, 256, 1024] },
  BATCH_PENDING_MAX_BYTES: { about: 'bytes of results a batch or the pool holds for the JS thread', rows: treeRows, values: [8 * MiB, 32 * MiB, 128 * MiB] },
  BATCH_SPARES: { about: 'small buffers a batch recycles between its readers', rows: treeRows, values: [0, 128, 512] },
  BATCH_MAX_THREADS: { about: 'most reader threads a batch starts (its concurrency option)', rows: treeRows, values: [4, 16, 256] },
  BATCH_DEFAULT_THREADS: { about: 'reader threads by default, at most the cores (and at least libuv\'s four)', rows: treeRows, values: [4, 8, 16] },
  DECODE_ASCII_SAMPLES: {
    about: 'bytes decodeUtf8 samples to guess that a short input is ASCII',
    workload: 'decode',
    rows: () => grid(['ascii', 'utf8_mixed'], [64 * KiB]),
    values: [16, 64, 256],
  },
}

/** Every tuned value of the table has its row here, and every row a value of the table. */
function checkRows() {
  const rows = { crossover: CROSSOVERS, 'trade-off': TRADE_OFFS }
  const problems = []
  for (const [name, entry] of Object.entries(tunedTable)) {
    if (!rows[entry.calibrate]?.[name]) problems.push(`${name} (${entry.calibrate}) has no ${entry.calibrate} row`)
  }
  for (const [kind, list] of Object.entries(rows)) {
    for (const name of Object.keys(list)) if (tunedTable[name]?.calibrate !== kind) problems.push(`the ${kind} row ${name} is no ${kind} of lib/limits.json`)
  }
  if (problems.length) throw new Error(`calibrate: lib/limits.json and benchmark/calibrate.js disagree:\n  ${problems.join('\n  ')}`)
}

/** A threshold's value as the report shows it: sizes as sizes; none where it is never reached. */
function shown(name, value) {
  if (value === undefined || value === null || value >= NEVER || value >= Number.MAX_SAFE_INTEGER) return 'never'
  if (name === 'KEEP_IDLE_FOR') return `${value} ms`
  return /BYTES|BELOW|_FROM$|_FROM_IF_CUT$/.test(name) ? sizeLabel(value) : String(value)
}

function measure(row, variants) {
  const names = Object.keys(variants)
  const runs = inChildren(
    names,
    rounds,
    (name) => [path.join(__dirname, 'calibrate-child.js'), variants[name].workload, row.file, String(row.calls), ...(row.args ?? [])],
    [],
    () => process.execPath,
    (name) => ({ ...process.env, READFILE_UTF8_NATIVE_LIBRARY_PATH: BUILD, READFILE_UTF8_TUNE: Object.entries(variants[name].tune).map(([k, v]) => `${k}=${v}`).join(',') }),
  )
  return Object.fromEntries(
    names.map((name) => [name, { meanNs: median(runs[name].map((r) => r.meanNs)), medianNs: median(runs[name].map((r) => r.medianNs)), peakRss: median(runs[name].map((r) => r.peakRss)), idleRss: median(runs[name].map((r) => r.idleRss)) }]),
  )
}

/** From where the on side wins at every point further along (per group; the last of the groups'). */
function crossover(points, onWins) {
  const ordered = onWins === 'above' ? points : [...points].reverse()
  let from = null
  for (let i = ordered.length - 1; i >= 0 && ordered[i].ratio < 1; i--) from = ordered[i].x
  return from
}

function main() {
  const progress = (text) => process.stderr.write(`${text}\n`)
  checkRows()
  BUILD = benchBuild()
  // This Node line's values, as both the addon and lib/ take them from the table.
  const shipped = require('../lib/limits')
  const picked = (name) => !only || only.some((o) => name.startsWith(o))
  const out = ['#### Calibrate: where each threshold lies on this machine', '', `Each cell: a plain loop of calls in a fresh process, ${rounds} rounds in turns, median of the loop means; ratio: on / off (below 1: on wins).`, '']
  const summary = []
  for (const [name, s] of Object.entries(CROSSOVERS).filter(([n]) => picked(n))) {
    progress(`calibrate: ${name}`)
    const rows = []
    const points = {}
    for (const row of s.rows()) {
      const variants = { off: { workload: s.workloads?.off ?? s.workload, tune: s.off ?? {} }, on: { workload: s.workloads?.on ?? s.workload, tune: s.on ?? {} } }
      const r = measure(row, variants)
      const ratio = r.on.meanNs / r.off.meanNs
      ;(points[row.group] ??= []).push({ x: row.x, ratio })
      rows.push([row.group, row.label, fmtTime(r.off.meanNs), fmtTime(r.on.meanNs), fmtRatio(ratio), fmtRatio(r.on.medianNs / r.off.medianNs)])
    }
    const found = Object.entries(points).map(([group, pts]) => [group, crossover(pts, s.onWins)])
    const says = found.map(([group, x]) => `${group}: ${x === null ? `on never wins at every point ${s.onWins}` : `on wins from ${s.axis(x)} ${s.onWins === 'above' ? 'up' : 'down'}`}`).join('; ')
    summary.push([name, says, shown(name, shipped[name])])
    out.push(`**${name}**: ${s.about}.`, '', table([['group', 'l'], ['x', 'r'], ['off (mean)', 'r'], ['on (mean)', 'r'], ['on / off mean', 'r'], ['on / off median', 'r']], rows), '', `Crossover: ${says}. Shipped: ${shown(name, shipped[name])}.`, '')
  }
  for (const [name, s] of Object.entries(TRADE_OFFS).filter(([n]) => picked(n))) {
    progress(`calibrate: ${name}`)
    const rows = []
    for (const row of s.rows()) {
      const values = valuesOf(name, s.values)
      const variants = Object.fromEntries(Object.entries(values).map(([label, tune]) => [label, { workload: row.workload ?? s.workload ?? 'read', tune }]))
      const r = measure(row, variants)
      const first = Object.keys(values)[0]
      for (const label of Object.keys(values)) {
        rows.push([`${row.group} ${row.label}`, label, fmtTime(r[label].meanNs), fmtRatio(r[label].meanNs / r[first].meanNs), fmtMiB(r[label].peakRss), fmtMiB(r[label].idleRss)])
      }
    }
    summary.push([name, 'trade-off (table)', shown(name, shipped[name])])
    out.push(`**${name}**: ${s.about}.`, '', table([['cell', 'l'], ['value', 'l'], ['mean', 'r'], ['vs first', 'r'], ['peak RSS', 'r'], ['idle RSS', 'r']], rows), '', `Shipped: ${shown(name, shipped[name])}.`, '')
  }
  const facts = Object.entries(limitsTable.facts)
  out.push('**Facts** (of Node, V8 or the platform; not tuned):', '', table([['fact', 'l'], ['value', 'r'], ['what it is', 'l']], facts.map(([n, f]) => [n, shown(n, shipped.facts[n]), f.why ?? ''])), '')
  out.push('**Summary**', '', table([['threshold', 'l'], ['measured here', 'l'], ['shipped', 'l']], summary))
  process.stdout.write(out.join('\n') + '\n')
}

main()
