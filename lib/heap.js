'use strict'
// The function that measures what this thread's JS heap holds in small
// objects outside the young generation, which lib/native.js gives the addon
// (src/heap.rs): large strings are external only while that is small, since
// only a full GC frees them and the pause of one grows with the objects it
// marks. The addon calls it when a string is first large enough for it to
// matter, and again every few strings (lib/limits.json's HEAP_CHECK_EVERY):
// until then node:v8, which a process pays for in memory, is not loaded. The
// figure flows one way, asked for.
let v8

/** What the heap holds in small objects outside the young generation. */
function heapBytes() {
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

module.exports = { heapBytes }
