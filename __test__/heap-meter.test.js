'use strict'
// lib/heap.js: what the addon is told of the JS heap, and when (its external
// strings depend on it, see src/plan.rs): nothing, and node:v8 not loaded,
// until the first string large enough to ask; then the heap's small objects
// outside the young generation (not its large objects nor its young ones),
// measured again once HEAP_CHECK_EVERY strings were made since.
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

test('the heap is measured only once a string could be external, then once per the table\'s count of strings', () => {
  const script = `
    const heap = require(${JSON.stringify(path.join(ROOT, 'lib', 'heap.js'))})
    const { HEAP_CHECK_EVERY } = require(${JSON.stringify(path.join(ROOT, 'lib', 'limits.js'))})
    let strings = 0
    const measures = []
    const measure = heap.heapBytes
    // The addon takes the meter when it loads: wrapped before that.
    heap.heapBytes = () => { const bytes = measure(); measures.push({ at: strings, bytes }); return bytes }
    const lib = require(${JSON.stringify(ROOT)})
    const v8Loaded = () => process.moduleLoadList.includes('NativeModule v8')
    const small = () => { strings++; return lib.readFileUtf8(${JSON.stringify(SMALL)}) }
    const big = () => { strings++; return lib.readFileUtf8(${JSON.stringify(BIG)}) }
    for (let i = 0; i < 200; i++) small()
    const before = { v8: v8Loaded(), measures: measures.length }
    ;(async () => {
      strings++
      await lib.readFileUtf8Async(${JSON.stringify(BIG)})
      const afterLarge = { v8: v8Loaded(), measures: measures.length }
      for (let i = 0; i < 300; i++) small()
      const afterSmall = measures.length
      // A large string after many: measured; the next large one uses that figure,
      // until HEAP_CHECK_EVERY strings were made since.
      big()
      const stale = measures.length
      big()
      for (let i = 0; i < HEAP_CHECK_EVERY - 3; i++) small()
      big()
      const young = measures.length
      big()
      const old = measures.length
      // An array of 32 MiB (a large object) and young objects alive: neither counts.
      const { getHeapSpaceStatistics } = require('node:v8')
      const large = new Array(4 << 20).fill(0.5)
      const kept = Array.from({ length: 1e5 }, (_, i) => ({ i }))
      const spaces = getHeapSpaceStatistics()
      const oldSpaces = spaces.filter((s) => !s.space_name.startsWith('new_') && !s.space_name.includes('large_object')).reduce((a, s) => a + s.space_used_size, 0)
      const all = spaces.reduce((a, s) => a + s.space_used_size, 0)
      const told = heap.heapBytes()
      process.stdout.write(JSON.stringify({ before, afterLarge, afterSmall, stale, young, old, off: Math.abs(told - oldSpaces), rest: all - oldSpaces, kept: large.length + kept.length }))
    })()`
  const r = spawnSync(process.execPath, ['-e', script], { encoding: 'utf8', timeout: 60_000 })
  assert.equal(r.status, 0, r.stderr)
  const out = JSON.parse(r.stdout)
  assert.deepEqual(out.before, { v8: false, measures: 0 }, 'no measure, and no node:v8, before a string could be external')
  assert.deepEqual(out.afterLarge, { v8: true, measures: 1 }, 'a large string asked for the heap, once')
  assert.equal(out.afterSmall, 1, 'small strings never ask')
  assert.equal(out.stale, 2, 'a figure many strings old is measured again')
  assert.equal(out.young, 2, 'a figure fewer than HEAP_CHECK_EVERY strings old is used as it is')
  assert.equal(out.old, 3, 'from HEAP_CHECK_EVERY strings on it is measured again')
  // What is told is the heap's small objects outside the young generation, far from the whole heap.
  assert.ok(out.rest >= 32 << 20, `large and young objects: ${out.rest}`)
  assert.ok(out.off < 1 << 20, `told ${out.off} bytes off the old generation's small objects`)
})
