'use strict'
// Async reads: 64 concurrent reads of each content × {16 KiB, 4 MiB}, total time
// of readFileUtf8Async vs fs.promises.readFile(p, 'utf8'), and how long the main
// thread was blocked meanwhile (event-loop delay: max and p99). The two readers
// take turns, batch by batch, so that drift (heap state, a noisy neighbour)
// falls on both: the 16 KiB rows take under a millisecond per batch, and when
// all of one reader's batches ran before the other's, which one came out ahead
// changed from run to run.
//   node benchmark/async.js [--quick] [--content a,b] [--size 16KiB,4MiB] [--samples N]
// Prints Markdown.
const fs = require('node:fs')
const { monitorEventLoopDelay } = require('node:perf_hooks')
const { readFileUtf8Async } = require('..')

const { ensureFixture } = require('./fixtures')
const { KiB, MiB, sizeLabel, fmtRatio, table } = require('./format')
const { suiteOptions } = require('./options')
const { median } = require('./timing')

const opts = suiteOptions('async.js', { samples: { type: 'string' } }, { sizes: [16 * KiB, 4 * MiB] })
const SAMPLES = Math.round(opts.number('samples', 15, 7))
const CONCURRENCY = 64

/** One batch of CONCURRENCY concurrent reads; ms from the first call to the last result. */
async function batch(read, file) {
  const t0 = process.hrtime.bigint()
  await Promise.all(Array.from({ length: CONCURRENCY }, () => read(file)))
  return Number(process.hrtime.bigint() - t0) / 1e6
}

/**
 * Per reader: the median total of SAMPLES batches, the readers taking turns (who
 * goes first alternates); then the event-loop delay over SAMPLES more batches
 * of each reader in a row (a delay monitor cannot be paused and resumed: its
 * first delay after a resume would count the pause).
 */
async function measure(readers, file) {
  // Warm up (and check identity once).
  const expected = await fs.promises.readFile(file, 'utf8')
  for (const read of readers) {
    if ((await read(file)) !== expected) throw new Error(`result differs for ${file}`)
    for (let i = 0; i < 3; i++) await batch(read, file)
  }
  const times = readers.map(() => [])
  for (let s = 0; s < SAMPLES; s++) {
    const order = readers.map((_, i) => i)
    if (s % 2) order.reverse()
    for (const i of order) times[i].push(await batch(readers[i], file))
  }
  const results = []
  for (const [i, read] of readers.entries()) {
    const delay = monitorEventLoopDelay({ resolution: 1 })
    delay.enable()
    for (let s = 0; s < SAMPLES; s++) await batch(read, file)
    delay.disable()
    results.push({ total: median(times[i]), max: delay.max / 1e6, p99: delay.percentile(99) / 1e6 })
  }
  return results
}

async function main() {
  const fsRead = (p) => fs.promises.readFile(p, 'utf8')
  const rows = []
  for (const size of opts.sizes) {
    for (const content of opts.contents) {
      process.stderr.write(`async: ${content} ${sizeLabel(size)}\n`)
      const { file } = ensureFixture(content, size)
      const [theirs, ours] = await measure([fsRead, readFileUtf8Async], file)
      const ms = (x) => `${x.toFixed(2)} ms`
      rows.push([content, sizeLabel(size), ms(theirs.total), ms(ours.total), fmtRatio(theirs.total / ours.total), `${ms(theirs.max)} / ${ms(theirs.p99)}`, `${ms(ours.max)} / ${ms(ours.p99)}`])
    }
  }
  const columns = [['content', 'l'], ['size', 'l'], ['fs.promises total', 'r'], ['ours total', 'r'], ['speed-up', 'r'], ['fs loop delay max / p99', 'r'], ['ours loop delay max / p99', 'r']]
  console.log(`#### Async: ${CONCURRENCY} concurrent reads\n`)
  console.log(`UV_THREADPOOL_SIZE=${process.env.UV_THREADPOOL_SIZE ?? 4}; readFileUtf8Async vs fs.promises.readFile(p, 'utf8'), median of ${SAMPLES} batches per reader, the readers taking turns\n`)
  console.log(table(columns, rows))
}

main().catch((err) => {
  console.error(err)
  process.exit(1)
})
