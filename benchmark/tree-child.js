'use strict'
// One reader's pass over a list of files, in a fresh process, for the tree
// suite (tree.js); Node and Bun both run it.
//
//   <runtime> benchmark/tree-child.js <reader> <list.json> [--in-flight n] [--passes n] [--hook] [--check]
//
// Prints JSON: { ms } for one pass (timed from the first read to the last
// string, every string kept until then), { passes: [ms...] } for `steady`,
// { c1: [ms...], c2: [ms...] } for `floor`. With --check, no time but each
// string's SHA-256 over its UTF-16 code units (so any runtime's strings can be
// compared with Node's fs), or the floor's byte count. --hook: the process was
// started with `--import readfile-utf8/register`, which is checked.
const fs = require('node:fs')
const path = require('node:path')
const crypto = require('node:crypto')

const ROOT = path.join(__dirname, '..')
const [reader, listFile, ...rest] = process.argv.slice(2)
const option = (name, fallback) => (rest.includes(name) ? Number(rest[rest.indexOf(name) + 1]) : fallback)
const IN_FLIGHT = option('--in-flight', 64)
const PASSES = option('--passes', 9)
const CHECK = rest.includes('--check')

/** Reads every file with `read` (a promise per file), at most `inFlight` at once; the results in list order. */
async function pool(files, read, inFlight) {
  const out = new Array(files.length)
  let next = 0
  const lane = async () => {
    while (next < files.length) {
      const i = next++
      out[i] = await read(files[i])
    }
  }
  await Promise.all(Array.from({ length: Math.min(inFlight, files.length) }, lane))
  return out
}

const addon = () => require(ROOT)

/** Each reader, made before its pass (so the addon is loaded outside it): files -> strings, or a promise of them. */
const READERS = {
  'fs-loop': () => (files) => files.map((p) => fs.readFileSync(p, 'utf8')),
  'fs-promises-all': () => (files) => Promise.all(files.map((p) => fs.promises.readFile(p, 'utf8'))),
  'fs-promises-pool': () => (files) => pool(files, (p) => fs.promises.readFile(p, 'utf8'), IN_FLIGHT),
  'ours-loop': () => {
    const { readFileUtf8 } = addon()
    return (files) => files.map((p) => readFileUtf8(p))
  },
  'ours-batch': () => {
    const { readFilesUtf8 } = addon()
    return (files) => readFilesUtf8(files)
  },
  'ours-async-all': () => {
    const { readFileUtf8Async } = addon()
    return (files) => Promise.all(files.map((p) => readFileUtf8Async(p)))
  },
  'ours-async-pool': () => {
    const { readFileUtf8Async } = addon()
    return (files) => pool(files, (p) => readFileUtf8Async(p), IN_FLIGHT)
  },
  'ours-async-batch': () => {
    const { readFilesUtf8Async } = addon()
    return (files) => readFilesUtf8Async(files)
  },
}

/** SHA-256 of each string's UTF-16 code units: equal digests, equal strings. */
const digests = (strings) => strings.map((s) => crypto.createHash('sha256').update(Buffer.from(s, 'utf16le')).digest('hex'))

/** The bench build's native exports (`readFilesLength`), or an error saying how to make it. */
function benchBuild() {
  const { findBinary } = require('../lib/binary-name')
  const binary = findBinary(path.join(__dirname, 'bench-build'))
  const native = binary === null ? null : require(binary)
  if (typeof native?.readFilesLength !== 'function') throw new Error('the read floor needs the bench build: npm run build:bench')
  return native
}

async function main() {
  const files = JSON.parse(fs.readFileSync(listFile, 'utf8'))
  if (rest.includes('--hook') && !require(path.join(ROOT, 'lib', 'register')).isRegistered()) {
    throw new Error('started with --hook, but readfile-utf8/register is not installed in fs')
  }
  if (reader === 'floor') {
    // Open + fstat + read into one reused buffer per thread + close: no string, no GC.
    const { readFilesLength } = benchBuild()
    if (CHECK) return { bytes: readFilesLength(files, 0, 1) }
    const times = { c1: [], c2: [] }
    for (let i = 0; i < PASSES; i++) {
      for (const c of i % 2 ? [2, 1] : [1, 2]) {
        const t0 = performance.now()
        readFilesLength(files, 0, c)
        times[`c${c}`].push(performance.now() - t0)
      }
    }
    return times
  }
  if (reader === 'steady') {
    // The same batch pass after pass in one process, each pass's strings dropped.
    const { readFilesUtf8 } = addon()
    const passes = []
    for (let i = 0; i < PASSES; i++) {
      const t0 = performance.now()
      const out = readFilesUtf8(files)
      passes.push(performance.now() - t0)
      if (out.length !== files.length) throw new Error('wrong result length')
    }
    return { passes }
  }
  const make = READERS[reader]
  if (!make) throw new Error(`unknown reader '${reader}' (known: ${Object.keys(READERS).join(', ')}, steady, floor)`)
  const read = make()
  const t0 = performance.now()
  const out = await read(files)
  const ms = performance.now() - t0
  if (out.length !== files.length) throw new Error(`${reader}: ${out.length} results for ${files.length} files`)
  for (let i = 0; i < out.length; i++) {
    if (typeof out[i] !== 'string') throw new Error(`${reader}: no string for ${files[i]}`)
  }
  return CHECK ? { digests: digests(out) } : { ms }
}

main().then(
  (result) => process.stdout.write(JSON.stringify(result)),
  (err) => {
    process.stderr.write(`tree-child ${reader}: ${err.stack || err}\n`)
    process.exitCode = 1
  },
)
