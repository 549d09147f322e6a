'use strict'
// decodeUtf8 vs buffer.toString('utf8') (and TextDecoder), for every content
// class × size, whole and with start/end. Run with any Node:
//   node benchmark/decode.js [--quick] [--time-ms N] [--content a,b] [--size 64,1KiB]
// Two timings per cell, each with the contenders taking turns in this one
// process: single calls (ratio of the median call times, toString /
// decodeUtf8) and batches of back-to-back calls (median of the per-round
// ratios); then the slowest cell by either. A control, toString timed against
// itself, shows how far from 1.00× the harness strays on identical work: where
// decodeUtf8 hands the input to Node's decoder, that is the spread to expect.
// Prints Markdown.
const { decodeUtf8 } = require('..')
const { generate } = require('./fixtures')
const { KiB, MiB, sizeLabel, fmtTime, fmtRatio, table } = require('./format')
const { suiteOptions } = require('./options')
const { median } = require('./timing')

const opts = suiteOptions('decode.js', { 'time-ms': { type: 'string' } }, {
  sizes: [64, KiB, 16 * KiB, 256 * KiB, 4 * MiB],
  quickSizes: [KiB, 256 * KiB],
})
const TIME_MS = opts.number('time-ms', 400, 150)
const MIN_ROUNDS = 11
/** Each batch runs for about this long (at least one call). */
const BATCH_NS = 1e6
const { contents, sizes } = opts

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

/** lib/decode.js's routes, where the checkout has them (older layouts do not). */
const routes = (() => {
  try {
    return require('../lib/decode')
  } catch {
    return {}
  }
})()

/** Which decoder decodeUtf8 gives `bytes[start..end)`, by lib/decode.js's routes. */
function decoderFor(bytes, start, end) {
  if (typeof routes.takesNative !== 'function') return '?'
  return routes.takesNative(bytes, start, end) ? 'native' : "Node's"
}

/** Where decodeUtf8 hands over to Node's decoder, if lib/decode.js says. */
function routing() {
  const { NATIVE_FROM, NATIVE_FROM_IF_CUT, ASCII_TO_NODE_BELOW } = routes
  if (NATIVE_FROM === undefined) return ''
  const ascii = ASCII_TO_NODE_BELOW > 0 ? ` (but for input that looks like ASCII, below ${sizeLabel(ASCII_TO_NODE_BELOW)})` : ''
  return (
    `decodeUtf8 uses Node's decoder below ${sizeLabel(NATIVE_FROM)} (below ${sizeLabel(NATIVE_FROM_IF_CUT)} for a ` +
    `range that starts or ends inside a character), the native one from there on${ascii}. `
  )
}

const td = new TextDecoder()
const cells = []
const rows = []
for (const content of contents) {
  for (const size of sizes) {
    process.stderr.write(`decode: ${content} ${sizeLabel(size)}\n`)
    const buf = Buffer.from(generate(content, size))
    const len = buf.length
    const forms = {
      whole: {
        toString: () => buf.toString('utf8'),
        decodeUtf8: () => decodeUtf8(buf),
        control: () => buf.toString('utf8'),
        TextDecoder: () => td.decode(buf),
      },
      // Cut one byte in at each end: inside a character wherever one is there.
      'start, end': {
        toString: () => buf.toString('utf8', 1, len - 1),
        decodeUtf8: () => decodeUtf8(buf, 1, len - 1),
        control: () => buf.toString('utf8', 1, len - 1),
      },
    }
    for (const [form, fns] of Object.entries(forms)) {
      const expected = fns.toString()
      for (const [name, fn] of Object.entries(fns)) {
        if (fn() !== expected) throw new Error(`${name} differs from toString: ${content} ${size} ${form}`)
      }
      const r = compare(fns)
      const d = r.decodeUtf8
      const decoder = form === 'whole' ? decoderFor(buf, 0, len) : decoderFor(buf, 1, len - 1)
      const cell = {
        content,
        size: sizeLabel(size),
        form,
        decoder,
        median: d.singleRatio,
        batched: d.batchedRatio,
        control: [r.control.singleRatio, r.control.batchedRatio],
      }
      cells.push(cell)
      rows.push([
        content,
        cell.size,
        form,
        decoder,
        fmtTime(r.toString.batchedNs),
        fmtTime(d.batchedNs),
        fmtRatio(cell.median),
        fmtRatio(cell.batched),
        `${fmtRatio(cell.control[0])} / ${fmtRatio(cell.control[1])}`,
        r.TextDecoder ? fmtRatio(r.TextDecoder.batchedNs / d.batchedNs) : '',
      ])
    }
  }
}
const name = (c) => `${c.content} ${c.size} (${c.form})`
const byMedian = cells.reduce((a, b) => (b.median < a.median ? b : a))
const byBatched = cells.reduce((a, b) => (b.batched < a.batched ? b : a))
const isBelow = (c) => c.median < 1 || c.batched < 1
const below = cells.filter(isBelow)
const nativeBelow = below.filter((c) => c.decoder === 'native')
const controls = cells.flatMap((c) => c.control)
const controlRange = `${fmtRatio(Math.min(...controls))}–${fmtRatio(Math.max(...controls))}`
const delegated = cells.filter((c) => c.decoder !== 'native').flatMap((c) => [c.median, c.batched])
const delegatedRange = delegated.length ? `${fmtRatio(Math.min(...delegated))}–${fmtRatio(Math.max(...delegated))}` : 'none'
console.log(
  [
    '#### decodeUtf8 vs buffer.toString(\'utf8\')',
    '',
    `${routing()}Ratios: toString time / decodeUtf8 time (> 1: decodeUtf8 is faster). Times: median per call, batched. ` +
      'Control: toString timed against itself (median / batched), the harness\'s own spread on identical work.',
    '',
    table(
      [
        ['content', 'l'],
        ['size', 'l'],
        ['form', 'l'],
        ['decoder', 'l'],
        ['buffer.toString', 'r'],
        ['decodeUtf8', 'r'],
        ['vs toString (median)', 'r'],
        ['vs toString (batched)', 'r'],
        ['control', 'r'],
        ['vs TextDecoder (batched)', 'r'],
      ],
      rows,
    ),
    '',
    `Slowest cell by median: ${name(byMedian)} at ${fmtRatio(byMedian.median)} toString. ` +
      `Slowest cell batched: ${name(byBatched)} at ${fmtRatio(byBatched.batched)} toString. ` +
      `Cells below 1.00× toString (median or batched): ${below.length} of ${cells.length}; ` +
      `of them on the native decoder: ${nativeBelow.length ? nativeBelow.map(name).join(', ') : 'none'}. ` +
      `Cells on Node's decoder: ${delegatedRange}; the control: ${controlRange}.`,
  ].join('\n'),
)
if (sink === 0) console.log('')
