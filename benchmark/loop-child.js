'use strict'
// One reader in a process of its own, reading one file in a plain loop, as a
// tool reading many files does: its heap holds only its own strings, and GC and
// fresh memory are paid inside the loop. Run by matrix.js and memory.js:
//
//   node [--expose-gc] benchmark/loop-child.js <ours|lean|fs> <file> [--ms N] [--min-calls N]
//        [--calls N] [--async --concurrency N] [--idle-ms N] [--heap-mib N] [--gc]
//
// The loop runs for --ms and at least --min-calls calls, or exactly --calls calls.
// --heap-mib: first fill the heap with about N MiB of small live objects, as a
// compiler's or bundler's heap is filled, so that every full GC marks them.
// --gc (Node only): also report the time V8's garbage collector took during the
// timed loop (v8.GCProfiler), which itself costs time at every GC: the bench
// reads it from a process of its own, not the one it times.
//
// Prints one JSON line: { nsPerCall, calls, peakRss, idleRss, gcNsPerCall, gcs }
// (bytes; idleRss: RSS after gc() and --idle-ms of idleness, when --idle-ms is
// given; gcNsPerCall and gcs, the GC time per call and how many GCs, with --gc).
const { parseArgs } = require('node:util')

const { SYNC_READERS, ASYNC_READERS, textLength } = require('./readers')

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    ms: { type: 'string', default: '250' },
    'min-calls': { type: 'string', default: '3' },
    calls: { type: 'string' },
    'warmup-ms': { type: 'string', default: '30' },
    async: { type: 'boolean', default: false },
    concurrency: { type: 'string', default: '64' },
    'idle-ms': { type: 'string' },
    'heap-mib': { type: 'string', default: '0' },
    gc: { type: 'boolean', default: false },
  },
})
const [name, file] = positionals
const ms = values.calls ? 0 : Number(values.ms)
const minCalls = Number(values.calls ?? values['min-calls'])
let sink = 0

/** ns per call of a loop of at least `min` calls and `loopMs`, checking the clock every `stride` calls. */
function syncLoop(read, loopMs, min, stride) {
  const t0 = process.hrtime.bigint()
  const end = t0 + BigInt(Math.round(loopMs * 1e6))
  let calls = 0
  let now
  do {
    for (let i = 0; i < stride; i++) sink += textLength(read)
    calls += stride
    now = process.hrtime.bigint()
  } while (calls < min || now < end)
  return { nsPerCall: Number(now - t0) / calls, calls }
}

/** `concurrency` reads in flight until `min` calls and `loopMs` have passed. */
async function asyncLoop(read, loopMs, min, concurrency) {
  const t0 = process.hrtime.bigint()
  const end = t0 + BigInt(Math.round(loopMs * 1e6))
  let calls = 0
  const worker = async () => {
    while (calls < min || process.hrtime.bigint() < end) {
      calls++
      sink += (await read()).length
    }
  }
  await Promise.all(Array.from({ length: concurrency }, worker))
  return { nsPerCall: Number(process.hrtime.bigint() - t0) / calls, calls }
}

/** About `mib` MiB of small objects that point at each other, kept alive by the caller. */
function liveHeap(mib) {
  const objects = new Array(Math.round((mib * 2 ** 20) / 48))
  for (let i = 0; i < objects.length; i++) objects[i] = { index: i, previous: objects[i - 1] ?? null }
  return objects
}

async function main() {
  const kept = liveHeap(Number(values['heap-mib']))
  const readers = values.async ? ASYNC_READERS : SYNC_READERS
  if (!readers[name] || !file) throw new Error(`usage: loop-child.js <${Object.keys(readers).join('|')}> <file> [options]`)
  const read = readers[name](file)
  let result
  if (values.async) {
    result = await asyncLoop(read, ms, minCalls, Number(values.concurrency))
  } else {
    // A short warm-up sets how many calls go between two looks at the clock.
    const warm = values.calls ? undefined : syncLoop(read, Number(values['warmup-ms']), 1, 1)
    const profiler = values.gc ? new (require('node:v8').GCProfiler)() : undefined
    profiler?.start()
    result = syncLoop(read, ms, minCalls, warm ? Math.max(1, Math.floor(1e5 / warm.nsPerCall)) : 1)
    const gcs = profiler?.stop().statistics
    if (gcs) {
      // Each GC's cost is in microseconds.
      result.gcNsPerCall = (gcs.reduce((sum, one) => sum + one.cost, 0) * 1000) / result.calls
      result.gcs = gcs.length
    }
  }
  result.peakRss = process.resourceUsage().maxRSS * 1024
  result.liveObjects = kept.length
  if (values['idle-ms'] !== undefined) {
    if (typeof gc !== 'function') throw new Error('--idle-ms needs node --expose-gc')
    gc()
    await new Promise((resolve) => setTimeout(resolve, Number(values['idle-ms'])))
    result.idleRss = process.memoryUsage.rss()
  }
  if (sink === 0) throw new Error('nothing was read')
  process.stdout.write(JSON.stringify(result) + '\n')
}

main().catch((err) => {
  process.stderr.write(`${err.stack || err}\n`)
  process.exitCode = 1
})
