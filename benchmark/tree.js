'use strict'
// tree: a whole directory read into strings once, in a fresh process, as a CLI
// reads its tree; each way of reading it in processes of its own, median of
// --runs processes. `npm run bench -- --suite tree [--dir D]`, or
//
//   node benchmark/tree.js [--dir D] [--runs n] [--passes n] [--in-flight n] [--bun path | --no-bun] [--quick]
//
// D defaults to this repo's node_modules. The list of files (file-list.js) is
// made once and handed to every process. Ways: on this Node, fs's loop, fs's
// promises (all at once, and --in-flight at a time), the same two through the
// register hook, and ours four ways plus a pool of single async reads; on
// Bun, its own fs three ways and our batch. Then, in processes of their own,
// the first pass against the steady state (--passes batches in one process),
// and the read floor of the same list (the bench build's readFilesLength:
// open + fstat + read into one reused buffer + close, on one thread and on
// two). Every way's strings are checked against fs's once, before the timing.
const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const crypto = require('node:crypto')
const { spawnSync } = require('node:child_process')
const { pathToFileURL } = require('node:url')

const { findBinary } = require('../lib/binary-name')
const { regularFiles, writeTemp, shownPath } = require('./file-list')
const { fmtMiB, table } = require('./format')
const { suiteOptions } = require('./options')
const { findBun } = require('./runtimes')
const { median } = require('./timing')

const ROOT = path.join(__dirname, '..')
const opts = suiteOptions('tree.js', {
  dir: { type: 'string' },
  runs: { type: 'string' },
  passes: { type: 'string' },
  'in-flight': { type: 'string' },
  bun: { type: 'string' },
  'no-bun': { type: 'boolean', default: false },
})
// Under `npm run`, the working directory is the repo's; INIT_CWD is where the command was typed.
const DIR = opts.values.dir === undefined ? path.join(ROOT, 'node_modules') : path.resolve(process.env.INIT_CWD ?? process.cwd(), opts.values.dir)
const RUNS = Math.round(opts.number('runs', 7, 3))
const PASSES = Math.max(2, Math.round(opts.number('passes', 9, 5)))
const IN_FLIGHT = Math.round(opts.number('in-flight', 64))
const CHILD = path.join(__dirname, 'tree-child.js')
const HOOK = ['--import', pathToFileURL(path.join(ROOT, 'register.mjs')).href]

/** The table's columns: each a reader of tree-child.js on a runtime, keyed by what the column names. */
function columns() {
  const pool = `×${IN_FLIGHT}`
  return [
    { key: 'fs-loop', head: 'fs loop', reader: 'fs-loop', bun: true },
    { key: 'fs-promises-all', head: 'fs.promises `Promise.all`', reader: 'fs-promises-all', bun: true },
    { key: 'fs-promises-pool', head: `fs.promises ${pool}`, reader: 'fs-promises-pool', bun: true },
    { key: 'hook-all', head: 'hook `Promise.all`', reader: 'fs-promises-all', hook: true },
    { key: 'hook-pool', head: `hook ${pool}`, reader: 'fs-promises-pool', hook: true },
    { key: 'ours-loop', head: 'ours: loop', reader: 'ours-loop' },
    { key: 'ours-batch', head: '`readFilesUtf8`', reader: 'ours-batch', bun: true },
    { key: 'ours-async-all', head: '`readFileUtf8Async` `Promise.all`', reader: 'ours-async-all' },
    { key: 'ours-async-pool', head: `\`readFileUtf8Async\` ${pool}`, reader: 'ours-async-pool' },
    { key: 'ours-async-batch', head: '`readFilesUtf8Async`', reader: 'ours-async-batch' },
  ]
}

/** Runs one tree-child.js process; its JSON. */
function child({ runtime, reader, hook = false }, list, more = []) {
  const args = [...(hook ? HOOK : []), CHILD, reader, list, '--in-flight', String(IN_FLIGHT), '--passes', String(PASSES), ...(hook ? ['--hook'] : []), ...more]
  const r = spawnSync(runtime.bin, args, { encoding: 'utf8', maxBuffer: 1 << 30 })
  if (r.status !== 0) throw new Error(`${runtime.name} ${reader}${hook ? ' (hook)' : ''} failed (${r.status ?? r.signal}): ${r.stderr}`)
  return JSON.parse(r.stdout)
}

const digest = (s) => crypto.createHash('sha256').update(Buffer.from(s, 'utf16le')).digest('hex')

/** The files fs reads as strings, with fs's strings' digests and the bytes; the ones fs cannot read are left out. */
function oracle(candidates) {
  const files = []
  const digests = []
  const left = []
  let bytes = 0
  for (const f of candidates) {
    try {
      const s = fs.readFileSync(f, 'utf8')
      digests.push(digest(s))
      bytes += fs.statSync(f).size
      files.push(f)
    } catch (err) {
      left.push(`${shownPath(f)} (${err.code ?? err.message})`)
    }
  }
  return { files, digests, bytes, left }
}

/** Checks each contender's strings (or the floor's byte count) against fs's, in a process of its own. */
function check(contenders, list, truth) {
  for (const c of contenders) {
    if (c.reader === 'steady') continue // the same batch as `readFilesUtf8`, checked there
    process.stderr.write(`tree: checking ${c.label}\n`)
    const got = child(c, list, ['--check'])
    if (c.reader === 'floor') {
      if (got.bytes !== truth.bytes) throw new Error(`read floor: ${got.bytes} bytes read, the files hold ${truth.bytes}`)
      continue
    }
    const bad = truth.digests.findIndex((d, i) => got.digests[i] !== d)
    if (got.digests.length !== truth.files.length || bad !== -1) {
      throw new Error(`${c.label}: the string of ${shownPath(truth.files[Math.max(bad, 0)])} differs from fs.readFileSync(p, 'utf8')'s`)
    }
  }
}

const ms = (v) => (v === undefined ? '—' : v >= 100 ? v.toFixed(0) : v.toFixed(1))
const spread = (runs) => (runs?.length ? ratio(Math.max(...runs.map((r) => r.ms)), Math.min(...runs.map((r) => r.ms))) : '—')
const ratio = (a, b) => (a === undefined || b === undefined ? '—' : `${(a / b).toFixed(2)}×`)

function main() {
  if (!fs.statSync(DIR, { throwIfNoEntry: false })?.isDirectory()) throw new Error(`--dir ${DIR}: not a directory`)
  process.stderr.write(`tree: listing ${DIR}\n`)
  const truth = oracle(regularFiles(DIR))
  if (truth.files.length === 0) throw new Error(`no file fs can read under ${DIR}`)
  const node = { name: `Node ${process.version}`, bin: process.execPath }
  const bunFound = findBun({ given: opts.values.bun, skip: opts.values['no-bun'], suite: 'tree' })
  const bun = bunFound && { name: `Bun ${bunFound.version}`, bin: bunFound.bin }
  const floorBuilt = findBinary(path.join(__dirname, 'bench-build')) !== null
  if (!floorBuilt) process.stderr.write('tree: no bench build, so no read floor (npm run build:bench makes it)\n')

  const cols = columns()
  const contenders = [
    ...cols.map((c) => ({ ...c, runtime: node, label: `${node.name} ${c.head}` })),
    ...(bun ? cols.filter((c) => c.bun).map((c) => ({ ...c, key: `bun ${c.key}`, runtime: bun, label: `${bun.name} ${c.head}` })) : []),
    { key: 'steady', reader: 'steady', runtime: node, label: `${node.name} readFilesUtf8 ×${PASSES}` },
    ...(floorBuilt ? [{ key: 'floor', reader: 'floor', runtime: node, label: `${node.name} read floor` }] : []),
  ]
  const { file: list, remove } = writeTemp('files.json', truth.files)
  try {
    check(contenders, list, truth)
    const results = Object.fromEntries(contenders.map((c) => [c.key, []]))
    for (let run = 0; run < RUNS; run++) {
      process.stderr.write(`tree: run ${run + 1}/${RUNS}\n`)
      for (let k = 0; k < contenders.length; k++) {
        const c = contenders[(k + run) % contenders.length]
        results[c.key].push(child(c, list))
      }
    }
    process.stdout.write(report({ truth, node, bun, cols, results, floorBuilt }))
  } finally {
    remove()
  }
}

function report({ truth, node, bun, cols, results, floorBuilt }) {
  const med = (key) => (results[key]?.length ? median(results[key].map((r) => r.ms)) : undefined)
  const t = Object.fromEntries(cols.map((c) => [c.key, med(c.key)]))
  const b = bun ? Object.fromEntries(cols.filter((c) => c.bun).map((c) => [c.key, med(`bun ${c.key}`)])) : {}
  const cores = typeof os.availableParallelism === 'function' ? os.availableParallelism() : os.cpus().length
  const out = [
    `#### tree: every file under \`${shownPath(DIR)}\`, read once in a fresh process`,
    '',
    `${truth.files.length} files, ${fmtMiB(truth.bytes)} (${truth.bytes} bytes): regular files, sorted; symlinks followed as fs follows them ` +
      '(each directory walked once)' +
      (truth.left.length ? `; ${truth.left.length} that fs could not read left out (${truth.left.slice(0, 3).join(', ')}${truth.left.length > 3 ? ', …' : ''})` : '') +
      `. ${node.name}${bun ? `, ${bun.name}` : ', no Bun'}; ${os.cpus()[0]?.model ?? 'CPU'}, ${cores} cores available, load ${os.loadavg()[0].toFixed(2)} at the end.`,
    '',
    `Each cell: ms of one pass over the list (timed inside the process, from the first read to the last string, every string kept), ` +
      `median of ${RUNS} fresh processes, the ways taking turns process by process. fs loop: \`fs.readFileSync(p, 'utf8')\` file after file; ` +
      "fs.promises: `fs.promises.readFile(p, 'utf8')`; ours: loop: `readFileUtf8(p)` file after file; " +
      `\`Promise.all\`: every read started at once; ×${IN_FLIGHT}: a pool of ${IN_FLIGHT} reads in flight, each lane starting the next file when its read ends. ` +
      'hook: fs.promises in a process started with `--import readfile-utf8/register`, so that `fs.promises.readFile` is ours ' +
      "(the path ESLint, Vite and Rollup take). Bun's row: its own fs, and our `readFilesUtf8` loaded into Bun. " +
      'spread: the slowest process over the fastest, per column.',
    '',
    table(
      [['runtime', 'l'], ...cols.map((c) => [c.head, 'r'])],
      [
        [node.name, ...cols.map((c) => ms(t[c.key]))],
        [`${node.name} spread`, ...cols.map((c) => spread(results[c.key]))],
        bun ? [`${bun.name} (its fs; ours)`, ...cols.map((c) => ms(b[c.key]))] : ['Bun: not run (--no-bun, or none found)', ...cols.map(() => '—')],
      ],
    ),
    '',
  ]
  const bunBest = bun ? Math.min(b['fs-loop'], b['fs-promises-all']) : undefined
  const batchAsync = t['ours-async-batch']
  out.push(
    `\`readFilesUtf8\`: ${ratio(t['fs-loop'], t['ours-batch'])} the fs loop` +
      (bun ? `, ${ratio(bunBest, t['ours-batch'])} Bun's best way (the faster of its loop and its \`Promise.all\`)` : '') +
      `. Over \`readFilesUtf8Async\`'s time: \`Promise.all\` of \`readFileUtf8Async\` ${ratio(t['ours-async-all'], batchAsync)}, ` +
      `${IN_FLIGHT} in flight ${ratio(t['ours-async-pool'], batchAsync)}; the hook's \`Promise.all\` of \`fs.promises.readFile\` ${ratio(t['hook-all'], batchAsync)}, ` +
      `${IN_FLIGHT} in flight ${ratio(t['hook-pool'], batchAsync)}. The hook against fs's own \`fs.promises.readFile\`: ` +
      `${ratio(t['fs-promises-all'], t['hook-all'])} (\`Promise.all\`), ${ratio(t['fs-promises-pool'], t['hook-pool'])} (${IN_FLIGHT} in flight).`,
    '',
  )

  // The first pass against the steady state.
  const passes = Array.from({ length: PASSES }, (_, i) => median(results.steady.map((r) => r.passes[i])))
  const tail = Math.ceil(PASSES / 2)
  const steady = median(passes.slice(PASSES - tail))
  out.push(
    `First pass against the steady state: \`readFilesUtf8\` over the list ${PASSES} times in one process, each pass's strings dropped; ` +
      `ms of each pass, median of ${RUNS} processes.`,
    '',
    table(
      [['pass', 'l'], ...passes.map((_, i) => [String(i + 1), 'r'])],
      [[`${node.name} \`readFilesUtf8\``, ...passes.map(ms)]],
    ),
    '',
    `The first pass takes ${ratio(passes[0], steady)} the steady pass (the median of passes ${PASSES - tail + 1}–${PASSES}).`,
    '',
  )

  if (floorBuilt) {
    const steadyOf = (k) => median(results.floor.map((r) => median(r[k].slice(1))))
    const [c1, c2] = [steadyOf('c1'), steadyOf('c2')]
    out.push(
      'Read floor of the same list: the bench build\'s `readFilesLength` (`npm run build:bench`), which opens, fstats, reads into one reused ' +
        'buffer per thread and closes each file: no string, no GC. ' +
        `ms per pass (in each process the median of passes 2–${PASSES} of each, one and two threads alternating; then the median of ${RUNS} processes).`,
      '',
      table(
        [['read floor', 'l'], ['1 thread', 'r'], ['2 threads', 'r']],
        [[node.name, ms(c1), ms(c2)]],
      ),
      '',
      `\`readFilesUtf8\`'s first pass takes ${ratio(t['ours-batch'], c2)} the two-thread floor, its steady pass ${ratio(steady, c2)}.`,
      '',
    )
  } else {
    out.push('Read floor: not measured (it needs the bench build: `npm run build:bench`).', '')
  }
  out.push(
    `Checked before the timing: in a process of its own, every way's strings equal \`fs.readFileSync(p, 'utf8')\`'s in this process, ` +
      'file by file (by SHA-256 of their UTF-16 code units, so that Bun\'s are checked too)' +
      (floorBuilt ? "; the floor's bytes add up to the files' sizes." : '.'),
  )
  return `${out.join('\n')}\n`
}

try {
  main()
} catch (err) {
  process.stderr.write(`${err.stack || err}\n`)
  process.exitCode = 1
}
