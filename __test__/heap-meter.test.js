'use strict'
// lib/heap.js: what the addon is told of the JS heap, and when (its external
// strings depend on it, see src/limits.rs): nothing, and node:v8 not loaded,
// until the first string large enough to ask; then the heap's small objects
// outside the young generation (not its large objects nor its young ones),
// before a batch at once, and otherwise once per the count the addon gives.
const { test } = require('node:test')
const assert = require('node:assert/strict')
const fs = require('node:fs')
const path = require('node:path')
const { spawnSync } = require('node:child_process')

const { scratch } = require('./helpers')

const ROOT = path.join(__dirname, '..')
const SMALL = scratch('heap-small.txt')
const BIG = scratch('heap-big.txt')
fs.writeFileSync(SMALL, 'small é')
fs.writeFileSync(BIG, 'a'.repeat(8 << 20))

test('the heap is measured only once a string could be external, then at a batch and once per the addon\'s count', () => {
  const script = `
    const native = require(${JSON.stringify(path.join(ROOT, 'lib', 'native.js'))})
    const lib = require(${JSON.stringify(ROOT)})
    const v8Loaded = () => process.moduleLoadList.includes('NativeModule v8')
    let reads = 0
    const notes = []
    const note = native.noteHeapBytes
    native.noteHeapBytes = (bytes) => { const next = note(bytes); notes.push({ at: reads, bytes, next }); return next }
    const read = () => { reads++; return lib.readFileUtf8(${JSON.stringify(SMALL)}) }
    for (let i = 0; i < 200; i++) read()
    const before = { v8: v8Loaded(), notes: notes.length }
    ;(async () => {
      await lib.readFileUtf8Async(${JSON.stringify(BIG)})
      const afterLarge = v8Loaded()
      notes.length = 0
      for (let i = 0; i < 300; i++) read()
      const loop = notes.map((n) => [n.at, n.next])
      notes.length = 0
      lib.readFilesUtf8([${JSON.stringify(SMALL)}])
      const batch = notes.length
      // An array of 32 MiB (a large object) and young objects alive: neither counts.
      const { getHeapSpaceStatistics } = require('node:v8')
      const large = new Array(4 << 20).fill(0.5)
      const young = Array.from({ length: 1e5 }, (_, i) => ({ i }))
      const spaces = getHeapSpaceStatistics()
      const old = spaces.filter((s) => !s.space_name.startsWith('new_') && !s.space_name.includes('large_object')).reduce((a, s) => a + s.space_used_size, 0)
      const all = spaces.reduce((a, s) => a + s.space_used_size, 0)
      notes.length = 0
      lib.readFilesUtf8([${JSON.stringify(SMALL)}])
      const told = notes[0].bytes
      process.stdout.write(JSON.stringify({ before, afterLarge, loop, batch, off: Math.abs(told - old), rest: all - old, kept: large.length + young.length }))
    })()`
  const r = spawnSync(process.execPath, ['-e', script], { encoding: 'utf8', timeout: 60_000 })
  assert.equal(r.status, 0, r.stderr)
  const out = JSON.parse(r.stdout)
  assert.deepEqual(out.before, { v8: false, notes: 0 }, 'no measure, and no node:v8, before a string could be external')
  assert.equal(out.afterLarge, true, 'a large string asked for the heap')
  // The first read after that tells the heap, and each told count of reads later the next one does.
  assert.ok(out.loop.length >= 4, JSON.stringify(out.loop))
  assert.equal(out.loop[0][0], 201)
  for (let i = 1; i < out.loop.length; i++) assert.equal(out.loop[i][0] - out.loop[i - 1][0], out.loop[i - 1][1], JSON.stringify(out.loop))
  assert.equal(out.batch, 1, 'a batch tells the heap at once')
  // What was told is the heap's small objects outside the young generation: within
  // what the read itself adds of the measure taken just before, far from the whole heap.
  assert.ok(out.rest > 40 << 20, `large and young objects: ${out.rest}`)
  assert.ok(out.off < 1 << 20, `told ${out.off} bytes off the old generation's small objects`)
})
