'use strict'
// One reader in a process of its own (Node or Bun), for the mixed suite:
//
//   <runtime> [--expose-gc] benchmark/mixed-child.js passes <reader> <list.json> [--passes N] [--idle-ms N]
//     reads the list of files (a pass) once untimed, then N times, each pass
//     timed; then once more holding every string; prints { passMs: [...],
//     peakRss, heldRss, idleRss } (bytes; heldRss: RSS while one pass's
//     strings are all alive; idleRss: after they are dropped, a GC and
//     --idle-ms of idleness).
//   <runtime> benchmark/mixed-child.js cells <reader> <cells.json> [--loop-ms N]
//     for each file of the list in turn, in this one process, a plain loop of
//     reads of it; prints [ns per call of each].
//
// Readers: fs (fs.readFileSync(p, 'utf8')), toString (fs.readFileSync(p).toString()),
// ours (readFileUtf8, the default memory mode), lean (after setMemoryMode('lean'));
// under Bun, fs is Bun's readFileSync.
const fs = require('node:fs')
const path = require('node:path')

const [command, name, listFile, ...rest] = process.argv.slice(2)
const option = (flag, fallback) => {
  const i = rest.indexOf(flag)
  return i >= 0 ? Number(rest[i + 1]) : fallback
}

function reader(which) {
  if (which === 'fs') return (p) => fs.readFileSync(p, 'utf8')
  if (which === 'toString') return (p) => fs.readFileSync(p).toString()
  const lib = require(path.join(__dirname, '..'))
  if (which === 'lean') lib.setMemoryMode('lean')
  else if (which !== 'ours') throw new Error(`unknown reader ${which}`)
  return lib.readFileUtf8
}

/** The length of one read's text: the string lives only in this frame (see readers.js textLength). */
function textLength(read, file) {
  return read(file).length
}

/** A full GC: Bun's own, or Node's gc() made available without a flag. */
const collect =
  typeof Bun !== 'undefined'
    ? () => Bun.gc(true)
    : (() => {
        require('node:v8').setFlagsFromString('--expose-gc')
        return require('node:vm').runInNewContext('gc')
      })()

function peakRss() {
  const status = fs.readFileSync('/proc/self/status', 'latin1')
  return Number(/VmHWM:\s+(\d+)/.exec(status)[1]) * 1024
}

async function passes(read, files) {
  let sink = 0
  const pass = () => {
    const t0 = process.hrtime.bigint()
    for (const file of files) sink += textLength(read, file)
    return Number(process.hrtime.bigint() - t0) / 1e6
  }
  pass()
  const passMs = []
  for (let i = option('--passes', 5); i > 0; i--) passMs.push(pass())
  const peak = peakRss()
  const held = files.map((file) => read(file))
  const heldRss = process.memoryUsage.rss()
  sink += held.length
  held.length = 0
  collect()
  await new Promise((resolve) => setTimeout(resolve, option('--idle-ms', 1000)))
  collect()
  if (sink === 0) throw new Error('nothing was read')
  return { passMs, peakRss: peak, heldRss, idleRss: process.memoryUsage.rss() }
}

function cells(read, files) {
  const loopNs = option('--loop-ms', 150) * 1e6
  let sink = 0
  return files.map((file) => {
    // A few calls untimed, then batches until the loop's time is up; the
    // median batch's time per call.
    for (let i = 0; i < 3; i++) sink += textLength(read, file)
    const perCall = []
    const end = process.hrtime.bigint() + BigInt(loopNs)
    let batch = 1
    while (process.hrtime.bigint() < end || perCall.length < 5) {
      const t0 = process.hrtime.bigint()
      for (let i = 0; i < batch; i++) sink += textLength(read, file)
      const ns = Number(process.hrtime.bigint() - t0)
      perCall.push(ns / batch)
      if (ns < 50_000) batch *= 2
    }
    if (sink === 0) throw new Error('nothing was read')
    perCall.sort((a, b) => a - b)
    return perCall[Math.floor(perCall.length / 2)]
  })
}

async function main() {
  const read = reader(name)
  const files = JSON.parse(fs.readFileSync(listFile, 'utf8'))
  const result = command === 'passes' ? await passes(read, files) : cells(read, files)
  process.stdout.write(`${JSON.stringify(result)}\n`)
}

main().catch((err) => {
  process.stderr.write(`${err.stack || err}\n`)
  process.exitCode = 1
})
