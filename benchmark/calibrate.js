'use strict'
// calibrate: where each threshold of src/limits.rs (and decodeUtf8's routes in
// lib/decode.js) lies on this machine and this Node. Each threshold is swept
// with the bench build (`npm run build:bench`, which reads its thresholds from
// READFILE_UTF8_TUNE): the same plain loop of calls, each variant in a fresh
// process, in turns (A B A B …), and the median of the rounds' loop means.
//
// A crossover prints the point from which one side wins at every larger (or
// smaller) point of the sweep, beside the value we ship; a trade-off prints
// time, peak and idle RSS per value; a policy prints what it bounds and why
// it is not a crossover.
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
    shipped: (t) => sizeLabel(t.SPLIT_READ_MIN_BYTES),
    axis: sizeLabel,
  },
  PARALLEL_MIN_BYTES: {
    about: 'decodeUtf8 of a buffer converted by two threads (on) or one (off)',
    workload: 'decode',
    rows: () => grid(['utf8_mixed', 'cjk'], quick ? [2 * MiB, 4 * MiB, 8 * MiB] : [MiB, 2 * MiB, 4 * MiB, 8 * MiB, 16 * MiB]),
    off: { PARALLEL_MIN_BYTES: NEVER },
    on: { PARALLEL_MIN_BYTES: 0 },
    onWins: 'above',
    shipped: (t) => sizeLabel(t.PARALLEL_MIN_BYTES),
    axis: sizeLabel,
  },
  'EXTERNAL_FROM.bytes': {
    about: "a sync read's string external (on) or copied into V8's heap (off), in a loop of reads",
    workload: 'read',
    rows: () => grid(['latin1', 'utf8_mixed', 'cjk'], quick ? [32 * KiB, 128 * KiB, 512 * KiB, MiB] : [32 * KiB, 128 * KiB, 512 * KiB, 768 * KiB, MiB, 2 * MiB, 4 * MiB, 8 * MiB]),
    off: { 'EXTERNAL_FROM.bytes': NEVER },
    on: { 'EXTERNAL_FROM.bytes': 0, 'EXTERNAL_FROM.heap_below': NEVER },
    onWins: 'above',
    shipped: (t) => sizeLabel(t['EXTERNAL_FROM.bytes']),
    axis: sizeLabel,
  },
  'EXTERNAL_FROM.heap_below': {
    about: 'a loop of 1 MiB reads in a heap of x MiB of small objects: strings external (on) or copied (off)',
    workload: 'read',
    rows: () =>
      (quick ? [0, 64, 256] : [0, 32, 64, 128, 256]).map((heap) => ({ group: 'latin1 1 MiB', x: heap, label: `${heap} MiB`, file: fixture('latin1', MiB), calls: callsFor(MiB), args: ['--heap-mib', String(heap)] })),
    off: { 'EXTERNAL_FROM.bytes': NEVER },
    on: { 'EXTERNAL_FROM.bytes': 0, 'EXTERNAL_FROM.heap_below': NEVER },
    onWins: 'below',
    shipped: (t) => shown('heap_below', t['EXTERNAL_FROM.heap_below']),
    axis: (x) => `${x} MiB`,
  },
  DENSE_ERROR_SPACING: {
    about: 'decodeUtf8 of 1 MiB with an error every x bytes: dense-error decoder (on) or the SIMD route (off)',
    workload: 'decode',
    rows: () => (quick ? [16, 64, 256] : [8, 16, 32, 64, 128, 256, 512]).map((k) => ({ group: 'utf8_mixed 1 MiB', x: k, label: `1 per ${k} B`, file: errorsEvery(k), calls: callsFor(MiB) })),
    off: { DENSE_ERROR_SPACING: 0 },
    on: { DENSE_ERROR_SPACING: NEVER },
    onWins: 'below',
    shipped: (t) => `1 per ${t.DENSE_ERROR_SPACING} B`,
    axis: (x) => `1 per ${x} B`,
  },
  'decodeUtf8 routes (lib/decode.js)': {
    about: "decodeUtf8's native decoder (on) or Node's own, buffer.utf8Slice (off), per call",
    rows: () => grid(['ascii', 'utf8_mixed'], quick ? [KiB, 64 * KiB, 1 * MiB] : [256, KiB, 16 * KiB, 64 * KiB, 128 * KiB, 256 * KiB, MiB]),
    workloads: { off: 'node-decode', on: 'native-decode' },
    off: {},
    on: {},
    onWins: 'above',
    shipped: () => {
      const { ROUTES, routesFor } = require('../lib/decode')
      const r = ROUTES && routesFor ? routesFor(process.versions.node) : null
      return r ? `valid text from ${sizeLabel(r.all)}, ASCII from ${sizeLabel(Math.max(r.all, r.asciiBelow))}` : 'see lib/decode.js'
    },
    axis: sizeLabel,
  },
}

// Trade-offs: each value is run; what it buys is shown, not a crossover.
const TRADE_OFFS = {
  V8_DECODES_INVALID_FROM: {
    about: "a sync read of text invalid from its start: ours (off) or V8's decoder (on); time against peak",
    rows: () => grid(['invalid'], quick ? [32 * MiB] : [8 * MiB, 32 * MiB, 64 * MiB]),
    values: { ours: { V8_DECODES_INVALID_FROM: NEVER }, 'V8 decodes': { V8_DECODES_INVALID_FROM: 0 } },
  },
  READ_CHUNK_BYTES: {
    about: 'a large ASCII file read in chunks of this size, each checked while in cache',
    rows: () => grid(['ascii'], [4 * MiB, 64 * MiB]),
    values: Object.fromEntries([64 * KiB, 256 * KiB, MiB, 4 * MiB].map((v) => [sizeLabel(v), { READ_CHUNK_BYTES: v }])),
  },
  HEAP_CHECK_EVERY: {
    about: 'how often (in calls) JS tells the addon the heap size, once strings may be external',
    rows: () => grid(['latin1'], [256 * KiB]).concat(grid(['ascii'], [KiB]).map((r) => ({ ...r, calls: 20000 }))),
    values: Object.fromEntries([1, 16, 64, 1024].map((v) => [String(v), { HEAP_CHECK_EVERY: v }])),
  },
  SHARED_MAX_BYTES: {
    about: 'most memory the pool keeps idle: loop speed against peak and idle RSS (after 1 s)',
    rows: () => grid(['utf8_mixed'], [4 * MiB]).map((r) => ({ ...r, args: ['--idle-ms', '1000'] })),
    values: Object.fromEntries([0, 16 * MiB, 64 * MiB, 256 * MiB].map((v) => [sizeLabel(v), { SHARED_MAX_BYTES: v }])),
  },
}

// Policies: bounds on memory, threads or work, or facts of the platform; each
// says what a different value trades, and which suite shows it.
const POLICIES = {
  STACK_PATH_BYTES: 'paths up to this long skip a heap copy; any length works (fact: most paths are short)',
  PAGE_BYTES: "the system's page (fact)",
  DENSE_MIN_ERRORS: 'a short burst of errors does not switch decoders (policy: DENSE_ERROR_SPACING is the crossover)',
  'EXTERNAL_FROM.lean_units': "fs's own rule on this Node, for the lean mode (fact of Node's)",
  'EXTERNAL_FROM.read_freed_from': 'lean mode: a copied large read frees its buffer first (memory suite, --memory-mode lean)',
  SHARED_MIN_BYTES: "smaller buffers stay with their thread (policy; glibc's own cache ends far below)",
  LOCAL_KEEP: 'small buffers a thread keeps: a read buffer and a conversion in use at once (fact of the pipeline)',
  MAX_WASTE_FACTOR: 'most idle memory behind a pooled string, as a factor (memory bound)',
  KEEP_IDLE_FOR: 'how soon idle memory goes back after the work stops (memory suite: idle RSS)',
  LARGE_STEP_BYTES: 'large buffers rounded up so one fits the next read of about the same size (address space only)',
  BATCH_WINDOW: 'results a batch holds for the JS thread (memory bound; batch suite)',
  BATCH_PENDING_MAX_BYTES: 'bytes a batch holds unread by JS (memory bound; batch suite)',
  BATCH_SPARES: 'small buffers a batch recycles between its readers (batch suite)',
  BATCH_MAX_THREADS: 'most reader threads a batch starts (bound)',
}

/** A threshold's value as the report shows it: sizes as sizes; none where it is never reached. */
function shown(name, value) {
  if (value === undefined || value === null || value >= NEVER || value >= Number.MAX_SAFE_INTEGER) return 'never'
  return /BYTES|FROM|bytes|below|from/.test(name.split('.').pop()) ? sizeLabel(value) : String(value)
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
  BUILD = benchBuild()
  const shipped = (() => {
    const env = { ...process.env, READFILE_UTF8_NATIVE_LIBRARY_PATH: BUILD }
    const out = spawnSync(process.execPath, ['-p', "JSON.stringify(require('./lib/native').thresholds())"], { cwd: path.join(__dirname, '..'), env, encoding: 'utf8' })
    return JSON.parse(out.stdout)
  })()
  const picked = (name) => !only || only.some((o) => name.startsWith(o))
  const out = ['#### Calibrate: where each threshold lies on this machine', '', `Each cell: a plain loop of calls in a fresh process, ${rounds} rounds in turns, median of the loop means; ratio: on / off (below 1: on wins).`, '']
  const summary = []
  for (const [name, s] of Object.entries(CROSSOVERS).filter(([n]) => picked(n))) {
    progress(`calibrate: ${name}`)
    const rows = []
    const points = {}
    for (const row of s.rows()) {
      const variants = { off: { workload: s.workloads?.off ?? s.workload, tune: s.off }, on: { workload: s.workloads?.on ?? s.workload, tune: s.on } }
      const r = measure(row, variants)
      const ratio = r.on.meanNs / r.off.meanNs
      ;(points[row.group] ??= []).push({ x: row.x, ratio })
      rows.push([row.group, row.label, fmtTime(r.off.meanNs), fmtTime(r.on.meanNs), fmtRatio(ratio), fmtRatio(r.on.medianNs / r.off.medianNs)])
    }
    const found = Object.entries(points).map(([group, pts]) => [group, crossover(pts, s.onWins)])
    const says = found.map(([group, x]) => `${group}: ${x === null ? `on never wins at every point ${s.onWins}` : `on wins from ${s.axis(x)} ${s.onWins === 'above' ? 'up' : 'down'}`}`).join('; ')
    summary.push([name, says, s.shipped(shipped)])
    out.push(`**${name}**: ${s.about}.`, '', table([['group', 'l'], ['x', 'r'], ['off (mean)', 'r'], ['on (mean)', 'r'], ['on / off mean', 'r'], ['on / off median', 'r']], rows), '', `Crossover: ${says}. Shipped: ${s.shipped(shipped)}.`, '')
  }
  for (const [name, s] of Object.entries(TRADE_OFFS).filter(([n]) => picked(n))) {
    progress(`calibrate: ${name}`)
    const rows = []
    for (const row of s.rows()) {
      const variants = Object.fromEntries(Object.entries(s.values).map(([label, tune]) => [label, { workload: 'read', tune }]))
      const r = measure(row, variants)
      const first = Object.keys(s.values)[0]
      for (const label of Object.keys(s.values)) {
        rows.push([`${row.group} ${row.label}`, label, fmtTime(r[label].meanNs), fmtRatio(r[label].meanNs / r[first].meanNs), fmtMiB(r[label].peakRss), fmtMiB(r[label].idleRss)])
      }
    }
    summary.push([name, 'trade-off (table)', shown(name, shipped[name])])
    out.push(`**${name}**: ${s.about}.`, '', table([['cell', 'l'], ['value', 'l'], ['mean', 'r'], ['vs first', 'r'], ['peak RSS', 'r'], ['idle RSS', 'r']], rows), '', `Shipped: ${shown(name, shipped[name])}.`, '')
  }
  const policies = Object.entries(POLICIES).filter(([n]) => picked(n))
  if (policies.length) out.push('**Policies and facts** (not crossovers):', '', table([['threshold', 'l'], ['value', 'r'], ['what it bounds', 'l']], policies.map(([n, why]) => [n, shown(n, shipped[n]), why])), '')
  out.push('**Summary**', '', table([['threshold', 'l'], ['measured here', 'l'], ['shipped', 'l']], summary))
  process.stdout.write(out.join('\n') + '\n')
}

main()
