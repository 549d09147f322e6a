'use strict'
// One plain loop of calls of ours in a process of its own, for the calibrate
// suite: the addon is the bench build READFILE_UTF8_NATIVE_LIBRARY_PATH names,
// its thresholds set by READFILE_UTF8_TUNE.
//
//   node benchmark/calibrate-child.js <read|decode> <file> <calls> [--heap-mib N] [--idle-ms N]
//     read: readFileUtf8(file); decode: decodeUtf8 of the file's bytes;
//     native-decode: the addon's decoder alone; node-decode: Node's (utf8Slice).
//     --heap-mib: small objects kept alive first (a tool's heap).
//     --idle-ms: after the loop, a GC and this long idle before idleRss.
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
const lib = require(path.join(__dirname, '..'))
if (lib.engine() !== 'simdutf') throw new Error(`calibrate: the addon did not load (engine ${lib.engine()})`)

const kept = []
for (let mib = option('--heap-mib', 0), i = 0; i < mib * 8192; i++) kept.push({ i, s: `k${i}`, a: [i, i + 1] })

const bytes = fs.readFileSync(file)
const native = require('../lib/native')
const WORKLOADS = {
  read: () => lib.readFileUtf8(file).length,
  decode: () => lib.decodeUtf8(bytes).length,
  'native-decode': () => native.decodeUtf8(bytes).length,
  'node-decode': () => bytes.utf8Slice(0, bytes.length).length,
}
const call = WORKLOADS[workload]
if (!call) throw new Error(`unknown workload ${workload}`)

const status = (field) => Number(new RegExp(`${field}:\\s+(\\d+)`).exec(fs.readFileSync('/proc/self/status', 'latin1'))[1]) * 1024
const collect = (() => {
  require('node:v8').setFlagsFromString('--expose-gc')
  return require('node:vm').runInNewContext('gc')
})()

let sink = 0
for (let i = 0; i < Math.min(3, calls); i++) sink += call()
collect()
const times = new Float64Array(calls)
const t0 = process.hrtime.bigint()
for (let i = 0; i < calls; i++) {
  const t = process.hrtime.bigint()
  sink += call()
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
