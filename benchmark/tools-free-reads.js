'use strict'
// A preload for the tools suite (tools.js): reads that cost nothing. Before
// the tool starts, it reads every file the tool read whole in an earlier run
// (the probe's list, $READFILE_UTF8_BENCH_FREE_READS: { path, encoding }),
// each as that run asked for it; then fs.readFileSync, fs.readFile and
// fs.promises.readFile answer those requests from memory (a Buffer as a fresh
// copy, a string as it is) and pass every other call to fs. The tool's wall
// time in such a run, less this preload's own, is what it would take if its
// reads were free: the difference to a plain run is what reading costs it.
// This preload's own time goes to $READFILE_UTF8_BENCH_FREE_READS_MS.
const fs = require('node:fs')
const path = require('node:path')
const { fileURLToPath } = require('node:url')
const { syncBuiltinESMExports } = require('node:module')

const t0 = performance.now()
const wanted = JSON.parse(fs.readFileSync(process.env.READFILE_UTF8_BENCH_FREE_READS, 'utf8'))

/** 'utf8', 'buffer' or another encoding, as the probe names them. */
function encodingOf(options) {
  const e = typeof options === 'string' ? options : options?.encoding
  return e == null ? 'buffer' : String(e).toLowerCase().replace('utf-8', 'utf8')
}

const kept = new Map()
for (const { path: p, encoding } of wanted) {
  try {
    kept.set(`${p}\0${encoding}`, encoding === 'buffer' ? fs.readFileSync(p) : fs.readFileSync(p, encoding))
  } catch {
    // gone since, or not a file: fs answers it
  }
}

/** The kept answer for a read of `file` with `options`, or undefined (then fs answers). */
function answer(file, options) {
  if (typeof file === 'number') return undefined
  if (options?.signal?.aborted || (options?.flag !== undefined && options.flag !== 'r')) return undefined
  const abs = path.resolve(file instanceof URL ? fileURLToPath(file) : String(file))
  const value = kept.get(`${abs}\0${encodingOf(options)}`)
  return typeof value === 'string' || value === undefined ? value : Buffer.from(value)
}

const { readFileSync, readFile } = fs
const promisesReadFile = fs.promises.readFile
fs.readFileSync = function (file, options) {
  const value = answer(file, options)
  return value === undefined ? readFileSync.apply(this, arguments) : value
}
fs.readFile = function (file, options, callback) {
  const value = answer(file, typeof options === 'function' ? undefined : options)
  if (value === undefined) return readFile.apply(this, arguments)
  process.nextTick(typeof options === 'function' ? options : callback, null, value)
}
fs.promises.readFile = function (file, options) {
  const value = answer(file, options)
  return value === undefined ? promisesReadFile.apply(this, arguments) : Promise.resolve(value)
}
syncBuiltinESMExports()

// A worker thread runs this preload too: the main thread's time is the one the wall time holds.
if (require('node:worker_threads').isMainThread) fs.writeFileSync(process.env.READFILE_UTF8_BENCH_FREE_READS_MS, String(performance.now() - t0))
