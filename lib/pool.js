'use strict'
// The JS side of this thread's pool of reader threads (src/exports/pool.rs):
// every async read — single ones and async batches — is queued there, and
// the pool's one wake-up callback settles the reads whose results are ready,
// many at a time, as they finish.
const native = require('./native')
const { FS_ANSWERS } = require('./errors')

let handle
/** id → what settles that read (its value: a string or a failure code). */
const waiting = new Map()
let took = []

function onReady() {
  took.length = 0
  const n = native.poolTake(handle, took)
  for (let i = 0; i < 2 * n; i += 2) {
    const settle = waiting.get(took[i])
    waiting.delete(took[i])
    settle?.(took[i + 1])
  }
  took.length = 0
}

function pool() {
  handle ??= native.poolOpen(onReady)
  return handle
}

/**
 * Reads `arg` (a native argument: string, bytes or fd) on the pool: a promise
 * of its string or failure code (FS_ANSWERS where fs must answer). `cancel`
 * (a ReadCancel) stops it at its next chunk.
 */
function readOne(arg, flags, cancel) {
  const id = native.poolRead(pool(), arg, flags, cancel)
  if (id < 0) return Promise.resolve(FS_ANSWERS)
  return new Promise((resolve) => waiting.set(id, resolve))
}

/**
 * Reads every entry of `args` that is not null on the pool, at most
 * `concurrency` at once; `each(i, value)` is called as each finishes.
 * Returns the function that gives up the reads not finished (an aborted
 * batch: none of them keeps the event loop alive after it), or null where
 * fs must answer them all.
 */
function readAll(args, flags, concurrency, cancel, each) {
  const first = native.poolReadAll(pool(), args, flags, concurrency, cancel)
  if (first < 0) return null
  const id = (i) => (first + i) % 2 ** 32
  for (let i = 0; i < args.length; i++) {
    if (args[i] !== null) waiting.set(id(i), (value) => each(i, value))
  }
  return () => {
    native.poolForget(handle, first)
    for (let i = 0; i < args.length; i++) waiting.delete(id(i))
  }
}

module.exports = { readOne, readAll }
