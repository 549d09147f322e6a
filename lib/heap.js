'use strict'
// Tells the addon how much its thread's JS heap holds in small objects outside
// the young generation, once every few calls: large strings become external
// strings only while that is small, since only a full GC frees them and the
// pause of one grows with the objects it marks (src/limits.rs). Until some
// string could be external, the heap is not measured and node:v8, which a
// process pays for in memory, is not loaded.
const native = require('./native')

let v8
let untilCheck = 0

/** What the heap holds in small objects outside the young generation. */
function heapBytes() {
  let bytes = 0
  // Left out: young objects, which a scavenge frees (the copies a loop of
  // reads makes are among them), and large objects, mostly strings and
  // arrays of numbers, which a full GC marks at once however large they are.
  for (const space of v8.getHeapSpaceStatistics()) {
    const name = space.space_name
    if (!name.startsWith('new_') && !name.includes('large_object')) bytes += space.space_used_size
  }
  return bytes
}

/** Called before each native read or decode; `now`: whatever the count (a batch). */
function noteHeap(now = false) {
  if (--untilCheck > 0 && !now) return
  if (v8 === undefined) {
    // -1: not measured; the addon answers 0 once the heap's size matters.
    untilCheck = native.noteHeapBytes(-1)
    if (untilCheck > 0) return
    v8 = require('node:v8')
  }
  untilCheck = native.noteHeapBytes(heapBytes())
}

module.exports = { noteHeap }
