'use strict'
// setMemoryMode: its argument, its reach (the whole process), fs's strings in
// both modes from every API at the sizes where a string's making changes, and
// the peaks each mode promises: the lean mode's loop of reads peaks where fs's
// does, the default (fast) one's within its bound above fs's.
const { test } = require('node:test')
const assert = require('node:assert/strict')
const fs = require('node:fs')
const path = require('node:path')
const { spawnSync } = require('node:child_process')
const { Worker } = require('node:worker_threads')

// These tests expect the default memory mode, here and in their children.
delete process.env.READFILE_UTF8_MEMORY_MODE
const api = require('..')
const { scratch, defaultPeakBound } = require('./helpers')

// Node 26 makes strings of this many characters or more external (EXTERN_APEX).
const FS_EXTERNAL_UNITS = 0xfbee9

test('setMemoryMode takes \'fast\' (the default) or \'lean\', returns the mode it replaces, and throws fs\'s TypeError for anything else', () => {
  assert.equal(api.setMemoryMode('fast'), 'fast', 'fast is the default')
  assert.equal(api.setMemoryMode('lean'), 'fast')
  assert.equal(api.setMemoryMode('lean'), 'lean')
  assert.equal(api.setMemoryMode('fast'), 'lean')
  for (const bad of [undefined, null, 'Lean', 'FAST', '', 1, true, {}, ['lean']]) {
    assert.throws(
      () => api.setMemoryMode(bad),
      (err) => err instanceof TypeError && err.code === 'ERR_INVALID_ARG_VALUE' && /'mode' must be 'fast' or 'lean'/.test(err.message),
      String(bad),
    )
  }
  assert.equal(api.setMemoryMode('fast'), 'fast', 'a refused mode changes nothing')
})

test('the mode is the whole process\'s: a Worker sees the main thread\'s, and the main thread sees the Worker\'s', async () => {
  api.setMemoryMode('fast')
  const worker = new Worker(
    `const { parentPort } = require('node:worker_threads')
     parentPort.postMessage(require(${JSON.stringify(path.join(__dirname, '..'))}).setMemoryMode('lean'))`,
    { eval: true },
  )
  const [seen] = await Promise.all([new Promise((resolve, reject) => worker.on('message', resolve).on('error', reject)), new Promise((resolve) => worker.on('exit', resolve))])
  assert.equal(seen, 'fast')
  assert.equal(api.setMemoryMode('lean'), 'lean')
})

test('READFILE_UTF8_MEMORY_MODE sets the mode when the package loads; any other value is ignored with one warning', () => {
  const script = `const api = require(${JSON.stringify(path.join(__dirname, '..'))})
    process.stdout.write(api.setMemoryMode('fast'))`
  const run = (value) => spawnSync(process.execPath, ['-e', script], { encoding: 'utf8', env: { ...process.env, READFILE_UTF8_MEMORY_MODE: value } })
  const lean = run('lean')
  assert.equal(lean.status, 0, lean.stderr)
  assert.equal(lean.stdout, 'lean')
  assert.equal(lean.stderr, '')
  assert.equal(run('fast').stdout, 'fast')
  assert.equal(run('').stdout, 'fast', 'unset: the default')
  const bad = run('small')
  assert.equal(bad.status, 0, bad.stderr)
  assert.equal(bad.stdout, 'fast')
  assert.equal(bad.stderr.match(/READFILE_UTF8_BAD_MEMORY_MODE/g)?.length, 1, bad.stderr)
  assert.match(bad.stderr, /READFILE_UTF8_MEMORY_MODE must be 'fast' or 'lean', not 'small'/)
})

test('READFILE_UTF8_MEMORY_MODE applies when the main thread loads the package: a Worker loading it later leaves the mode the main thread set', () => {
  const script = `const api = require(${JSON.stringify(path.join(__dirname, '..'))})
    const { Worker } = require('node:worker_threads')
    const fromEnv = api.setMemoryMode('fast')
    const worker = new Worker('require(' + ${JSON.stringify(JSON.stringify(path.join(__dirname, '..')))} + '); require("node:worker_threads").parentPort.postMessage("loaded")', { eval: true })
    worker.once('message', async () => {
      await worker.terminate()
      process.stdout.write(fromEnv + ' ' + api.setMemoryMode('fast'))
    })`
  const r = spawnSync(process.execPath, ['-e', script], { encoding: 'utf8', env: { ...process.env, READFILE_UTF8_MEMORY_MODE: 'lean' } })
  assert.equal(r.status, 0, r.stderr)
  assert.equal(r.stdout, 'lean fast')
})

/** Files whose strings are just below and at each size where our making or fs's changes. */
function thresholdFiles() {
  const files = []
  const add = (name, bytes) => {
    const file = scratch(`memory-mode-${name}.txt`)
    fs.writeFileSync(file, bytes)
    files.push(file)
  }
  for (const units of [(64 << 10) - 1, 64 << 10, (128 << 10) - 1, 128 << 10, (512 << 10) - 1, 512 << 10, FS_EXTERNAL_UNITS - 1, FS_EXTERNAL_UNITS]) {
    add(`ascii-${units}`, Buffer.alloc(units, 'a'))
    // 'é' is one Latin-1 unit from two bytes; '中' one UTF-16 unit from three.
    add(`latin1-${units}`, Buffer.from('é'.repeat(units)))
    add(`utf16-${units}`, Buffer.from('中'.repeat(units - 1) + 'x'))
    add(`invalid-${units}`, Buffer.concat([Buffer.from('é'.repeat(units - 2)), Buffer.from([0xff, 0x41])]))
  }
  return files
}

test('in both modes every API gives fs\'s string at the sizes where the making of a string changes', async () => {
  const files = thresholdFiles()
  const expected = files.map((file) => fs.readFileSync(file, 'utf8'))
  for (const mode of ['lean', 'fast']) {
    api.setMemoryMode(mode)
    for (const [i, file] of files.entries()) {
      const label = `${mode}: ${path.basename(file)}`
      assert.ok(api.readFileUtf8(file) === expected[i], label)
      assert.ok(api.decodeUtf8(fs.readFileSync(file)) === expected[i], `${label} (decodeUtf8)`)
      assert.ok((await api.readFileUtf8Async(file)) === expected[i], `${label} (async)`)
    }
    assert.deepEqual(api.readFilesUtf8(files), expected, `${mode}: readFilesUtf8`)
    assert.deepEqual(await api.readFilesUtf8Async(files), expected, `${mode}: readFilesUtf8Async`)
  }
  api.setMemoryMode('lean')
})

test('in both modes, text either side of the size from which lean leaves it to V8\'s decoder, and of the size from which a read buffer is freed before a copy, is fs\'s string', () => {
  const MiB = 1 << 20
  const files = []
  for (const bytes of [4 * MiB - 1, 4 * MiB, 8 * MiB - 1, 8 * MiB, 32 * MiB - 1, 32 * MiB]) {
    for (const [name, unit] of [['latin1', 'é'], ['cjk', '中'], ['ascii', 'a']]) {
      const text = Buffer.from(unit.repeat(Math.ceil(bytes / Buffer.byteLength(unit))))
      // Whole characters, padded with ASCII to the exact size.
      const whole = text.subarray(0, bytes - (bytes % Buffer.byteLength(unit)))
      const file = scratch(`memory-mode-${name}-${bytes}.txt`)
      fs.writeFileSync(file, Buffer.concat([whole, Buffer.alloc(bytes - whole.length, 'x')]))
      files.push(file)
    }
    const invalid = scratch(`memory-mode-invalid-${bytes}.txt`)
    fs.writeFileSync(invalid, Buffer.concat([Buffer.from([0xff]), Buffer.from('é'.repeat((bytes - 1) >> 1)), Buffer.alloc((bytes - 1) & 1, 'x')]))
    files.push(invalid)
  }
  // Each file's bytes and fs's string once, for both modes.
  for (const file of files) {
    const bytes = fs.readFileSync(file)
    const expected = bytes.toString('utf8')
    for (const mode of ['lean', 'fast']) {
      api.setMemoryMode(mode)
      assert.ok(api.readFileUtf8(file) === expected, `${mode}: ${path.basename(file)}`)
      assert.ok(api.decodeUtf8(bytes) === expected, `${mode}: ${path.basename(file)} (decodeUtf8)`)
    }
  }
  api.setMemoryMode('lean')
  for (const file of files) fs.rmSync(file)
})

test('lean: the strings of sync calls that fs copies are copied (V8 counts no external bytes for them); async reads and batches, and the fast mode (the default), keep them external', () => {
  const file = scratch('memory-mode-held.txt')
  // Latin-1 text of 1 MiB: under Node 26's EXTERN_APEX in characters, so fs copies it on every Node.
  fs.writeFileSync(file, Buffer.from('déjà vu à Noël\n'.repeat(55000)))
  // A fresh process: no earlier test's strings are finalized while it counts.
  // Every string stays held to the end, so none of its own is either.
  const script = `
    const fs = require('node:fs')
    const api = require(${JSON.stringify(path.join(__dirname, '..'))})
    const file = ${JSON.stringify(file)}
    const expected = fs.readFileSync(file, 'utf8')
    const bytes = fs.readFileSync(file)
    const cases = [
      ['default', 'readFileUtf8', () => api.readFileUtf8(file)],
      ['lean', 'readFileUtf8', () => api.readFileUtf8(file)],
      ['lean', 'decodeUtf8', () => api.decodeUtf8(bytes)],
      ['lean', 'readFileUtf8Async', () => api.readFileUtf8Async(file)],
      ['lean', 'readFilesUtf8', () => api.readFilesUtf8([file])[0]],
      ['fast', 'readFileUtf8', () => api.readFileUtf8(file)],
      ['fast', 'decodeUtf8', () => api.decodeUtf8(bytes)],
    ]
    const kept = []
    ;(async () => {
      const growth = {}
      for (const [mode, name, read] of cases) {
        if (mode !== 'default') api.setMemoryMode(mode)
        const before = process.memoryUsage().external
        for (let i = 0; i < 8; i++) kept.push(await read())
        await new Promise(setImmediate) // a batch's bytes are reported after it returns
        growth[mode + ' ' + name] = process.memoryUsage().external - before
      }
      process.stdout.write(JSON.stringify({ growth, same: kept.every((text) => text === expected), length: expected.length }))
    })()`
  const r = spawnSync(process.execPath, ['-e', script], { encoding: 'utf8' })
  assert.equal(r.status, 0, r.stderr)
  const { growth, same, length } = JSON.parse(r.stdout)
  assert.ok(same, "fs's strings")
  // Other small external allocations may come and go meanwhile: less than one string's worth.
  const copied = (name) => assert.ok(growth[name] < length, `${name}: ${growth[name]} external bytes`)
  const external = (name) => assert.ok(growth[name] >= 8 * length, `${name}: ${growth[name]} external bytes`)
  external('default readFileUtf8')
  copied('lean readFileUtf8')
  copied('lean decodeUtf8')
  external('lean readFileUtf8Async')
  external('lean readFilesUtf8')
  external('fast readFileUtf8')
  external('fast decodeUtf8')
})

test('by default a sync read copies a string that fits V8\'s regular pages, and makes one that needs a large-object page external (Node 26: from 512 KiB)', () => {
  // Before Node 26, V8's kMaxRegularHeapObjectSize (128 KiB) is where a copy
  // starts to need fresh pages of its own; Node 26 copies cheaply further on.
  const from = Number(process.versions.node.split('.')[0]) >= 26 ? 512 << 10 : 128 << 10
  const files = [from - 1, from].map((bytes) => {
    const file = scratch(`memory-mode-external-${bytes}.txt`)
    fs.writeFileSync(file, Buffer.alloc(bytes, 'a'))
    return file
  })
  const script = `
    const api = require(${JSON.stringify(path.join(__dirname, '..'))})
    const kept = []
    const growth = ${JSON.stringify(files)}.map((file) => {
      const before = process.memoryUsage().external
      for (let i = 0; i < 8; i++) kept.push(api.readFileUtf8(file))
      return process.memoryUsage().external - before
    })
    process.stdout.write(JSON.stringify(growth))`
  const r = spawnSync(process.execPath, ['-e', script], { encoding: 'utf8' })
  assert.equal(r.status, 0, r.stderr)
  const [below, at] = JSON.parse(r.stdout)
  assert.ok(below < from, `${from - 1} bytes: ${below} external bytes after 8 reads (copied: none)`)
  assert.ok(at >= 8 * from, `${from} bytes: ${at} external bytes after 8 reads (external: all)`)
})

test('a loop of 1 MiB reads peaks within 1.25× of fs\'s loop in the lean mode, and within the default\'s bound by default', (t) => {
  const file = scratch('memory-mode-loop.txt')
  fs.writeFileSync(file, Buffer.from('déjà vu à Noël\n'.repeat(55000)))
  const peakMiB = (reader) => {
    const script = `
      const fs = require('node:fs')
      const ours = require(${JSON.stringify(path.join(__dirname, '..'))})
      const held = Array.from({ length: 1000 }, (_, i) => ({ i }))
      let read = (f) => fs.readFileSync(f, 'utf8')
      if (${JSON.stringify(reader)} !== 'fs') read = ours.readFileUtf8
      if (${JSON.stringify(reader)} === 'lean') ours.setMemoryMode('lean')
      const expected = fs.readFileSync(${JSON.stringify(file)}, 'utf8')
      let same = 0
      for (let i = 0; i < 256; i++) same += read(${JSON.stringify(file)}) === expected
      process.stdout.write(JSON.stringify({ same, maxRssKiB: process.resourceUsage().maxRSS }))`
    const r = spawnSync(process.execPath, ['-e', script], { encoding: 'utf8' })
    assert.equal(r.status, 0, r.stderr)
    const { same, maxRssKiB } = JSON.parse(r.stdout)
    assert.equal(same, 256, `${reader}: every read is fs's string`)
    return maxRssKiB / 1024
  }
  // Where V8 collects the young copies moves both peaks from one process to
  // the next: each reader's lowest of three runs is compared.
  const lowest = (reader) => Math.min(peakMiB(reader), peakMiB(reader), peakMiB(reader))
  const fsPeak = lowest('fs')
  const lean = lowest('lean')
  const ours = lowest('default')
  t.diagnostic(`lowest peak RSS of three runs: fs ${fsPeak.toFixed(0)} MiB, lean ${lean.toFixed(0)} MiB, default ${ours.toFixed(0)} MiB`)
  assert.ok(lean <= fsPeak * 1.25, `the lean peak ${lean.toFixed(0)} MiB against fs's ${fsPeak.toFixed(0)} MiB`)
  assert.ok(ours <= defaultPeakBound(fsPeak), `the default's peak ${ours.toFixed(0)} MiB against fs's ${fsPeak.toFixed(0)} MiB`)
})

test("a sync call's strings of half V8's external-memory step or more follow fs's own rule in the default mode too: copied before Node 26, external on it", () => {
  const file = scratch('memory-mode-huge.txt')
  // 36 MiB of Latin-1 text: more than half the 64 MiB step, more units than Node 26's EXTERN_APEX.
  fs.writeFileSync(file, Buffer.alloc(36 << 20, Buffer.from('déjà vu à Noël\n')))
  const script = `
    const fs = require('node:fs')
    const api = require(${JSON.stringify(path.join(__dirname, '..'))})
    const file = ${JSON.stringify(file)}
    const expected = fs.readFileSync(file, 'utf8')
    const bytes = fs.readFileSync(file)
    const kept = []
    const growth = {}
    for (const [name, read] of [['readFileUtf8', () => api.readFileUtf8(file)], ['decodeUtf8', () => api.decodeUtf8(bytes)]]) {
      const before = process.memoryUsage().external
      kept.push(read()) // one each: more would reach the step with none collected (copies_instead)
      growth[name] = process.memoryUsage().external - before
    }
    process.stdout.write(JSON.stringify({ growth, same: kept.every((text) => text === expected), length: expected.length }))`
  const r = spawnSync(process.execPath, ['-e', script], { encoding: 'utf8' })
  assert.equal(r.status, 0, r.stderr)
  const { growth, same, length } = JSON.parse(r.stdout)
  assert.ok(same, "fs's strings")
  const node26 = Number(process.versions.node.split('.')[0]) >= 26
  for (const [name, bytes] of Object.entries(growth)) {
    if (node26) assert.ok(bytes >= length, `${name}: ${bytes} external bytes, an external string as fs's`)
    else assert.ok(bytes < length, `${name}: ${bytes} external bytes, a copy as fs's`)
  }
})
