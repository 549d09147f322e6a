'use strict'
// How calls are timed. Four ways, because each hides something the others show:
// - measureCell: mitata's loops with a gc() before each, samples of one call (or
//   of a batch of short calls); medians and means per call.
// - timeBatches: plain batches of back-to-back calls, the readers taking turns in
//   one heap, with no gc() of ours: GC pauses land where they fall.
// - timeAfterGaps: single calls after idle sleeps, the readers taking turns in
//   one heap: what any thread or cache a reader keeps busy has lost by then.
// - inChildren: a script per reader in a process of its own (loop-child.js).
const v8 = require('node:v8')
const vm = require('node:vm')
const { spawnSync } = require('node:child_process')

const { textLength } = require('./readers')

/**
 * A real gc() for mitata to call before each loop, so that one contender's
 * garbage is not collected on the next one's clock (without it mitata would
 * allocate 1 GiB as a nudge, so we then pass `gc: false`).
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

const median = (xs) => quantile(Float64Array.from(xs).sort(), 0.5)

/** Summary statistics (ns per call) of samples. */
function summarize(samples) {
  const s = Float64Array.from(samples).sort()
  let sum = 0
  for (const v of s) sum += v
  return { median: quantile(s, 0.5), p75: quantile(s, 0.75), p99: quantile(s, 0.99), mean: sum / s.length }
}

/** Runs fn for about `ms` (at least twice); returns the median call time (ns). */
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
  return median(times) * 1e6
}

/**
 * A cell whose fastest contender's calls take under this (ns) is sampled in
 * batches of BATCH_CALLS calls, every contender alike, so that their medians are
 * of one kind; it sits between the matrix's 16 KiB and 256 KiB cells, so no cell
 * changes kind from run to run. Batches are there for the timer's resolution.
 */
const BATCH_BELOW_NS = 12_000
const BATCH_CALLS = 256
const SAMPLING =
  `a sample is the mean of a batch of ${BATCH_CALLS} calls in a cell whose fastest contender's calls take ` +
  `under ${BATCH_BELOW_NS / 1000} µs, else one call (the same kind for every contender of a cell)`

/**
 * Times each contender for about `budgetMs` of measured time in `rounds` rounds;
 * each round measures every contender once, starting with a different one, so
 * that slow drift (a noisy neighbour, frequency scaling) falls on all of them.
 * Returns { [name]: summarize(...) } in ns per call.
 */
async function measureCell(contenders, { budgetMs, rounds, minSamples, warmupMs }) {
  const { measure, do_not_optimize } = await import('mitata')
  // do_not_optimize keeps the result observably used: no dead-code elimination.
  const bodies = contenders.map((c) => ({ name: c.name, body: () => do_not_optimize(c.fn()) }))
  const batched = Math.min(...bodies.map(({ body }) => warmup(body, warmupMs))) < BATCH_BELOW_NS
  const samples = Object.fromEntries(contenders.map((c) => [c.name, []]))
  for (let r = 0; r < rounds; r++) {
    for (let i = 0; i < bodies.length; i++) {
      const { name, body } = bodies[(i + r) % bodies.length]
      const stats = await measure(body, {
        gc,
        min_cpu_time: (budgetMs / rounds) * 1e6, // mitata counts in ns
        min_samples: Math.ceil(minSamples / rounds),
        // Batched or not as decided for the cell; mitata would decide per loop.
        batch_samples: BATCH_CALLS,
        batch_threshold: batched ? Infinity : -1,
        warmup_threshold: Infinity,
        // Keep every sample, so that the rounds merge without bias.
        samples_threshold: Infinity,
      })
      for (const v of stats.samples) samples[name].push(v)
    }
  }
  return Object.fromEntries(contenders.map((c) => [c.name, summarize(samples[c.name])]))
}

let sink = 0

/** ns of `n` back-to-back calls of fn. */
function timeBatch(fn, n) {
  const t0 = process.hrtime.bigint()
  for (let i = 0; i < n; i++) sink += textLength(fn)
  return Number(process.hrtime.bigint() - t0)
}

/**
 * Batches of `calls` back-to-back calls per contender, in turns (who goes first
 * alternates), for about `budgetMs` per contender and at least `minRounds`
 * rounds. Returns { [name]: median batch time / calls } in ns per call.
 */
function timeBatches(contenders, { calls, budgetMs, minRounds = 5 }) {
  const times = contenders.map(() => [])
  for (const c of contenders) timeBatch(c.fn, calls) // warm-up at this batch size
  const end = performance.now() + budgetMs * contenders.length
  for (let round = 0; round < minRounds || performance.now() < end; round++) {
    for (let i = 0; i < contenders.length; i++) {
      const k = round % 2 ? contenders.length - 1 - i : i
      times[k].push(timeBatch(contenders[k].fn, calls))
    }
  }
  if (sink === 0) throw new Error('nothing was read')
  return Object.fromEntries(contenders.map((c, k) => [c.name, median(times[k]) / calls]))
}

/**
 * One call at a time, each after an idle sleep of `gapMs` (Atomics.wait, so no
 * event-loop work runs in it), the contenders in rotation in one heap, for about
 * `budgetMs` of wall time per contender and at least `minCalls` calls each, after
 * `warmupRounds` untimed rounds: a server's requests, or a tool's reads between
 * awaits, where whatever a reader keeps warm between calls has gone cold.
 * Returns { [name]: median call time } in ns.
 */
function timeAfterGaps(contenders, { gapMs, budgetMs, minCalls = 15, warmupRounds = 3 }) {
  const sleeper = new Int32Array(new SharedArrayBuffer(4))
  const times = contenders.map(() => [])
  const end = performance.now() + budgetMs * contenders.length
  for (let round = 0; round < warmupRounds + minCalls || performance.now() < end; round++) {
    for (let i = 0; i < contenders.length; i++) {
      const k = (round + i) % contenders.length
      Atomics.wait(sleeper, 0, 0, gapMs)
      const ns = timeBatch(contenders[k].fn, 1)
      if (round >= warmupRounds) times[k].push(ns)
    }
  }
  if (sink === 0) throw new Error('nothing was read')
  return Object.fromEntries(contenders.map((c, k) => [c.name, median(times[k])]))
}

/**
 * Runs `<runtime(name)> [nodeArgs] <argv(name)>` (this same Node unless told
 * otherwise, in the environment `env(name)`) for each name once per round, the
 * first name moving on by one each round; each child prints one JSON value.
 * Returns { [name]: [value per round] }.
 */
function inChildren(names, rounds, argv, nodeArgs = [], runtime = () => process.execPath, env = () => process.env) {
  const outputs = Object.fromEntries(names.map((n) => [n, []]))
  for (let r = 0; r < rounds; r++) {
    for (let i = 0; i < names.length; i++) {
      const name = names[(i + r) % names.length]
      const [exe, args] = [runtime(name), [...nodeArgs, ...argv(name)]]
      const child = spawnSync(exe, args, { encoding: 'utf8', maxBuffer: 64 << 20, env: env(name) })
      if (child.status !== 0) throw new Error(`${exe} ${args.join(' ')} failed (${child.status ?? child.signal}): ${child.stderr}`)
      outputs[name].push(JSON.parse(child.stdout))
    }
  }
  return outputs
}

/** The live heap of the loops run "loaded" (loop-child.js --heap-mib): a mid-sized tool's. */
const LOADED_HEAP_MIB = 256

module.exports = { measureCell, timeBatches, timeAfterGaps, inChildren, quantile, median, SAMPLING, LOADED_HEAP_MIB, hasGc: Boolean(gc) }
