'use strict'
// Tells the addon how much its thread's JS heap holds in small objects outside
// the young generation, once every few calls: large strings become external
// strings only while that is small, since only a full GC frees them and the
// pause of one grows with the objects it marks (src/limits.rs). The addon
// first asks for it (through `heapBytes`) when a string is large enough for
// it to matter: until then node:v8, which a process pays for in memory, is
// not loaded.
const native = require('./native')

let v8
let untilCheck = 0
// Bun's heap is JavaScriptCore's, which V8's rule does not fit, and asking it
// costs far more: no meter there (0: a heap not known to be large).
const METERED = process.versions.bun === undefined

/** What the heap holds in small objects outside the young generation. */
function heapBytes() {
  if (!METERED) return 0
  v8 ??= require('node:v8')
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

native.setHeapMeter(heapBytes)

/** Called before each native read or decode; `now`: whatever the count (a batch). */
function noteHeap(now = false) {
  // Nothing to tell until the addon first asked (v8 is loaded then).
  if (v8 === undefined || (--untilCheck > 0 && !now)) return
  untilCheck = native.noteHeapBytes(heapBytes())
}

module.exports = { noteHeap }
