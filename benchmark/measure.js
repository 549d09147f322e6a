'use strict'
// Timing: mitata's low-level measure() runs the loops (JIT-generated, batched for
// fast calls, with a GC before each loop); everything else is ours: rounds that
// interleave the contenders, the time budget, and the statistics we report.
const v8 = require('node:v8')
const vm = require('node:vm')

let mitata

/** mitata is ESM-only; this file is CommonJS so that any Node >= 20 runs it as is. */
async function loadMitata() {
  mitata ??= await import('mitata')
  return mitata
}

/**
 * A real gc() for mitata to call before each measurement loop, so garbage from the
 * previous contender (64 MiB strings) is not collected on the next one's clock.
 * Without it mitata falls back to allocating 1 GiB as a GC nudge, which we'd rather
 * not, so we then pass `gc: false`.
 */
const gc = (() => {
  try {
    v8.setFlagsFromString('--expose-gc')
    const fn = vm.runInNewContext('gc')
    fn()
    return fn
  } catch {
    return false
  }
})()

/** Percentile of sorted samples, linearly interpolated between closest ranks. */
function quantile(sorted, q) {
  const pos = (sorted.length - 1) * q
  const lo = Math.floor(pos)
  const hi = Math.min(lo + 1, sorted.length - 1)
  return sorted[lo] + (sorted[hi] - sorted[lo]) * (pos - lo)
}

/** Summary statistics (ns per call) of merged samples. */
function summarize(samples, calls) {
  const s = Float64Array.from(samples).sort()
  let sum = 0
  for (const v of s) sum += v
  return {
    median: quantile(s, 0.5),
    p75: quantile(s, 0.75),
    p99: quantile(s, 0.99),
    min: s[0],
    max: s[s.length - 1],
    mean: sum / s.length,
    samples: s.length,
    calls,
  }
}

/**
 * Runs fn repeatedly for about `ms` (at least twice): JIT and caches warm up
 * untimed by mitata. Returns the median time of those calls (ns).
 */
function warmup(fn, ms) {
  const times = []
  const end = performance.now() + ms
  let now
  do {
    const t0 = performance.now()
    fn()
    now = performance.now()
    times.push(now - t0)
  } while (times.length < 2 || now < end)
  return quantile(times.sort((a, b) => a - b), 0.5) * 1e6
}

/**
 * A cell whose fastest contender's calls take under this (ns, median over its
 * warmup) is timed in batches of BATCH_CALLS calls per sample, for every
 * contender; otherwise every sample is one call. Batches are there for the
 * timer's resolution, which matters for short calls only. 12 µs sits in the
 * gap between this matrix's 16 KiB cells (fastest calls 3-9 µs) and its
 * 256 KiB cells (17-80 µs), so no cell of it changes kind from run to run.
 */
const BATCH_BELOW_NS = 12_000
/** Calls per sample when batched. */
const BATCH_CALLS = 256
/** How samples are taken (`batchedFor`), in words, for the reports. */
const SAMPLING =
  `a sample is the mean of a batch of ${BATCH_CALLS} calls in a cell whose fastest contender's calls take ` +
  `under ${BATCH_BELOW_NS / 1000} µs, else one call (the same kind for every contender of a cell)`

/**
 * Whether a cell is timed in batches: one answer for all its contenders, so
 * that their medians are of the same kind. Left to mitata, each measure()
 * decided from two calls timed just after a gc() (batched if one took at most
 * 65 µs), and contenders of one cell came out differently; a median of single
 * calls leaves out the GC pauses that a median of 256-call batches spreads
 * over its calls. Node 26, ASCII 256 KiB: fs as single calls 22.1 µs, ours as
 * batches 25.7 µs (0.86x); in the next run, both as batches, 28.7 and 25.1 µs.
 */
function batchedFor(medianCallNs) {
  return Math.min(...medianCallNs) < BATCH_BELOW_NS
}

/**
 * Each contender warmed up for `warmupMs`, and whether its cell is to be timed
 * in batches (`batchedFor`), for a caller that times the contenders elsewhere
 * (bench.js --isolate: each in a process of its own).
 */
function planBatching(contenders, warmupMs) {
  return batchedFor(contenders.map((c) => warmup(c.fn, warmupMs)))
}

/**
 * Times each contender for about `budgetMs` of measured time in total, split into
 * `rounds` rounds; each round measures every contender once, starting with a
 * different one each round. Interleaving like this spreads slow drift (frequency
 * scaling, a noisy neighbour, page-cache state) over all contenders instead of
 * charging it to whichever happened to run during it.
 *
 * @param {{ name: string, fn: () => unknown }[]} contenders
 * @param {{ budgetMs: number, rounds: number, minSamples: number, warmupMs: number }} opts
 * @returns {Promise<Record<string, ReturnType<typeof summarize>>>} ns per call
 */
async function measureCell(contenders, opts) {
  const { samples, calls, batched } = await measureSamples(contenders, opts)
  return Object.fromEntries(contenders.map((c) => [c.name, { ...summarize(samples[c.name], calls[c.name]), batched }]))
}

/** `measureCell`'s samples (ns per call) and call counts per contender, not summarized. */
async function measureSamples(contenders, { budgetMs, rounds, minSamples, warmupMs, batched }) {
  const { measure, do_not_optimize } = await loadMitata()
  const samples = Object.fromEntries(contenders.map((c) => [c.name, []]))
  const calls = Object.fromEntries(contenders.map((c) => [c.name, 0]))
  // do_not_optimize keeps the result observably used: no dead-code elimination.
  const bodies = contenders.map((c) => ({ name: c.name, body: () => do_not_optimize(c.fn()) }))
  const medianCallNs = bodies.map(({ body }) => warmup(body, warmupMs))
  batched ??= batchedFor(medianCallNs)

  for (let r = 0; r < rounds; r++) {
    for (let i = 0; i < bodies.length; i++) {
      const { name, body } = bodies[(i + r) % bodies.length]
      const stats = await measure(body, {
        gc,
        min_cpu_time: (budgetMs / rounds) * 1e6, // mitata counts in ns
        min_samples: Math.ceil(minSamples / rounds),
        // Batched or not as decided for the cell (mitata batches a measure() when
        // one of its first calls takes at most batch_threshold; a first call over
        // warmup_threshold would stop it from batching at all). 256 calls a
        // sample, not mitata's 4096, keep the slower contenders of a batched cell
        // (fs: up to ~30 µs a call) at a few ms per sample.
        batch_samples: BATCH_CALLS,
        batch_threshold: batched ? Infinity : -1,
        warmup_threshold: Infinity,
        // Keep every sample (mitata would drop the 2 fastest and 2 slowest), so
        // min/max are real and the rounds merge without bias.
        samples_threshold: Infinity,
      })
      for (const v of stats.samples) samples[name].push(v)
      calls[name] += stats.ticks
    }
  }
  return { samples, calls, batched }
}

/**
 * Runs `node <argv(name)>` (this same Node) for each name once per round, the
 * first name moving on by one each round, and collects what each child printed
 * as one JSON value: { name: [value per round] }. For readers timed each in a
 * process of its own (bench.js --isolate, sustained.js).
 */
function inProcessesInTurns(names, rounds, argv) {
  const { spawnSync } = require('node:child_process')
  const outputs = Object.fromEntries(names.map((n) => [n, []]))
  for (let r = 0; r < rounds; r++) {
    for (let i = 0; i < names.length; i++) {
      const name = names[(i + r) % names.length]
      const args = argv(name)
      const child = spawnSync(process.execPath, args, { encoding: 'utf8', maxBuffer: 64 << 20 })
      if (child.status !== 0) throw new Error(`node ${args.join(' ')} failed (${child.status ?? child.signal}): ${child.stderr}`)
      outputs[name].push(JSON.parse(child.stdout))
    }
  }
  return outputs
}

module.exports = { measureCell, measureSamples, planBatching, inProcessesInTurns, summarize, quantile, SAMPLING, hasGc: Boolean(gc) }
