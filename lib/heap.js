'use strict'
// Tells the addon how much its thread's JS heap holds outside the young
// generation, once every few calls: large strings become external strings only
// while that is small, since only a full GC frees them and the pause of one
// grows with the heap it marks (src/limits.rs).
const v8 = require('node:v8')

const native = require('./native')

let untilCheck = 0

/** Called before each native read or decode; `now`: whatever the count (a batch). */
function noteHeap(now = false) {
  if (--untilCheck > 0 && !now) return
  let bytes = 0
  // Young objects are left out: a scavenge frees them, and the copies a loop
  // of reads makes are among them.
  for (const space of v8.getHeapSpaceStatistics()) {
    if (!space.space_name.startsWith('new_')) bytes += space.space_used_size
  }
  untilCheck = native.noteHeapBytes(bytes)
}

module.exports = { noteHeap }
