'use strict'
// External strings keep their memory outside V8's heap. Unless V8's GC is told
// about it, a loop of reads grows RSS to gigabytes before any finalizer runs.
const { test } = require('node:test')
const assert = require('node:assert/strict')
const path = require('node:path')
const fs = require('node:fs')
const { spawnSync } = require('node:child_process')

const { scratch } = require('./helpers')

const LIMIT_MiB = 400

test(`3000 reads of a 1 MiB file of each class, nothing kept: peak RSS stays under ${LIMIT_MiB} MiB`, (t) => {
  const cases = {
    utf16: Buffer.from('mixed 中文 😀 text\n'.repeat(60000)).subarray(0, 1 << 20),
    latin1: Buffer.from('déjà vu à Noël\n'.repeat(80000)).subarray(0, 1 << 20),
    ascii: Buffer.alloc(1 << 20, 'a'),
  }
  for (const [kind, bytes] of Object.entries(cases)) {
    const file = scratch(`memory-${kind}.txt`)
    fs.writeFileSync(file, bytes)
    // A fresh process, so the peak is ours alone. It stops early once past the
    // limit, so that unbounded growth fails without taking the machine's memory.
    const script = `
      const { readFileUtf8 } = require(${JSON.stringify(path.join(__dirname, '..'))})
      const expected = require('node:fs').readFileSync(${JSON.stringify(file)}, 'utf8')
      let same = 0
      for (let i = 0; i < 3000 && process.memoryUsage.rss() < ${LIMIT_MiB} * 2 ** 20; i++) same += readFileUtf8(${JSON.stringify(file)}) === expected
      process.stdout.write(JSON.stringify({ same, maxRssKiB: process.resourceUsage().maxRSS }))`
    const r = spawnSync(process.execPath, ['-e', script], { encoding: 'utf8' })
    assert.equal(r.status, 0, r.stderr)
    const { same, maxRssKiB } = JSON.parse(r.stdout)
    const peakMiB = maxRssKiB / 1024
    t.diagnostic(`${kind}: peak RSS ${peakMiB.toFixed(0)} MiB`)
    assert.ok(peakMiB < LIMIT_MiB, `${kind}: peak RSS ${peakMiB.toFixed(0)} MiB after ${same} reads`)
    assert.equal(same, 3000, `${kind}: every read is fs's string`)
  }
})

test('buffers of huge reads are kept for a moment only: RSS back near the baseline 2 s after the strings are collected', (t) => {
  // 24 MiB of mixed text: a 24 MiB read buffer and ~40 MiB of UTF-16 per call,
  // both above the pool's huge-buffer size, so both go to the brief tier.
  const file = scratch('memory-huge.txt')
  fs.writeFileSync(file, Buffer.from('mixed 中文 😀 text\n'.repeat(24 << 16)).subarray(0, 24 << 20))
  const script = `
    const fs = require('node:fs')
    const { readFileUtf8 } = require(${JSON.stringify(path.join(__dirname, '..'))})
    const rss = () => process.memoryUsage.rss() / 2 ** 20
    const expected = fs.readFileSync(${JSON.stringify(file)}, 'utf8')
    globalThis.gc()
    const baseline = rss()
    let same = 0
    for (let i = 0; i < 8; i++) same += readFileUtf8(${JSON.stringify(file)}) === expected
    globalThis.gc()
    const held = rss()
    setTimeout(() => {
      process.stdout.write(JSON.stringify({ same, baseline, held, after: rss() }))
    }, 2000)`
  const r = spawnSync(process.execPath, ['--expose-gc', '-e', script], { encoding: 'utf8' })
  assert.equal(r.status, 0, r.stderr)
  const { same, baseline, held, after } = JSON.parse(r.stdout)
  t.diagnostic(`RSS ${baseline.toFixed(0)} MiB before, ${held.toFixed(0)} right after the reads, ${after.toFixed(0)} 2 s later`)
  assert.equal(same, 8)
  assert.ok(after < baseline + 32, `RSS 2 s later: ${after.toFixed(0)} MiB (baseline ${baseline.toFixed(0)})`)
})
