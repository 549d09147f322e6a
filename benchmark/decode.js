'use strict'
// decodeUtf8 vs buffer.toString('utf8') and TextDecoder, for each content × size.
// Run with any Node: `node benchmark/decode.js [--time-ms N]`. Prints Markdown.
const os = require('node:os')
const { decodeUtf8 } = require('..')

const { content } = require('./texts')

const TIME_MS = Number(process.argv[process.argv.indexOf('--time-ms') + 1]) || 300


const median = (xs) => [...xs].sort((a, b) => a - b)[xs.length >> 1]
let sink = 0

/** Median time of one call, from samples of batches sized to ~1 ms, for about TIME_MS. */
function measure(fn) {
  let batch = 1
  for (;;) {
    const t0 = process.hrtime.bigint()
    for (let i = 0; i < batch; i++) sink += fn().length
    if (Number(process.hrtime.bigint() - t0) > 1e6 || batch > 1e6) break
    batch *= 2
  }
  const samples = []
  const end = Date.now() + TIME_MS
  while (Date.now() < end || samples.length < 5) {
    const t0 = process.hrtime.bigint()
    for (let i = 0; i < batch; i++) sink += fn().length
    samples.push(Number(process.hrtime.bigint() - t0) / batch)
  }
  return median(samples)
}

function fmt(ns) {
  return ns >= 1e6 ? `${(ns / 1e6).toFixed(2)} ms` : ns >= 1e3 ? `${(ns / 1e3).toFixed(2)} µs` : `${ns.toFixed(0)} ns`
}

console.log(`Node ${process.version}, ${os.cpus()[0].model}; median time per call`)
console.log()
console.log('| content | size | buffer.toString | TextDecoder | decodeUtf8 | vs toString | vs TextDecoder |')
console.log('|---|---|---|---|---|---|---|')
const td = new TextDecoder()
for (const size of [1024, 16 * 1024, 256 * 1024, 4 * 1024 * 1024]) {
  for (const kind of ['ascii', 'latin1', 'utf16', 'invalid']) {
    const buf = content(kind, size)
    const expected = buf.toString('utf8')
    if (decodeUtf8(buf) !== expected || td.decode(buf) !== expected) throw new Error(`result differs: ${kind} ${size}`)
    const a = measure(() => buf.toString('utf8'))
    const b = measure(() => td.decode(buf))
    const c = measure(() => decodeUtf8(buf))
    const label = size >= 1 << 20 ? `${size >> 20} MiB` : `${size >> 10} KiB`
    console.log(`| ${kind} | ${label} | ${fmt(a)} | ${fmt(b)} | ${fmt(c)} | ${(a / c).toFixed(2)}× | ${(b / c).toFixed(2)}× |`)
  }
}
if (sink === 0) console.log('')
