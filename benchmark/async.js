'use strict'
// Async reads: 64 concurrent reads of each content × {16 KiB, 4 MiB}, total time
// of readFileUtf8Async vs fs.promises.readFile(p, 'utf8'), and how long the main
// thread was blocked meanwhile (event-loop delay: max and p99).
// Run with any Node: `node benchmark/async.js [--samples N]`. Prints Markdown.
const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const { monitorEventLoopDelay } = require('node:perf_hooks')
const { readFileUtf8Async } = require('..')

const { content } = require('./texts')

const SAMPLES = Number(process.argv[process.argv.indexOf('--samples') + 1]) || 15
const CONCURRENCY = 64
const DIR = path.join(process.env.XDG_CACHE_HOME || path.join(os.homedir(), '.cache'), 'readfile-utf8', 'fixtures-extra')

function fixture(kind, size) {
  fs.mkdirSync(DIR, { recursive: true })
  const file = path.join(DIR, `${kind}-${size}.txt`)
  const bytes = content(kind, size)
  if (!fs.existsSync(file) || !fs.readFileSync(file).equals(bytes)) fs.writeFileSync(file, bytes)
  return file
}

const median = (xs) => [...xs].sort((a, b) => a - b)[xs.length >> 1]

async function measure(read, file) {
  // Warm up (and check identity once).
  const expected = await fs.promises.readFile(file, 'utf8')
  if ((await read(file)) !== expected) throw new Error(`result differs for ${file}`)
  for (let i = 0; i < 3; i++) await Promise.all(Array.from({ length: CONCURRENCY }, () => read(file)))
  const times = []
  const h = monitorEventLoopDelay({ resolution: 1 })
  h.enable()
  for (let s = 0; s < SAMPLES; s++) {
    const t0 = process.hrtime.bigint()
    await Promise.all(Array.from({ length: CONCURRENCY }, () => read(file)))
    times.push(Number(process.hrtime.bigint() - t0) / 1e6)
  }
  h.disable()
  return { total: median(times), max: h.max / 1e6, p99: h.percentile(99) / 1e6 }
}

async function main() {
  const fsRead = (p) => fs.promises.readFile(p, 'utf8')
  console.log(`Node ${process.version}, ${os.cpus()[0].model}, UV_THREADPOOL_SIZE=${process.env.UV_THREADPOOL_SIZE ?? 4}; ${CONCURRENCY} concurrent reads, median of ${SAMPLES}`)
  console.log()
  console.log('| content | size | fs.promises total | ours total | speed-up | fs loop delay max / p99 | ours loop delay max / p99 |')
  console.log('|---|---|---|---|---|---|---|')
  for (const size of [16 * 1024, 4 * 1024 * 1024]) {
    for (const kind of ['ascii', 'latin1', 'utf16', 'invalid']) {
      const file = fixture(kind, size)
      const theirs = await measure(fsRead, file)
      const ours = await measure(readFileUtf8Async, file)
      const ms = (x) => `${x.toFixed(2)} ms`
      console.log(`| ${kind} | ${size >= 1 << 20 ? `${size >> 20} MiB` : `${size >> 10} KiB`} | ${ms(theirs.total)} | ${ms(ours.total)} | ${(theirs.total / ours.total).toFixed(2)}× | ${ms(theirs.max)} / ${ms(theirs.p99)} | ${ms(ours.max)} / ${ms(ours.p99)} |`)
    }
  }
}

main().catch((err) => {
  console.error(err)
  process.exit(1)
})
