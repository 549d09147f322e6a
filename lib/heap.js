'use strict'
// Tells the addon how much its thread's JS heap holds in small objects outside
// the young generation, once every few calls: large strings become external
// strings only while that is small, since only a full GC frees them and the
// pause of one grows with the objects it marks (src/limits.rs).
const v8 = require('node:v8')

const native = require('./native')

let untilCheck = 0

/** Called before each native read or decode; `now`: whatever the count (a batch). */
function noteHeap(now = false) {
  if (--untilCheck > 0 && !now) return
  let bytes = 0
  // Left out: young objects, which a scavenge frees (the copies a loop of
  // reads makes are among them), and large objects, mostly strings and
  // arrays of numbers, which a full GC marks at once however large they are.
  for (const space of v8.getHeapSpaceStatistics()) {
    const name = space.space_name
    if (!name.startsWith('new_') && !name.includes('large_object')) bytes += space.space_used_size
  }
  untilCheck = native.noteHeapBytes(bytes)
}

module.exports = { noteHeap }
