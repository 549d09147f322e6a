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

/** Runs fn repeatedly for about `ms` (at least twice): JIT and caches warm up untimed. */
function warmup(fn, ms) {
  const end = performance.now() + ms
  let n = 0
  do {
    fn()
    n++
  } while (n < 2 || performance.now() < end)
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
  const { samples, calls } = await measureSamples(contenders, opts)
  return Object.fromEntries(contenders.map((c) => [c.name, summarize(samples[c.name], calls[c.name])]))
}

/** `measureCell`'s samples (ns per call) and call counts per contender, not summarized. */
async function measureSamples(contenders, { budgetMs, rounds, minSamples, warmupMs }) {
  const { measure, do_not_optimize } = await loadMitata()
  const samples = Object.fromEntries(contenders.map((c) => [c.name, []]))
  const calls = Object.fromEntries(contenders.map((c) => [c.name, 0]))
  // do_not_optimize keeps the result observably used: no dead-code elimination.
  const bodies = contenders.map((c) => ({ name: c.name, body: () => do_not_optimize(c.fn()) }))
  for (const { body } of bodies) warmup(body, warmupMs)

  for (let r = 0; r < rounds; r++) {
    for (let i = 0; i < bodies.length; i++) {
      const { name, body } = bodies[(i + r) % bodies.length]
      const stats = await measure(body, {
        gc,
        min_cpu_time: (budgetMs / rounds) * 1e6, // mitata counts in ns
        min_samples: Math.ceil(minSamples / rounds),
        // Calls under 65 µs are batched 256 to a sample (timer overhead stays
        // negligible); a smaller batch than mitata's 4096 keeps a ~60 µs call from
        // needing a quarter of a second per sample.
        batch_samples: 256,
        batch_threshold: 65_536,
        // Keep every sample (mitata would drop the 2 fastest and 2 slowest), so
        // min/max are real and the rounds merge without bias.
        samples_threshold: Infinity,
      })
      for (const v of stats.samples) samples[name].push(v)
      calls[name] += stats.ticks
    }
  }
  return { samples, calls }
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

module.exports = { measureCell, measureSamples, inProcessesInTurns, summarize, quantile, hasGc: Boolean(gc) }
