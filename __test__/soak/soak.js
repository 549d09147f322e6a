'use strict'
// npm run soak [-- --reads N] [--concurrency C] [--failures F] [--too-long T] [--phases a,b]
//
// Soak and memory checks, each phase in a fresh Node process (so its peak RSS
// is its own), thresholds asserted, exit status 1 if any is missed:
//   sync     N reads (default 10^5) of 1 MiB files of every class, nothing kept,
//            in the default (fast) memory mode (external strings),
//            each string === fs.readFileSync's: peak RSS under the engine's
//            limit (PEAK_RSS_LIMIT_MiB); after a full GC at each eighth of the run, the
//            external memory V8 counts (ours: the strings' buffers) back where
//            it was at the first (± 1 MiB: no string kept, accounting balanced);
//            RSS after a full GC and IDLE_MS idle at the end ≤ the same
//            half-way + GROWTH_TOLERANCE_MiB (no buffer leaked).
//   async    the same with readFileUtf8Async, C (default 64) reads in flight.
//   fds      F failing reads (default 10^4: ENOENT, EISDIR, ENOTDIR, EBADF,
//            sync, async and callback) and T reads of kMaxLength-byte files
//            (ERR_STRING_TOO_LONG): /proc/self/fd count unchanged.
//   toolong  T reads of a kMaxLength-byte file (ERR_STRING_TOO_LONG, fs's
//            error): peak RSS at most one copy of the file above where it
//            started, and RSS back down after GC each time.
//   giveback the same work done by us and by fs, each in a process of its own:
//            loops of sync reads (--giveback-sizes MiB × five text classes),
//            async reads of 4 MiB files at concurrency C, decodeUtf8 of 4 MiB
//            buffers. RSS after the work, a full GC and IDLE_MS idle within
//            IDLE_EXTRA_MiB of fs's; async peak RSS at most fs.promises'; sync
//            and decode peaks (the default, fast mode) within the default's
//            bound (defaultPeakBound: V8 collects dead external strings only
//            once their memory has grown by its step, so loops of large reads
//            peak above fs), every class (a workload that misses one is run
//            again, up to reruns.js's MOST_RUNS, and judged on each side's
//            lowest figures). The sync and decode work again in the lean
//            memory mode (setMemoryMode('lean')): its idle RSS is judged as
//            ours, its peaks at most COPIED_PEAK_RATIO × fs's.
//            --giveback-reads N per workload (--giveback-async-reads for the
//            async ones, default the same).
// `--json` prints the figures as one JSON line (used by __test__/soak.slow.js).
const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const { spawnSync } = require('node:child_process')
const { parseArgs } = require('node:util')

const { runsWhileMissing, lowestOver } = require('../reruns')

const MiB = 1 << 20
/**
 * Peak RSS of a read phase, warm-up included, per engine: far below what the
 * reads reach when V8 is not told of the strings' external memory (gigabytes:
 * it would not collect them in time), above what each engine needs (the
 * pure-Rust engine converts into buffers of its own, beside the pool's).
 */
const PEAK_RSS_LIMIT_MiB = {
  simdutf: { sync: 224, async: 416 },
  fallback: { sync: 320, async: 480 },
}
/**
 * Added to those limits on Windows, where the process's own RSS, before any
 * read, is higher (node.exe under Wine starts about 70 MiB above Linux's node).
 */
const PEAK_RSS_FLOOR_EXTRA_MiB = process.platform === 'win32' ? 96 : 0
/**
 * "No growth" in RSS: RSS after a full GC and IDLE_MS idle at the end of the run
 * may exceed the same half-way by at most this. Taken right after a GC, RSS
 * also holds the pool's idle buffers (bounded, freed once idle): with reads in
 * flight, how many the GC hands back varies from run to run, and that spread
 * failed a check with no leak. After the pool's idle time, what stays is what
 * no one will free. A leaked buffer per read of even one file class in six
 * would add several times this over a half's reads.
 */
const GROWTH_TOLERANCE_MiB = 32
/** V8's external memory after a full GC may differ from the first checkpoint's by at most this. */
const EXTERNAL_TOLERANCE_MiB = 1
/** Full-GC checkpoints across the measured reads (the half-way one is CHECKPOINTS / 2). */
const CHECKPOINTS = 8
/** After a too-long read and a GC, RSS may be at most this much above where it started. */
const TOO_LONG_RSS_TOLERANCE_MiB = 48
/** During a too-long read, peak RSS may exceed where it started by the file's size and this. */
const TOO_LONG_PEAK_EXTRA_MiB = 128
/** How long the process idles after a full GC before RSS is taken as what is kept (giveback; the read phases' growth check). */
const IDLE_MS = 1000
/** giveback: RSS after idling may exceed fs's after the same work by at most this. */
const IDLE_EXTRA_MiB = 32
/** giveback: the lean mode's peak RSS may be at most this times fs's (its strings are copies where fs's are). */
const COPIED_PEAK_RATIO = 1.25
const { defaultPeakBound } = require('../helpers')
/** The text classes of the giveback workloads: one repeated unit each (invalid: with 0xFF bytes). */
const GIVEBACK_UNITS = {
  ascii: 'plain ascii text, the common case\n',
  latin1: 'déjà vu à Noël, café crème\n',
  mixed: 'mixed 中文 text 😀 and more\n',
  cjk: '中文字符的文本，常见的亚洲文字。\n',
  invalid: 'valid é 中 😀 text\n',
}

const { values: args } = parseArgs({
  options: {
    reads: { type: 'string', default: '100000' },
    // Reads made before RSS is sampled, so that a short run judges the steady
    // state rather than the warm-up (V8's heap and the buffer pool growing).
    warmup: { type: 'string', default: '0' },
    concurrency: { type: 'string', default: '64' },
    failures: { type: 'string', default: '10000' },
    'too-long': { type: 'string', default: '16' },
    phases: { type: 'string', default: 'sync,async,fds,toolong,giveback' },
    'giveback-sizes': { type: 'string', default: '1,4,64' },
    'giveback-reads': { type: 'string', default: '64' },
    'giveback-async-reads': { type: 'string' },
    'giveback-classes': { type: 'string', default: Object.keys(GIVEBACK_UNITS).join(',') },
    who: { type: 'string' },
    work: { type: 'string' },
    json: { type: 'boolean', default: false },
    child: { type: 'string' },
    dir: { type: 'string' },
  },
})

const ROOT = path.join(__dirname, '..', '..')

/** The 1 MiB files of every class the read phases cycle through. */
function writeClassFiles(dir) {
  const text = (s) => Buffer.from(s.repeat(Math.ceil(MiB / Buffer.byteLength(s)) + 1)).subarray(0, MiB)
  const files = {
    ascii: text('plain ascii text, the common case\n'),
    latin1: text('déjà vu à Noël, café crème\n'),
    utf16: text('mixed 中文 text 😀 and more\n'),
    'latin1 + U+0100': Buffer.concat([text('déjà vu à Noël\n').subarray(0, MiB - 2), Buffer.from('Ā')]),
    'invalid, sparse errors': text('valid é 中 😀 text\n'),
    'invalid, dense errors': Buffer.alloc(MiB),
  }
  const sparse = files['invalid, sparse errors']
  for (let i = 1000; i < sparse.length; i += 4099) sparse[i] = 0xff
  const dense = files['invalid, dense errors']
  for (let i = 0; i < dense.length; i++) dense[i] = (Math.imul(i, 2654435761) >>> 13) & 0xff
  return Object.entries(files).map(([name, bytes]) => {
    const file = path.join(dir, `${name.replace(/\W+/g, '-')}.txt`)
    fs.writeFileSync(file, bytes)
    return { name, file, expected: fs.readFileSync(file, 'utf8') }
  })
}

/**
 * Every this many reads a string is compared with fs's whole, the others at
 * their length and SAMPLES places spread over them: comparing every string
 * whole raised the async phase's RSS well past what the reads themselves need.
 * Coprime with the count of file classes, so each class is compared whole.
 */
const FULL_CHECK_EVERY = 7
const SAMPLES = 257

/** Whether `s` is `expected`: wholly if `whole`, else its length and SAMPLES characters spread over it. */
function sameText(s, expected, whole) {
  if (whole) return s === expected
  if (s.length !== expected.length) return false
  const step = Math.max(1, Math.floor(s.length / SAMPLES))
  for (let i = s.length - 1; i >= 0; i -= step) if (s.charCodeAt(i) !== expected.charCodeAt(i)) return false
  return true
}

const rssMiB = () => process.memoryUsage.rss() / MiB
/** RSS after IDLE_MS of idleness: what is kept once the pool has freed its idle buffers. */
const rssAfterIdleMiB = () => new Promise((resolve) => setTimeout(() => resolve(rssMiB()), IDLE_MS))
const peakRssMiB = () => process.resourceUsage().maxRSS / 1024
const openFds = () => fs.readdirSync('/proc/self/fd').length

/**
 * RSS and V8's external memory once nothing is left to collect: a full GC, a turn of the event loop (for
 * anything a finalizer defers), and another full GC.
 */
async function memoryAfterGcMiB() {
  globalThis.gc()
  await new Promise(setImmediate)
  globalThis.gc()
  const { rss, external } = process.memoryUsage()
  return { rss: rss / MiB, external: external / MiB }
}

async function runPhase(phase, dir) {
  const { readFileUtf8, readFileUtf8Async, readFile, engine, setMemoryMode } = require(ROOT)
  // The sync soak checks the accounting of external strings, which sync calls
  // make in the fast mode (the default; the lean mode copies where fs does).
  if (phase === 'sync') setMemoryMode('fast')
  const reads = Number(args.reads)
  const started = performance.now()
  const elapsed = () => (performance.now() - started) / 1000

  if (phase === 'sync' || phase === 'async') {
    const files = writeClassFiles(dir)
    let checked = 0
    const verify = (s, f) => {
      if (!sameText(s, f.expected, checked % FULL_CHECK_EVERY === 0)) {
        throw new Error(`${f.name}: read ${checked} is not fs.readFileSync's string (length ${s.length}, fs ${f.expected.length})`)
      }
      checked++
    }
    const readAll = async (count, check) => {
      if (phase === 'sync') {
        for (let i = 0; i < count; i++) {
          const f = files[i % files.length]
          check(readFileUtf8(f.file), f)
        }
        return
      }
      let next = 0
      const lane = async () => {
        while (next < count) {
          const f = files[next++ % files.length]
          check(await readFileUtf8Async(f.file), f)
        }
      }
      await Promise.all(Array.from({ length: Number(args.concurrency) }, lane))
    }
    await readAll(Number(args.warmup), () => {})
    // The reads run in CHECKPOINTS parts, RSS taken after a full GC after each.
    const afterGc = []
    const afterIdle = []
    for (let part = 0; part < CHECKPOINTS; part++) {
      const end = Math.round((reads * (part + 1)) / CHECKPOINTS)
      await readAll(end - checked, verify)
      afterGc.push(await memoryAfterGcMiB())
      if (part === CHECKPOINTS / 2 - 1 || part === CHECKPOINTS - 1) {
        afterIdle.push(await rssAfterIdleMiB())
      }
    }
    return {
      phase,
      engine: engine(),
      reads: checked,
      seconds: elapsed(),
      peakRssMiB: peakRssMiB(),
      rssAfterGcMiB: afterGc.map((m) => m.rss),
      rssIdleMiB: afterIdle,
      externalAfterGcMiB: afterGc.map((m) => m.external),
    }
  }

  if (phase === 'fds') {
    const { MAX_STRING_LENGTH } = require('node:buffer').constants
    const regular = path.join(dir, 'regular.txt')
    fs.writeFileSync(regular, 'text')
    const big = path.join(dir, 'kmaxlength.txt')
    fs.writeFileSync(big, '')
    fs.truncateSync(big, MAX_STRING_LENGTH) // sparse: no disk used
    // EBADF from an fd number above any fd limit (the kernel's cap is 2^30), not
    // from a closed fd: glibc's malloc on another thread briefly opens
    // /proc/sys/vm/overcommit_memory, and got a closed fd's number (no error
    // instead of EBADF, once in ~10 runs with the CPUs busy).
    const badFd = 2147483647
    const code = (fn) => {
      try {
        fn()
      } catch (err) {
        return err.code
      }
      return 'no error'
    }
    const codeAsync = (p) => p.then(() => 'no error', (err) => err.code)
    const kinds = [
      ['ENOENT', () => code(() => readFileUtf8(path.join(dir, 'missing')))],
      ['EISDIR', () => code(() => readFileUtf8(dir))],
      ['ENOTDIR', () => code(() => readFileUtf8(path.join(regular, 'x')))],
      ['EBADF', () => code(() => readFileUtf8(badFd))],
      ['ENOENT', () => codeAsync(readFileUtf8Async(path.join(dir, 'missing')))],
      ['EISDIR', () => codeAsync(readFileUtf8Async(dir))],
      ['EISDIR', () => new Promise((resolve) => readFile(dir, 'utf8', (err) => resolve(err?.code)))],
    ]
    // Warm up: whatever the first calls open for good (libuv's thread pool, …).
    for (const [, run] of kinds) await run()
    code(() => readFileUtf8(big))
    const before = openFds()
    const failures = Number(args.failures)
    for (let i = 0; i < failures; i++) {
      const [expected, run] = kinds[i % kinds.length]
      const got = await run()
      if (got !== expected) throw new Error(`failure ${i}: ${got}, expected ${expected}`)
    }
    const tooLong = Number(args['too-long'])
    for (let i = 0; i < tooLong; i++) {
      const fd = i % 2 === 0 ? undefined : fs.openSync(big, 'r')
      const got = code(() => readFileUtf8(fd ?? big))
      if (fd !== undefined) fs.closeSync(fd)
      if (got !== 'ERR_STRING_TOO_LONG') throw new Error(`too-long read ${i}: ${got}`)
    }
    const after = openFds()
    fs.rmSync(big)
    return { phase, failures, tooLong, fdsBefore: before, fdsAfter: after, seconds: elapsed() }
  }

  if (phase === 'toolong') {
    const { MAX_STRING_LENGTH } = require('node:buffer').constants
    const big = path.join(dir, 'kmaxlength.txt')
    fs.writeFileSync(big, '')
    fs.truncateSync(big, MAX_STRING_LENGTH)
    // fs's error, from a process of its own: this one's peak RSS is our reads' alone.
    const theirs = JSON.parse(
      spawnSync(process.execPath, ['-e', `try { require('node:fs').readFileSync(process.argv[1], 'utf8') } catch (e) { process.stdout.write(JSON.stringify({ name: e.name, code: e.code, message: e.message })) }`, big], { encoding: 'utf8' }).stdout || 'null',
    )
    globalThis.gc()
    const baseline = rssMiB()
    const rounds = Number(args['too-long'])
    const afterGc = []
    for (let i = 0; i < rounds; i++) {
      let ours
      try {
        readFileUtf8(big)
      } catch (err) {
        ours = err
      }
      if (theirs?.code !== 'ERR_STRING_TOO_LONG' || ours?.name !== theirs.name || ours.code !== theirs.code || ours.message !== theirs.message) {
        throw new Error(`round ${i}: ${ours?.name} ${ours?.code} ${ours?.message}; fs: ${theirs?.name} ${theirs?.code} ${theirs?.message}`)
      }
      globalThis.gc()
      afterGc.push(rssMiB())
    }
    fs.rmSync(big)
    return { phase, rounds, fileMiB: MAX_STRING_LENGTH / MiB, baselineMiB: baseline, afterGcMiB: afterGc, peakRssMiB: peakRssMiB(), seconds: elapsed() }
  }
  if (phase === 'giveback') {
    // Each workload, by us and by fs, in a process of its own (peak RSS is per process).
    const sizes = args['giveback-sizes'].split(',').map(Number)
    const classes = args['giveback-classes'].split(',')
    const works = [...sizes.flatMap((mib) => classes.map((c) => `sync:${mib}:${c}`)), 'async:4:ascii', 'async:4:cjk', 'decode:4:ascii', 'decode:4:cjk']
    const rows = []
    for (const work of works) {
      const [kind, mib, c] = work.split(':')
      const file = path.join(dir, `${c}-${mib}.txt`)
      if (!fs.existsSync(file)) writeGivebackFile(file, Number(mib) * MiB, c)
      const reads = kind === 'async' ? (args['giveback-async-reads'] ?? args['giveback-reads']) : args['giveback-reads']
      const run = (who) => {
        const r = spawnSync(process.execPath, ['--expose-gc', __filename, '--child', 'giveback-run', '--dir', dir, '--who', who, '--work', work, '--giveback-reads', reads, '--concurrency', args.concurrency], { encoding: 'utf8' })
        if (r.status !== 0) throw new Error(`giveback ${work} (${who}) ended with ${r.signal ?? r.status}: ${r.stderr}`)
        return JSON.parse(r.stdout)
      }
      const whos = kind === 'async' ? ['ours', 'fs'] : ['ours', 'fs', 'lean']
      const runs = runsWhileMissing(
        () => Object.fromEntries(whos.map((who) => [who, run(who)])),
        (runs) => givebackProblems(lowestOf(work, runs)).length > 0,
      )
      rows.push(lowestOf(work, runs))
    }
    return { phase, engine: engine(), rows, seconds: elapsed() }
  }

  if (phase === 'giveback-run') {
    const [kind, mib, c] = args.work.split(':')
    const file = path.join(dir, `${c}-${mib}.txt`)
    const reads = Number(args['giveback-reads'])
    const ours = args.who !== 'fs'
    const { decodeUtf8, setMemoryMode } = require(ROOT)
    if (args.who === 'lean') setMemoryMode('lean')
    // The work runs in a function of its own: a suspended async function keeps
    // its frame's stale slots, which can hold the last strings through a GC.
    const work = async () => {
      let chars = 0
      if (kind === 'sync') {
        for (let i = 0; i < reads; i++) chars += (ours ? readFileUtf8(file) : fs.readFileSync(file, 'utf8')).length
      } else if (kind === 'async') {
        let next = 0
        const lane = async () => {
          while (next++ < reads) chars += (ours ? await readFileUtf8Async(file) : await fs.promises.readFile(file, 'utf8')).length
        }
        await Promise.all(Array.from({ length: Number(args.concurrency) }, lane))
      } else {
        // One buffer, decoded again and again: a fresh 4 MiB Buffer per decode
        // came from glibc's heap, which pages freed behind longer-lived small
        // blocks kept resident (20-40 MiB, in some runs) whoever decoded them.
        const bytes = fs.readFileSync(file)
        for (let i = 0; i < reads; i++) chars += (ours ? decodeUtf8(bytes) : bytes.toString('utf8')).length
      }
      return chars
    }
    const chars = await work()
    const peak = peakRssMiB()
    // One full GC from a fresh frame, then idle: what either reader holds
    // then is memory it keeps, not garbage still reachable from a stale slot.
    await new Promise((resolve) => setImmediate(resolve))
    globalThis.gc()
    return { chars, peakRssMiB: peak, idleRssMiB: await rssAfterIdleMiB() }
  }
  throw new Error(`unknown phase ${phase}`)
}

/** A file of `bytes` bytes of the text class `c` (whole characters; invalid: 0xFF every 4099 bytes). */
function writeGivebackFile(file, bytes, c) {
  const unit = GIVEBACK_UNITS[c]
  const b = Buffer.from(unit.repeat(Math.ceil(bytes / Buffer.byteLength(unit)) + 1)).subarray(0, bytes)
  let end = b.length
  while (end > 0 && (b[end - 1] & 0xc0) === 0x80) end--
  if (end > 0 && b[end - 1] >= 0xc0) end--
  b.fill(0x20, end)
  if (c === 'invalid') for (let i = 1000; i < b.length; i += 4099) b[i] = 0xff
  fs.writeFileSync(file, b)
}

/**
 * A giveback row from the runs of one workload (each run: every side's figures):
 * the lowest peak and idle RSS of each side, its characters read if every run
 * read the same (NaN if not, which fails the check).
 */
function lowestOf(work, runs) {
  const row = { work, runs: runs.length }
  for (const who of Object.keys(runs[0])) {
    const chars = runs[0][who].chars
    row[who] = {
      chars: runs.every((run) => run[who].chars === chars) ? chars : NaN,
      peakRssMiB: lowestOver(runs, (run) => run[who].peakRssMiB),
      idleRssMiB: lowestOver(runs, (run) => run[who].idleRssMiB),
    }
  }
  return row
}

/** The giveback thresholds for one workload: a list of failures (empty: passed). */
function givebackProblems({ work, ours, fs: theirs, lean }) {
  const problems = []
  if (ours.chars !== theirs.chars) problems.push(`${work}: ${ours.chars} characters read, fs ${theirs.chars}`)
  if (!(ours.idleRssMiB <= theirs.idleRssMiB + IDLE_EXTRA_MiB)) {
    problems.push(`${work}: RSS after the work and ${IDLE_MS} ms idle ${ours.idleRssMiB.toFixed(0)} MiB, fs ${theirs.idleRssMiB.toFixed(0)} MiB`)
  }
  if (work.startsWith('async') && !(ours.peakRssMiB <= theirs.peakRssMiB)) {
    problems.push(`${work}: peak RSS ${ours.peakRssMiB.toFixed(0)} MiB, fs.promises ${theirs.peakRssMiB.toFixed(0)} MiB`)
  }
  const [kind] = work.split(':')
  const bound = defaultPeakBound(theirs.peakRssMiB)
  if (kind !== 'async' && !(ours.peakRssMiB <= bound)) {
    problems.push(`${work}: peak RSS ${ours.peakRssMiB.toFixed(0)} MiB, over the default's bound ${bound.toFixed(0)} MiB (fs ${theirs.peakRssMiB.toFixed(0)} MiB)`)
  }
  if (lean && lean.chars !== theirs.chars) problems.push(`${work} (lean): ${lean.chars} characters read, fs ${theirs.chars}`)
  if (lean && !(lean.peakRssMiB <= theirs.peakRssMiB * COPIED_PEAK_RATIO)) {
    problems.push(`${work} (lean): peak RSS ${lean.peakRssMiB.toFixed(0)} MiB, more than ${COPIED_PEAK_RATIO} × fs's ${theirs.peakRssMiB.toFixed(0)} MiB`)
  }
  if (lean && !(lean.idleRssMiB <= theirs.idleRssMiB + IDLE_EXTRA_MiB)) {
    problems.push(`${work} (lean): RSS after the work and ${IDLE_MS} ms idle ${lean.idleRssMiB.toFixed(0)} MiB, fs ${theirs.idleRssMiB.toFixed(0)} MiB`)
  }
  return problems
}

/** The thresholds, for one phase's result: a list of failures (empty: passed). */
function judge(r) {
  const problems = []
  if (r.phase === 'sync' || r.phase === 'async') {
    if (r.reads !== Number(args.reads)) problems.push(`${r.reads} reads done of ${args.reads}`)
    const base = PEAK_RSS_LIMIT_MiB[r.engine]?.[r.phase]
    const limit = base === undefined ? undefined : base + PEAK_RSS_FLOOR_EXTRA_MiB
    if (limit === undefined) problems.push(`no peak RSS limit for engine ${r.engine}`)
    else if (!(r.peakRssMiB < limit)) problems.push(`peak RSS ${r.peakRssMiB.toFixed(0)} MiB ≥ ${limit} (${r.engine})`)
    r.peakRssLimitMiB = limit
    const list = (xs) => xs.map((x) => x.toFixed(1)).join(', ')
    const [half, end] = r.rssIdleMiB
    if (!(end <= half + GROWTH_TOLERANCE_MiB)) {
      problems.push(`RSS after GC and ${IDLE_MS} ms idle grows over the last half: ${half.toFixed(1)} → ${end.toFixed(1)} MiB`)
    }
    const [first] = r.externalAfterGcMiB
    if (!r.externalAfterGcMiB.every((x) => Math.abs(x - first) <= EXTERNAL_TOLERANCE_MiB)) {
      problems.push(`V8's external memory after GC moves: ${list(r.externalAfterGcMiB)} MiB`)
    }
  } else if (r.phase === 'giveback') {
    for (const row of r.rows) problems.push(...givebackProblems(row))
  } else if (r.phase === 'fds') {
    if (r.fdsAfter !== r.fdsBefore) problems.push(`open fds ${r.fdsBefore} before, ${r.fdsAfter} after`)
  } else if (r.phase === 'toolong') {
    const ceiling = r.baselineMiB + r.fileMiB + TOO_LONG_PEAK_EXTRA_MiB
    if (!(r.peakRssMiB <= ceiling)) problems.push(`peak RSS ${r.peakRssMiB.toFixed(0)} MiB during the too-long reads, more than one copy of the file above ${r.baselineMiB.toFixed(0)} MiB`)
    for (const [i, rss] of r.afterGcMiB.entries()) {
      if (rss > r.baselineMiB + TOO_LONG_RSS_TOLERANCE_MiB) {
        problems.push(`after too-long read ${i} and GC, RSS ${rss.toFixed(0)} MiB (baseline ${r.baselineMiB.toFixed(0)} MiB)`)
      }
    }
  }
  return problems
}

function describe(r) {
  const s = `${r.seconds.toFixed(1)} s`
  if (r.phase === 'sync' || r.phase === 'async') {
    return `${r.phase} (${r.engine}): ${r.reads} reads of 1 MiB in ${s}, peak RSS ${r.peakRssMiB.toFixed(0)} MiB, after GC at each eighth RSS ${r.rssAfterGcMiB.map((x) => x.toFixed(0)).join(', ')} MiB (after ${IDLE_MS} ms idle half-way and at the end: ${r.rssIdleMiB.map((x) => x.toFixed(0)).join(', ')}), external ${r.externalAfterGcMiB.map((x) => x.toFixed(1)).join(', ')} MiB`
  }
  if (r.phase === 'giveback') {
    const mib = (x, width) => x.toFixed(0).padStart(width)
    const rows = r.rows.map(({ work, runs, ours, fs: theirs, lean }) => {
      const leanPart = lean ? `  lean peak ${mib(lean.peakRssMiB, 5)} MiB, idle ${mib(lean.idleRssMiB, 4)} MiB` : ''
      const runsPart = runs > 1 ? `  (lowest of ${runs} runs each)` : ''
      return `  ${work.padEnd(16)} peak ${mib(ours.peakRssMiB, 5)} MiB (fs ${mib(theirs.peakRssMiB, 5)})  idle ${mib(ours.idleRssMiB, 4)} MiB (fs ${mib(theirs.idleRssMiB, 4)})${leanPart}${runsPart}`
    })
    return [`giveback (${r.engine}): ${args['giveback-reads']} reads per workload in ${s}, RSS ours (fs)`, ...rows].join('\n')
  }
  if (r.phase === 'fds') {
    return `fds: ${r.failures} failing reads + ${r.tooLong} too-long reads in ${s}, open fds ${r.fdsBefore} → ${r.fdsAfter}`
  }
  return `toolong: ${r.rounds} ERR_STRING_TOO_LONG reads in ${s}, RSS ${r.baselineMiB.toFixed(0)} MiB before, peak ${r.peakRssMiB.toFixed(0)} MiB, after GC ${r.afterGcMiB.map((x) => x.toFixed(0)).join(', ')} MiB`
}

function main() {
  const results = []
  let failed = false
  for (const phase of args.phases.split(',')) {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), `readfile-utf8-soak-${phase}-`))
    const childArgs = [...process.argv.slice(2).filter((a) => a !== '--json'), '--child', phase, '--dir', dir]
    const nodeArgs = phase === 'fds' ? [] : ['--expose-gc']
    const r = spawnSync(process.execPath, [...nodeArgs, __filename, ...childArgs], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] })
    fs.rmSync(dir, { recursive: true, force: true })
    if (r.status !== 0) {
      failed = true
      results.push({ phase, problems: [`process ended with ${r.signal ?? `status ${r.status}`}`] })
      if (!args.json) console.log(`${phase}: FAILED, process ended with ${r.signal ?? `status ${r.status}`}`)
      continue
    }
    const result = JSON.parse(r.stdout)
    result.problems = judge(result)
    if (result.problems.length) failed = true
    results.push(result)
    if (!args.json) {
      console.log(describe(result))
      for (const p of result.problems) console.log(`  FAILED: ${p}`)
    }
  }
  if (args.json) console.log(JSON.stringify(results))
  else console.log(failed ? 'soak: FAILED' : `soak: passed on Node ${process.version}`)
  process.exitCode = failed ? 1 : 0
}

if (args.child) {
  runPhase(args.child, args.dir).then(
    (result) => process.stdout.write(JSON.stringify(result)),
    (err) => {
      console.error(err)
      process.exitCode = 1
    },
  )
} else {
  main()
}
