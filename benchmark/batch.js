'use strict'
// The batch suite (`npm run bench -- --suite batch`, or `node benchmark/batch.js
// [--rounds N] [--no-rss] [--bun path | --no-bun]`): a whole tree of files read into strings, per pass,
// by each contender:
//   loop of fs.readFileSync(p, 'utf8') · loop of readFileUtf8(p) ·
//   readFilesUtf8(paths) at the default concurrency, at 2 and at 1 ·
//   fs.promises.readFile(p, 'utf8') with 64 reads in flight · readFilesUtf8Async(paths).
// Trees: every file under this repo's node_modules, a generated tree of
// source-like files of every content class (made once, deterministically), and
// node_modules' files under 64 KiB alone (the cost per file).
// The contenders take turns round by round; each pass starts after a full GC.
// On node_modules, the main contenders are timed again after a second of
// idleness: what a tool that reads a tree now and then gets. Our buffers have
// then gone back to the system, so each of our strings is made in freshly
// faulted memory (V8 may still hold pages of its own for fs's); the page
// faults per pass are shown.
// CPU ms (all threads of the process) beside wall ms: on a machine shared with
// other work, the wall-clock gain from more threads is only what cores are free.
// With the bench build (`npm run build:bench`), also the batch's read step
// alone on 2 threads and on 1 (no conversion, no string, no GC): how far the
// reads themselves scale on this machine, to judge the batch's scaling by.
// Then how far this machine's cores scale on their own: one and two threads
// each doing the same arithmetic (no memory), and the same copying of buffers
// larger than the caches (memory bandwidth, which every read from the page
// cache spends). Then, each in a fresh process, peak RSS of reading the whole
// node_modules tree (all strings kept) with a loop of fs and with readFilesUtf8.
// Bun's plain readFileSync loop over each tree is timed too, in a Bun process
// of its own right after Node's rounds (`--bun path`, $BUN, or
// scripts/get-runtime.sh bun; `--no-bun` leaves it out).
// Self-contained: it shares no code with the other suites but the addon's
// binary name and how Bun is found.
const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const v8 = require('node:v8')
const vm = require('node:vm')
const { execFileSync, spawnSync } = require('node:child_process')
const { Worker } = require('node:worker_threads')

const { findBinary } = require('../lib/binary-name')
const { findBun } = require('./runtimes')

const ROOT = path.join(__dirname, '..')
const args = process.argv.slice(2)
const ROUNDS = Number(args[args.indexOf('--rounds') + 1]) || 7
const BUN_ARG = args.includes('--bun') ? args[args.indexOf('--bun') + 1] : undefined
const PROMISES_IN_FLIGHT = 64
const SMALL_FILE_BYTES = 64 * 1024

const gc = (() => {
  try {
    v8.setFlagsFromString('--expose-gc')
    return vm.runInNewContext('gc')
  } catch {
    return () => {}
  }
})()

/** Every regular file under `dir` (symlinks to files included), in directory order. */
function walk(dir, out = []) {
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, entry.name)
    if (entry.isDirectory()) walk(p, out)
    else if (entry.isFile() || (entry.isSymbolicLink() && fs.statSync(p, { throwIfNoEntry: false })?.isFile())) {
      out.push(p)
    }
  }
  return out
}

// ---- Bun's loop, in a process of its own. ----

// One pass to warm up, then ROUNDS timed passes, each after a full GC, every
// string of a pass kept until it ends (as the Node contenders keep theirs).
const BUN_LOOP = `
const fs = require('node:fs')
const { files, rounds } = JSON.parse(fs.readFileSync(process.argv[2], 'utf8'))
const passes = []
for (let i = 0; i <= rounds; i++) {
  Bun.gc(true)
  const cpu0 = process.cpuUsage()
  const t0 = performance.now()
  const out = files.map((f) => fs.readFileSync(f, 'utf8'))
  const ms = performance.now() - t0
  const cpu = process.cpuUsage(cpu0)
  if (out.length !== files.length) throw new Error('wrong result length')
  if (i > 0) passes.push({ ms, cpu: (cpu.user + cpu.system) / 1000 })
}
process.stdout.write(JSON.stringify(passes))
`

/** Median ms and CPU ms per pass of Bun's readFileSync loop over `files`. */
function bunLoop(bun, files) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'readfile-utf8-bun-'))
  try {
    const script = path.join(dir, 'loop.js')
    const list = path.join(dir, 'files.json')
    fs.writeFileSync(script, BUN_LOOP)
    fs.writeFileSync(list, JSON.stringify({ files, rounds: ROUNDS }))
    const passes = JSON.parse(execFileSync(bun.bin, [script, list], { encoding: 'utf8', maxBuffer: 1 << 20 }))
    return { ms: median(passes.map((p) => p.ms)), cpu: median(passes.map((p) => p.cpu)) }
  } finally {
    fs.rmSync(dir, { recursive: true, force: true })
  }
}

// ---- The generated tree. ----

const TREE_VERSION = 1
const TREE_FILES = 3000

function treeDir() {
  const base =
    process.env.READFILE_UTF8_CACHE ||
    path.join(process.env.XDG_CACHE_HOME || path.join(os.homedir(), '.cache'), 'readfile-utf8')
  return path.join(base, `batch-tree-v${TREE_VERSION}`)
}

/**
 * A source-like tree: sizes log-normal around 1.5 KiB (a few up to 4 MiB),
 * contents mostly ASCII, then Latin-1-fitting, mixed UTF-8, CJK and invalid.
 */
function ensureTree() {
  const dir = treeDir()
  const done = path.join(dir, '.complete')
  if (fs.existsSync(done)) return walk(dir).filter((f) => !f.endsWith('.complete'))
  fs.rmSync(dir, { recursive: true, force: true })
  let s = 0x9e3779b9
  const rand = () => {
    s ^= s << 13
    s ^= s >>> 17
    s ^= s << 5
    return (s >>> 0) / 2 ** 32
  }
  const pieces = {
    ascii: ['const value = compute(a, b);\n', '  return x + y;\n', '// a comment line\n', 'export {};\n'],
    latin1: ['café ', 'naïve ', 'façade\n', 'x = 1;\n'],
    mixed: ['ascii text ', 'é', '中文', '😀', ' – ', 'ü\n'],
    cjk: ['中文字符', '日本語の', '한국어', '。\n'],
  }
  const kinds = ['ascii', 'ascii', 'ascii', 'ascii', 'ascii', 'ascii', 'latin1', 'mixed', 'cjk', 'invalid']
  for (let i = 0; i < TREE_FILES; i++) {
    // exp(normal(ln 1500, 1.3)), capped at 4 MiB.
    const normal = Math.sqrt(-2 * Math.log(rand() || 1e-9)) * Math.cos(2 * Math.PI * rand())
    const size = Math.min(4 << 20, Math.round(Math.exp(Math.log(1500) + 1.3 * normal)))
    const kind = kinds[Math.floor(rand() * kinds.length)]
    const list = pieces[kind === 'invalid' ? 'mixed' : kind]
    const parts = []
    let length = 0
    while (length < size) {
      const piece = Buffer.from(list[Math.floor(rand() * list.length)])
      parts.push(piece)
      length += piece.length
    }
    const bytes = Buffer.concat(parts).subarray(0, size)
    if (kind === 'invalid') for (let j = 0; j < size; j += 1 + Math.floor(rand() * 2000)) bytes[j] = 0xff
    const sub = path.join(dir, `d${i % 40}`, `e${i % 7}`)
    fs.mkdirSync(sub, { recursive: true })
    fs.writeFileSync(path.join(sub, `f${i}-${kind}.txt`), bytes)
  }
  fs.writeFileSync(done, '')
  return walk(dir).filter((f) => !f.endsWith('.complete'))
}

// ---- Contenders: each reads the whole list and returns the array of strings. ----

/** The bench build's native exports if built (`readFilesLength`: the read step alone), else null. */
function benchBuild() {
  const binary = findBinary(path.join(__dirname, 'bench-build'))
  const native = binary === null ? null : require(binary)
  return typeof native?.readFilesLength === 'function' ? native : null
}

/** Contenders that read the files but make no strings: they return the bytes read. */
const READS_ALONE = 'reads alone'

function contenders(addon, bench) {
  const { readFileUtf8, readFilesUtf8, readFilesUtf8Async } = addon
  const fsPromisesAt = async (files, inFlight) => {
    const out = new Array(files.length)
    let next = 0
    const lane = async () => {
      while (next < files.length) {
        const i = next++
        out[i] = await fs.promises.readFile(files[i], 'utf8')
      }
    }
    await Promise.all(Array.from({ length: Math.min(inFlight, files.length) }, lane))
    return out
  }
  return {
    'fs.readFileSync loop': (files) => files.map((f) => fs.readFileSync(f, 'utf8')),
    'readFileUtf8 loop': (files) => files.map((f) => readFileUtf8(f)),
    readFilesUtf8: (files) => readFilesUtf8(files),
    'readFilesUtf8 c=2': (files) => readFilesUtf8(files, { concurrency: 2 }),
    'readFilesUtf8 c=1': (files) => readFilesUtf8(files, { concurrency: 1 }),
    [`fs.promises.readFile ×${PROMISES_IN_FLIGHT}`]: (files) => fsPromisesAt(files, PROMISES_IN_FLIGHT),
    readFilesUtf8Async: (files) => readFilesUtf8Async(files),
    'readFilesUtf8Async c=1': (files) => readFilesUtf8Async(files, { concurrency: 1 }),
    ...(bench && {
      [`${READS_ALONE} c=2`]: (files) => bench.readFilesLength(files, 0, 2),
      [`${READS_ALONE} c=1`]: (files) => bench.readFilesLength(files, 0, 1),
    }),
  }
}

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b)
  return s.length % 2 ? s[s.length >> 1] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2
}

/** One pass: wall ms, and CPU ms of the whole process (every thread; GC included). */
async function timeOnce(fn, files) {
  gc()
  const cpu0 = process.cpuUsage()
  const t0 = performance.now()
  const out = await fn(files)
  const ms = performance.now() - t0
  const cpu = process.cpuUsage(cpu0)
  if (typeof out !== 'number' && out.length !== files.length) throw new Error('wrong result length')
  return { ms, cpu: (cpu.user + cpu.system) / 1000 }
}

/** Times every contender ROUNDS times over `files`, taking turns (the order rotates each round). */
async function measureTree(name, files, sizes, addon, bench, bun) {
  const list = contenders(addon, bench)
  const names = Object.keys(list)
  const bytes = files.reduce((sum, f) => sum + sizes.get(f), 0)
  // Never time a wrong answer.
  const expected = list['fs.readFileSync loop'](files)
  for (const n of names) {
    const got = await list[n](files)
    if (n.startsWith(READS_ALONE)) {
      if (got !== bytes) throw new Error(`${n}: ${got} bytes read, the files hold ${bytes}`)
      continue
    }
    for (let i = 0; i < files.length; i++) {
      if (got[i] !== expected[i]) throw new Error(`${n}: result for ${files[i]} differs from fs`)
    }
  }
  const times = Object.fromEntries(names.map((n) => [n, []]))
  const cpus = Object.fromEntries(names.map((n) => [n, []]))
  for (let round = 0; round < ROUNDS; round++) {
    for (let k = 0; k < names.length; k++) {
      const n = names[(k + round) % names.length]
      const { ms, cpu } = await timeOnce(list[n], files)
      times[n].push(ms)
      cpus[n].push(cpu)
    }
    process.stderr.write(`  ${name}: round ${round + 1}/${ROUNDS}\r`)
  }
  process.stderr.write('\n')
  const medians = (m) => Object.fromEntries(names.map((n) => [n, median(m[n])]))
  const result = { name, files: files.length, bytes, times: medians(times), cpu: medians(cpus) }
  if (bun) {
    const { ms, cpu } = bunLoop(bun, files)
    result.bunName = `Bun ${bun.version} readFileSync loop`
    result.times[result.bunName] = ms
    result.cpu[result.bunName] = cpu
  }
  return result
}

/**
 * The "vs fs loop" and "vs readFileUtf8 loop" cells of contender `n` taking
 * `ms` a pass, given the medians `t` of the same run (promise-based contenders
 * are set against fs.promises, and against no loop).
 */
function ratioCells(n, ms, t) {
  if (n.startsWith('Bun ')) return [`${(t['fs.readFileSync loop'] / ms).toFixed(2)}× (Node's fs loop)`, '']
  const promisesLike = n.includes('Async') || n.startsWith('fs.promises')
  const base = t[promisesLike ? `fs.promises.readFile ×${PROMISES_IN_FLIGHT}` : 'fs.readFileSync loop']
  return [
    `${(base / ms).toFixed(2)}×${promisesLike ? ' (vs fs.promises)' : ''}`,
    promisesLike ? '' : `${(t['readFileUtf8 loop'] / ms).toFixed(2)}×`,
  ]
}

/** Idle time before a cold pass: longer than the pool keeps unused buffers. */
const COLD_IDLE_MS = 1000
const COLD_CONTENDERS = [
  'fs.readFileSync loop',
  'readFileUtf8 loop',
  'readFilesUtf8',
  `fs.promises.readFile ×${PROMISES_IN_FLIGHT}`,
  'readFilesUtf8Async',
]

/** Times the main contenders over `files`, each pass after COLD_IDLE_MS of idleness and a full GC. */
async function measureCold(files, addon) {
  const list = contenders(addon, null)
  const times = Object.fromEntries(COLD_CONTENDERS.map((n) => [n, []]))
  const faults = Object.fromEntries(COLD_CONTENDERS.map((n) => [n, []]))
  const rounds = Math.max(3, Math.ceil(ROUNDS / 2))
  for (let round = 0; round < rounds; round++) {
    for (let k = 0; k < COLD_CONTENDERS.length; k++) {
      const n = COLD_CONTENDERS[(k + round) % COLD_CONTENDERS.length]
      // The GC first, so that what the last pass held is freed before the idle time.
      gc()
      await new Promise((resolve) => setTimeout(resolve, COLD_IDLE_MS))
      const before = process.resourceUsage().minorPageFault
      const { ms } = await timeOnce(list[n], files)
      times[n].push(ms)
      faults[n].push(process.resourceUsage().minorPageFault - before)
    }
    process.stderr.write(`  cold: round ${round + 1}/${rounds}\r`)
  }
  process.stderr.write('\n')
  const medians = Object.fromEntries(COLD_CONTENDERS.map((n) => [n, median(times[n])]))
  const fsMs = medians['fs.readFileSync loop']
  const promises = medians[`fs.promises.readFile ×${PROMISES_IN_FLIGHT}`]
  return [
    `### node_modules after ${COLD_IDLE_MS} ms idle (median of ${rounds} passes)`,
    '',
    '| contender | ms per pass | page faults per pass | vs fs loop | vs readFileUtf8 loop |',
    '| :--- | ---: | ---: | ---: | ---: |',
    ...COLD_CONTENDERS.map((n) => {
      const cells = [n, medians[n].toFixed(1), median(faults[n]).toFixed(0), ...ratioCells(n, medians[n], medians)]
      return `| ${cells.join(' | ')} |`
    }),
    '',
    `After ${COLD_IDLE_MS} ms idle, readFilesUtf8 is ${(fsMs / medians.readFilesUtf8).toFixed(2)}× the fs loop, ` +
      `readFilesUtf8Async ${(promises / medians.readFilesUtf8Async).toFixed(2)}× fs.promises.readFile ×${PROMISES_IN_FLIGHT}. ` +
      "Idle, our pool has given its buffers back, so every one of our strings is made in fresh memory; " +
      "fs's strings are made in V8's heap, which may keep pages across GCs.",
  ].join('\n')
}

function table(r) {
  const t = r.times
  const fsLoop = t['fs.readFileSync loop']
  const ourLoop = t['readFileUtf8 loop']
  const promises = t[`fs.promises.readFile ×${PROMISES_IN_FLIGHT}`]
  const lines = [
    `### ${r.name}: ${r.files} files, ${(r.bytes / 2 ** 20).toFixed(1)} MiB (median of ${ROUNDS} passes)`,
    '',
    '| contender | ms per pass | CPU ms per pass | µs per file | MiB/s | vs fs loop | vs readFileUtf8 loop |',
    '| :--- | ---: | ---: | ---: | ---: | ---: | ---: |',
  ]
  for (const [n, ms] of Object.entries(t)) {
    const alone = n.startsWith(READS_ALONE)
    // Reads alone make no strings: a ratio to a reader of strings would mislead.
    const ratios = alone ? ['', ''] : ratioCells(n, ms, t)
    const cells = [
      alone ? `${n} (no strings)` : n,
      ms.toFixed(1),
      r.cpu[n].toFixed(1),
      ((ms * 1000) / r.files).toFixed(2),
      (r.bytes / 2 ** 20 / (ms / 1000)).toFixed(0),
      ...ratios,
    ]
    lines.push(`| ${cells.join(' | ')} |`)
  }
  lines.push(
    '',
    `readFilesUtf8: ${(fsLoop / t.readFilesUtf8).toFixed(2)}× the fs loop, ${(ourLoop / t.readFilesUtf8).toFixed(2)}× the readFileUtf8 loop; ` +
      (r.bunName ? `${(t[r.bunName] / t.readFilesUtf8).toFixed(2)}× ${r.bunName} (in its own process); ` : '') +
      `readFilesUtf8Async: ${(promises / t.readFilesUtf8Async).toFixed(2)}× fs.promises.readFile ×${PROMISES_IN_FLIGHT}; ` +
      `scaling (sync) c=2 vs c=1: ${(t['readFilesUtf8 c=1'] / t['readFilesUtf8 c=2']).toFixed(2)}×; ` +
      `c=1 time per file over one readFileUtf8 call's: ${(t['readFilesUtf8 c=1'] / ourLoop).toFixed(2)}×; ` +
      (t[`${READS_ALONE} c=1`] === undefined
        ? 'reads alone: not measured (needs `npm run build:bench`)'
        : `reads alone (no strings, no GC) c=2 vs c=1: ${(t[`${READS_ALONE} c=1`] / t[`${READS_ALONE} c=2`]).toFixed(2)}×`),
  )
  return lines.join('\n')
}

// ---- This machine: how far two threads scale without any file. ----

/** Buffers copied by the memory probe: well beyond any cache. */
const PROBE_COPY_MIB = 64

// Each worker waits at a shared start line, then times one task: so one and
// two threads start together and do the same work each.
const PROBE_WORKER = `
const { parentPort, workerData } = require('node:worker_threads')
const [ready, go] = [new Int32Array(workerData, 0, 1), new Int32Array(workerData, 4, 1)]
const MIB = ${PROBE_COPY_MIB}
const src = Buffer.alloc(MIB << 20, 1)
const dst = Buffer.alloc(MIB << 20)
const tasks = {
  arithmetic(reps) {
    let y = 0x2545f491
    for (let i = 0; i < reps * 1e7; i++) { y ^= y << 13; y ^= y >>> 17; y ^= y << 5 }
    return y
  },
  copy(reps) {
    for (let i = 0; i < reps; i++) { src[i] ^= 1; dst.set(src) }
    return dst[0]
  },
}
tasks.copy(1)
parentPort.on('message', ({ task, reps, round }) => {
  Atomics.add(ready, 0, 1)
  while (Atomics.load(go, 0) !== round) Atomics.wait(go, 0, round - 1, 10)
  const t0 = performance.now()
  const sink = tasks[task](reps)
  parentPort.postMessage({ ms: performance.now() - t0, sink })
})
`

/** Median wall ms of `task` on 1 and on 2 threads, rounds alternating. */
async function probeScaling(workers, shared, task, reps) {
  const [ready, go] = [new Int32Array(shared, 0, 1), new Int32Array(shared, 4, 1)]
  const ms = { 1: [], 2: [] }
  for (let round = 0; round < 2 * ROUNDS; round++) {
    const threads = round % 2 ? 1 : 2
    const generation = Atomics.load(go, 0) + 1
    Atomics.store(ready, 0, 0)
    const done = workers.slice(0, threads).map((w) => new Promise((resolve) => w.once('message', resolve)))
    for (const w of workers.slice(0, threads)) w.postMessage({ task, reps, round: generation })
    while (Atomics.load(ready, 0) < threads) await new Promise((resolve) => setImmediate(resolve))
    Atomics.store(go, 0, generation)
    Atomics.notify(go, 0)
    const times = (await Promise.all(done)).map((r) => r.ms)
    ms[threads].push(Math.max(...times))
  }
  return { one: median(ms[1]), two: median(ms[2]) }
}

async function machineProbe() {
  const shared = new SharedArrayBuffer(8)
  const workers = [0, 1].map(() => new Worker(PROBE_WORKER, { eval: true, workerData: shared }))
  await Promise.all(workers.map((w) => new Promise((resolve) => w.once('online', resolve))))
  try {
    const rows = [
      ['arithmetic (registers only)', await probeScaling(workers, shared, 'arithmetic', 5)],
      [`copying ${PROBE_COPY_MIB} MiB buffers (memory bandwidth)`, await probeScaling(workers, shared, 'copy', 6)],
    ]
    return [
      `### This machine: the same work on 1 and on 2 threads at once (median of ${ROUNDS})`,
      '',
      '| work, per thread | 1 thread ms | 2 threads ms | throughput 2 vs 1 |',
      '| :--- | ---: | ---: | ---: |',
      ...rows.map(([name, t]) => `| ${name} | ${t.one.toFixed(1)} | ${t.two.toFixed(1)} | ${((2 * t.one) / t.two).toFixed(2)}× |`),
      '',
      'Every read copies its bytes out of the page cache: where large files make up most of a tree, ' +
        'its batch scales toward the second row, not the first.',
    ].join('\n')
  } finally {
    await Promise.all(workers.map((w) => w.terminate()))
  }
}

// ---- Peak RSS, each reader in a fresh process. ----

// VmHWM, not resourceUsage().maxRSS: Linux carries ru_maxrss over from the
// parent across fork and exec, so a child would report the bench's own peak.
const RSS_CHILD = `
const fs = require('node:fs')
const peak = () => Number(/VmHWM:\\s*(\\d+) kB/.exec(fs.readFileSync('/proc/self/status', 'utf8'))[1]) * 1024
const files = JSON.parse(fs.readFileSync(0, 'utf8'))
const addon = require(${JSON.stringify(ROOT)})
const readers = {
  fs: (f) => f.map((p) => fs.readFileSync(p, 'utf8')),
  readFileUtf8: (f) => f.map((p) => addon.readFileUtf8(p)),
  readFilesUtf8: (f) => addon.readFilesUtf8(f),
  readFilesUtf8Async: (f) => addon.readFilesUtf8Async(f),
  nothing: (f) => f,
}
Promise.resolve(readers[process.argv[1]](files)).then((kept) => {
  process.stdout.write(JSON.stringify({ maxRSS: peak(), kept: kept.length }))
})
`

function peakRss(files) {
  const rows = []
  for (const reader of ['fs', 'readFileUtf8', 'readFilesUtf8', 'readFilesUtf8Async']) {
    const r = spawnSync(process.execPath, ['-e', RSS_CHILD, reader], { input: JSON.stringify(files), encoding: 'utf8' })
    if (r.status !== 0) throw new Error(`peak RSS child (${reader}) failed: ${r.stderr}`)
    rows.push({ reader, ...JSON.parse(r.stdout) })
  }
  // The same process with nothing read: the baseline.
  const base = spawnSync(process.execPath, ['-e', RSS_CHILD, 'nothing'], { input: '[]', encoding: 'utf8' })
  const baseline = JSON.parse(base.stdout).maxRSS
  return [
    `### Peak RSS reading all ${files.length} node_modules files, every string kept (fresh process each)`,
    '',
    '| reader | peak RSS MiB | above an idle process MiB |',
    '| :--- | ---: | ---: |',
    ...rows.map((r) => `| ${r.reader} | ${(r.maxRSS / 2 ** 20).toFixed(0)} | ${((r.maxRSS - baseline) / 2 ** 20).toFixed(0)} |`),
  ].join('\n')
}

async function main() {
  const addon = require('..')
  const bench = benchBuild()
  const bun = findBun({ given: BUN_ARG, skip: args.includes('--no-bun'), suite: 'batch' })
  const cores = typeof os.availableParallelism === 'function' ? os.availableParallelism() : os.cpus().length
  console.log(
    `Node ${process.version}, ${os.cpus()[0]?.model ?? 'cpu'}, ${cores} cores available, load ${os.loadavg()[0].toFixed(2)}; ` +
      `engine ${addon.engine()}; readFilesUtf8 default concurrency = min(cores, 16)\n`,
  )
  const nodeModules = walk(path.join(ROOT, 'node_modules'))
  process.stderr.write('generating / checking the fixture tree...\n')
  const tree = ensureTree()
  // Page-cache warm for everyone: a first read of each file, which sizes it.
  const sizes = new Map([...nodeModules, ...tree].map((f) => [f, fs.readFileSync(f).length]))
  // Small files alone: where a batch's cost per file, not per byte, shows.
  const small = nodeModules.filter((f) => sizes.get(f) < SMALL_FILE_BYTES)
  for (const [name, files] of [
    ['node_modules', nodeModules],
    ['generated tree', tree],
    [`node_modules files under ${SMALL_FILE_BYTES >> 10} KiB`, small],
  ]) {
    console.log(`${table(await measureTree(name, files, sizes, addon, bench, bun))}\n`)
    if (files === nodeModules) console.log(`${await measureCold(files, addon)}\n`)
  }
  console.log(`${await machineProbe()}\n`)
  if (!args.includes('--no-rss')) console.log(peakRss(nodeModules))
}

main().catch((err) => {
  process.stderr.write(`${err.stack || err}\n`)
  process.exitCode = 1
})
