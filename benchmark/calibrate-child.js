'use strict'
// One plain loop of calls of ours in a process of its own, for the calibrate
// suite: the addon is the bench build READFILE_UTF8_NATIVE_LIBRARY_PATH names,
// its thresholds set by READFILE_UTF8_TUNE.
//
//   node benchmark/calibrate-child.js <workload> <file> <calls> [--heap-mib N] [--idle-ms N] [--lean]
//     read: readFileUtf8(file); decode: decodeUtf8 of the file's bytes;
//     native-decode: the addon's decoder alone; node-decode: Node's (utf8Slice);
//     batch, async-batch, async-all: <file> is a JSON list of paths, read by
//     readFilesUtf8, readFilesUtf8Async, or a Promise.all of readFileUtf8Async.
//     --heap-mib: small objects kept alive first (a tool's heap).
//     --idle-ms: after the loop, a GC and this long idle before idleRss.
//     --lean: setMemoryMode('lean') first.
//   prints { meanNs, medianNs, peakRss, idleRss } (peakRss: the loop's, over
//   the RSS before it; bytes).
const fs = require('node:fs')
const path = require('node:path')

const [workload, file, callsText, ...rest] = process.argv.slice(2)
const option = (flag, fallback) => {
  const i = rest.indexOf(flag)
  return i >= 0 ? Number(rest[i + 1]) : fallback
}
const calls = Number(callsText)
// The JS side's tuned values come from lib/limits, read as its modules load:
// READFILE_UTF8_TUNE's values for them are set there first (the addon reads
// its own from the variable).
const limits = require('../lib/limits')
for (const pair of (process.env.READFILE_UTF8_TUNE ?? '').split(',').filter(Boolean)) {
  const [name, value] = pair.split('=')
  if (Object.hasOwn(limits.table.tuned, name)) {
    limits[name] = Number(value)
    limits.table.tuned[name] = { ...limits.table.tuned[name], value: Number(value), byNode: undefined }
  }
}
const lib = require(path.join(__dirname, '..'))
if (lib.engine() !== 'simdutf') throw new Error(`calibrate: the addon did not load (engine ${lib.engine()})`)

const kept = []
for (let mib = option('--heap-mib', 0), i = 0; i < mib * 8192; i++) kept.push({ i, s: `k${i}`, a: [i, i + 1] })

if (rest.includes('--lean')) lib.setMemoryMode('lean')
const LISTS = ['batch', 'async-batch', 'async-all']
const list = LISTS.includes(workload) ? JSON.parse(fs.readFileSync(file, 'utf8')) : null
const bytes = list ? null : fs.readFileSync(file)
const native = require('../lib/native')
const total = (strings) => strings.reduce((n, s) => n + s.length, 0)
const WORKLOADS = {
  read: () => lib.readFileUtf8(file).length,
  decode: () => lib.decodeUtf8(bytes).length,
  'native-decode': () => native.decodeUtf8(bytes).length,
  'node-decode': () => bytes.utf8Slice(0, bytes.length).length,
  batch: () => total(lib.readFilesUtf8(list)),
  'async-batch': async () => total(await lib.readFilesUtf8Async(list)),
  'async-all': async () => total(await Promise.all(list.map((p) => lib.readFileUtf8Async(p)))),
}
const call = WORKLOADS[workload]
if (!call) throw new Error(`unknown workload ${workload}`)

const status = (field) => Number(new RegExp(`${field}:\\s+(\\d+)`).exec(fs.readFileSync('/proc/self/status', 'latin1'))[1]) * 1024
const collect = (() => {
  require('node:v8').setFlagsFromString('--expose-gc')
  return require('node:vm').runInNewContext('gc')
})()

async function main() {
  let sink = 0
  for (let i = 0; i < Math.min(3, calls); i++) sink += await call()
  collect()
  const times = new Float64Array(calls)
  const t0 = process.hrtime.bigint()
  for (let i = 0; i < calls; i++) {
    const t = process.hrtime.bigint()
    sink += list ? await call() : call()
    times[i] = Number(process.hrtime.bigint() - t)
  }
  const meanNs = Number(process.hrtime.bigint() - t0) / calls
  const peakRss = status('VmHWM')
  times.sort()
  collect()
  setTimeout(() => {
    collect()
    process.stdout.write(JSON.stringify({ meanNs, medianNs: times[calls >> 1], peakRss, idleRss: status('VmRSS'), sink, kept: kept.length }))
  }, option('--idle-ms', 0))
}

main()
