'use strict'
// decodeUtf8 vs buffer.toString('utf8') (and TextDecoder), for every content
// class × size, whole and with start/end. Run with any Node:
//   node benchmark/decode.js [--time-ms N] [--content a,b] [--size 64,1KiB]
// Two timings per cell, each with the contenders taking turns in this one
// process: single calls (ratio of the median call times, toString /
// decodeUtf8) and batches of back-to-back calls (median of the per-round
// ratios); then the slowest cell by either. Prints Markdown.
const os = require('node:os')
const { parseArgs } = require('node:util')
const { decodeUtf8 } = require('..')
const { NATIVE_FROM, NATIVE_FROM_IF_CUT } = require('../lib/decode')
const { generate, CELL_OPTIONS, selectCells, KiB, MiB } = require('./fixtures')

const { values } = parseArgs({ options: { 'time-ms': { type: 'string' }, ...CELL_OPTIONS } })
const TIME_MS = Number(values['time-ms']) || 400
const MIN_ROUNDS = 11
/** Each batch runs for about this long (at least one call). */
const BATCH_NS = 1e6
const { contents, sizes } = selectCells(values, [64, KiB, 16 * KiB, 256 * KiB, 4 * MiB])

const median = (xs) => [...xs].sort((a, b) => a - b)[xs.length >> 1]
let sink = 0

function timeBatch(fn, n) {
  const t0 = process.hrtime.bigint()
  for (let i = 0; i < n; i++) sink += fn().length
  return Number(process.hrtime.bigint() - t0)
}

/**
 * Times the contenders (name → fn, the first the baseline) two ways, both in
 * alternating order in this one process, for about TIME_MS each:
 * - single: each call timed on its own, contenders taking turns; per contender
 *   the median time of a call.
 * - batched: rounds of one batch (~1 ms) of back-to-back calls per contender;
 *   per contender the median time per call, and the median of the per-round
 *   ratios baseline time / its time.
 */
function compare(fns) {
  const names = Object.keys(fns)
  const base = fns[names[0]]
  let batch = 1
  while (timeBatch(base, batch) < BATCH_NS && batch < 1 << 20) batch *= 2
  for (const name of names) timeBatch(fns[name], batch) // warm-up of each at this batch size
  const single = Object.fromEntries(names.map((n) => [n, []]))
  let end = Date.now() + TIME_MS
  for (let round = 0; round < MIN_ROUNDS || Date.now() < end; round++) {
    for (let i = 0; i < 16; i++) {
      const order = (round + i) % 2 === 0 ? names : [...names].reverse()
      for (const name of order) single[name].push(timeBatch(fns[name], 1))
    }
  }
  const batched = Object.fromEntries(names.map((n) => [n, []]))
  end = Date.now() + TIME_MS
  for (let round = 0; round < MIN_ROUNDS || Date.now() < end; round++) {
    const order = round % 2 === 0 ? names : [...names].reverse()
    for (const name of order) batched[name].push(timeBatch(fns[name], batch))
  }
  const result = {}
  for (const name of names) {
    result[name] = {
      singleNs: median(single[name]),
      batchedNs: median(batched[name]) / batch,
      batchedRatio: median(batched[name].map((t, i) => batched[names[0]][i] / t)),
    }
  }
  for (const name of names) result[name].singleRatio = result[names[0]].singleNs / result[name].singleNs
  return result
}

function fmt(ns) {
  return ns >= 1e6 ? `${(ns / 1e6).toFixed(2)} ms` : ns >= 1e3 ? `${(ns / 1e3).toFixed(2)} µs` : `${ns.toFixed(0)} ns`
}
const label = (size) => (size >= MiB ? `${size / MiB} MiB` : size >= KiB ? `${size / KiB} KiB` : `${size} B`)

console.log(`Node ${process.version}, ${os.cpus()[0].model}, ${os.cpus().length} CPUs, load ${os.loadavg()[0].toFixed(2)}`)
console.log(
  NATIVE_FROM === undefined
    ? 'decodeUtf8 always uses the native decoder.'
    : `decodeUtf8 uses Node's decoder below ${label(NATIVE_FROM)} (below ${label(NATIVE_FROM_IF_CUT)} for a ` +
        'range that starts or ends inside a character), the native one from there on.',
)
console.log('Ratios: toString time / decodeUtf8 time (> 1: decodeUtf8 is faster). Times: median per call, batched.')
console.log()
console.log('| content | size | form | buffer.toString | decodeUtf8 | vs toString (median) | vs toString (batched) | vs TextDecoder (batched) |')
console.log('|---|---|---|---|---|---|---|---|')
const td = new TextDecoder()
const cells = []
for (const content of contents) {
  for (const size of sizes) {
    const buf = Buffer.from(generate(content, size))
    const len = buf.length
    const forms = {
      whole: {
        fns: { toString: () => buf.toString('utf8'), decodeUtf8: () => decodeUtf8(buf), TextDecoder: () => td.decode(buf) },
      },
      // Cut one byte in at each end: inside a character wherever one is there.
      'start, end': {
        fns: { toString: () => buf.toString('utf8', 1, len - 1), decodeUtf8: () => decodeUtf8(buf, 1, len - 1) },
      },
    }
    for (const [form, { fns }] of Object.entries(forms)) {
      const expected = fns.toString()
      for (const [name, fn] of Object.entries(fns)) {
        if (fn() !== expected) throw new Error(`${name} differs from toString: ${content} ${size} ${form}`)
      }
      const r = compare(fns)
      const d = r.decodeUtf8
      const cell = { content, size: label(size), form, median: d.singleRatio, batched: d.batchedRatio }
      cells.push(cell)
      const vsTd = r.TextDecoder ? `${(r.TextDecoder.batchedNs / d.batchedNs).toFixed(2)}×` : ''
      console.log(
        `| ${content} | ${cell.size} | ${form} | ${fmt(r.toString.batchedNs)} | ${fmt(d.batchedNs)} | ` +
          `${cell.median.toFixed(2)}× | ${cell.batched.toFixed(2)}× | ${vsTd} |`,
      )
    }
  }
}
console.log()
const name = (c) => `${c.content} ${c.size} (${c.form})`
const byMedian = cells.reduce((a, b) => (b.median < a.median ? b : a))
const byBatched = cells.reduce((a, b) => (b.batched < a.batched ? b : a))
console.log(`Slowest cell by median: ${name(byMedian)} at ${byMedian.median.toFixed(2)}× toString`)
console.log(`Slowest cell batched:   ${name(byBatched)} at ${byBatched.batched.toFixed(2)}× toString`)
const below = cells.filter((c) => c.median < 1 || c.batched < 1).length
console.log(`Cells below 1.00× toString (median or batched): ${below} of ${cells.length}`)
if (sink === 0) console.log('')
