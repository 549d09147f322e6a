'use strict'
// External strings keep their memory outside V8's heap. Unless V8's GC is told
// about it, a loop of reads grows RSS to gigabytes before any finalizer runs.
// Sync calls make them in the fast memory mode (the default; the lean mode
// copies where fs does), so every child here runs in it (FAST_MODE_ENV).
const { test } = require('node:test')
const assert = require('node:assert/strict')
const path = require('node:path')
const fs = require('node:fs')
const { spawnSync } = require('node:child_process')

const { scratch, FAST_MODE_ENV } = require('./helpers')

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
    const r = spawnSync(process.execPath, ['-e', script], { encoding: 'utf8', env: FAST_MODE_ENV })
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
  const r = spawnSync(process.execPath, ['--expose-gc', '-e', script], { encoding: 'utf8', env: FAST_MODE_ENV })
  assert.equal(r.status, 0, r.stderr)
  const { same, baseline, held, after } = JSON.parse(r.stdout)
  t.diagnostic(`RSS ${baseline.toFixed(0)} MiB before, ${held.toFixed(0)} right after the reads, ${after.toFixed(0)} 2 s later`)
  assert.equal(same, 8)
  assert.ok(after < baseline + 32, `RSS 2 s later: ${after.toFixed(0)} MiB (baseline ${baseline.toFixed(0)})`)
})

let batchFileList
/** 8 ASCII and 8 mixed-text files of 1 MiB: external strings on every Node in the fast mode (written once). */
function batchFiles() {
  if (batchFileList) return batchFileList
  const files = []
  for (let i = 0; i < 8; i++) {
    const ascii = scratch(`memory-batch-ascii-${i}.txt`)
    fs.writeFileSync(ascii, Buffer.alloc(1 << 20, 97 + i))
    const mixed = scratch(`memory-batch-mixed-${i}.txt`)
    fs.writeFileSync(mixed, Buffer.from(`mixed 中文 😀 text ${i}\n`.repeat(60000)).subarray(0, 1 << 20))
    files.push(ascii, mixed)
  }
  batchFileList = files
  return files
}

test(`loops of sync batches, only the last kept: V8 hears of each batch's strings once it is done, and RSS stays under ${LIMIT_MiB} MiB`, (t) => {
  const files = batchFiles()
  // Tight: the next batch reports the last one's bytes; yielding: a microtask does.
  for (const between of ['', 'await null']) {
    const script = `
      const { readFilesUtf8 } = require(${JSON.stringify(path.join(__dirname, '..'))})
      const files = ${JSON.stringify(files)}
      const expected = files.map((f) => require('node:fs').readFileSync(f, 'utf8'))
      ;(async () => {
        let batches = 0
        let same = true
        for (let i = 0; i < 300 && process.memoryUsage.rss() < ${LIMIT_MiB} * 2 ** 20; i++) {
          const got = readFilesUtf8(files)
          same &&= got.every((s, j) => s === expected[j])
          batches++
          ${between}
        }
        process.stdout.write(JSON.stringify({ batches, same, maxRssKiB: process.resourceUsage().maxRSS }))
      })()`
    const r = spawnSync(process.execPath, ['-e', script], { encoding: 'utf8', env: FAST_MODE_ENV })
    assert.equal(r.status, 0, r.stderr)
    const { batches, same, maxRssKiB } = JSON.parse(r.stdout)
    const peakMiB = maxRssKiB / 1024
    t.diagnostic(`${between || 'tight loop'}: peak RSS ${peakMiB.toFixed(0)} MiB over ${batches} batches`)
    assert.ok(peakMiB < LIMIT_MiB, `peak RSS ${peakMiB.toFixed(0)} MiB after ${batches} batches (${between || 'tight loop'})`)
    assert.equal(batches, 300)
    assert.ok(same, 'every string is fs.readFileSync')
  }
})

test("batch strings collected before their bytes are reported, batches that throw, and a loop of reads after: V8's count stays sound", () => {
  // Node 26 finalizes external strings on V8's GC threads too, and V8 stops
  // the process if its count of external memory would go below zero.
  const files = batchFiles()
  const script = `
    const { readFilesUtf8, readFileUtf8 } = require(${JSON.stringify(path.join(__dirname, '..'))})
    const files = ${JSON.stringify(files)}
    const missing = files[3] + '.missing'
    ;(async () => {
      for (let round = 0; round < 20; round++) {
        readFilesUtf8(files) // dropped at once
        globalThis.gc() // collected before the microtask reports it
        try {
          readFilesUtf8([...files, missing])
        } catch (err) {
          if (err.code !== 'ENOENT') throw err
        }
        const some = readFilesUtf8([...files.slice(0, 4), missing], { errors: 'return' })
        if (!(some[4] instanceof Error)) throw new Error('no error in its place')
        await null
        globalThis.gc()
        await new Promise((resolve) => setTimeout(resolve, 5))
      }
      let sink = 0
      for (let i = 0; i < 500; i++) sink += readFileUtf8(files[i % files.length]).length
      globalThis.gc()
      await new Promise((resolve) => setTimeout(resolve, 50))
      process.stdout.write(JSON.stringify({ sink, maxRssKiB: process.resourceUsage().maxRSS }))
    })()`
  const r = spawnSync(process.execPath, ['--expose-gc', '-e', script], { encoding: 'utf8', env: FAST_MODE_ENV })
  assert.equal(r.status, 0, `ended with ${r.signal ?? r.status}: ${r.stderr}`)
  const { sink, maxRssKiB } = JSON.parse(r.stdout)
  assert.ok(sink > 0)
  assert.ok(maxRssKiB / 1024 < LIMIT_MiB, `peak RSS ${(maxRssKiB / 1024).toFixed(0)} MiB`)
})

test('Workers that end right after a batch, before its bytes are reported: no V8 check fails, in them or after', () => {
  const files = batchFiles()
  const script = `
    const { Worker } = require('node:worker_threads')
    const code = \`
      const { readFilesUtf8 } = require(\${JSON.stringify(${JSON.stringify(path.join(__dirname, '..'))})})
      const files = \${JSON.stringify(${JSON.stringify(files)})}
      const kept = readFilesUtf8(files)
      if (process.env.EXIT_NOW) process.exit(0)
      globalThis.kept = kept
    \`
    ;(async () => {
      for (let i = 0; i < 12; i++) {
        const w = new Worker(code, { eval: true, env: i % 2 ? { EXIT_NOW: '1' } : {} })
        await new Promise((resolve, reject) => { w.on('exit', resolve); w.on('error', reject) })
      }
      const { readFilesUtf8 } = require(${JSON.stringify(path.join(__dirname, '..'))})
      let n = 0
      for (let i = 0; i < 20; i++) n += readFilesUtf8(${JSON.stringify(files)}).length
      globalThis.gc()
      await new Promise((resolve) => setTimeout(resolve, 50))
      process.stdout.write(String(n))
    })()`
  const r = spawnSync(process.execPath, ['--expose-gc', '-e', script], { encoding: 'utf8', env: FAST_MODE_ENV })
  assert.equal(r.status, 0, `ended with ${r.signal ?? r.status}: ${r.stderr}`)
  assert.equal(r.stdout, String(20 * files.length))
})

test('one sync batch of more strings than V8\'s external-memory step, nothing made before it: every string external, none copied', (t) => {
  // Its strings are all alive until it returns, so that V8 collected none of
  // them says nothing of a stalled GC: only strings made before it do.
  const file = batchFiles()[0] // 1 MiB of ASCII: external on every Node (fast mode)
  const script = `
    const { readFilesUtf8 } = require(${JSON.stringify(path.join(__dirname, '..'))})
    const expected = require('node:fs').readFileSync(${JSON.stringify(file)}, 'utf8')
    const mib = (n) => n / 2 ** 20
    const before = process.memoryUsage()
    const got = readFilesUtf8(new Array(160).fill(${JSON.stringify(file)}))
    const after = process.memoryUsage()
    process.stdout.write(JSON.stringify({ same: got.every((s) => s === expected), count: got.length,
      external: mib(after.external - before.external), heap: mib(after.heapUsed - before.heapUsed) }))`
  const r = spawnSync(process.execPath, ['-e', script], { encoding: 'utf8', env: FAST_MODE_ENV })
  assert.equal(r.status, 0, r.stderr)
  const { same, count, external, heap } = JSON.parse(r.stdout)
  t.diagnostic(`160 MiB from one batch: ${external.toFixed(0)} MiB external, ${heap.toFixed(0)} MiB in the heap`)
  assert.ok(same, 'every string is fs.readFileSync')
  assert.equal(count, 160)
  assert.ok(external > 150 && heap < 16, `${external.toFixed(0)} MiB external, ${heap.toFixed(0)} MiB in the heap`)
})

test("strings never collected: a single call's stay external, a sync batch's are copied into the heap in turns, each still fs.readFileSync", (t) => {
  // A caller that keeps every string gives V8 nothing to collect, as a loop
  // of batches that V8 never finishes a GC in does: batches then copy part of
  // the time. Single calls report each string, which steps V8's marking.
  const file = batchFiles()[0] // 1 MiB of ASCII: external on every Node (fast mode)
  const script = `
    const { readFileUtf8, readFilesUtf8 } = require(${JSON.stringify(path.join(__dirname, '..'))})
    const expected = require('node:fs').readFileSync(${JSON.stringify(file)}, 'utf8')
    const mib = (n) => n / 2 ** 20
    const kept = []
    const grew = (read) => {
      const before = process.memoryUsage()
      read()
      const after = process.memoryUsage()
      return { external: mib(after.external - before.external), heap: mib(after.heapUsed - before.heapUsed) }
    }
    const calls = grew(() => { for (let i = 0; i < 300; i++) kept.push(readFileUtf8(${JSON.stringify(file)})) })
    const batches = grew(() => { for (let i = 0; i < 10; i++) kept.push(...readFilesUtf8(new Array(30).fill(${JSON.stringify(file)}))) })
    process.stdout.write(JSON.stringify({ same: kept.every((s) => s === expected), count: kept.length, calls, batches }))`
  const r = spawnSync(process.execPath, ['-e', script], { encoding: 'utf8', env: FAST_MODE_ENV })
  assert.equal(r.status, 0, r.stderr)
  const { same, count, calls, batches } = JSON.parse(r.stdout)
  const show = (g) => `${g.external.toFixed(0)} MiB external, ${g.heap.toFixed(0)} MiB in the heap`
  t.diagnostic(`300 MiB kept from single calls: ${show(calls)}; 300 MiB from batches: ${show(batches)}`)
  assert.ok(same, 'every string is fs.readFileSync')
  assert.equal(count, 600)
  assert.ok(calls.external > 280 && calls.heap < 40, `single calls: ${show(calls)}`)
  assert.ok(batches.heap > 60 && batches.external > 60, `batches: ${show(batches)}`)
})
