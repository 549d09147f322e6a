'use strict'
// The JS side of this thread's pool of reader threads (src/exports/pool/):
// every async read — single ones and async batches — is queued there, and
// the pool's one wake-up callback settles the reads whose results are ready,
// many at a time, as they finish. The single reads started in one turn of
// the event loop (a Promise.all, a queue's next reads) go to the pool in one
// call, at the end of the turn's synchronous code.
const { setImmediate } = require('node:timers')
const native = require('./native')
const { FS_ANSWERS } = require('./errors')

let handle
/** id → what settles that read (its value: a string or a failure code). */
const waiting = new Map()
const took = []

/**
 * Settles the reads whose results are ready. While there were some, takes
 * again at the loop's next turn (timers and I/O run in between), the pool
 * leaving its wake-up unsent until a take finds nothing.
 */
function onReady() {
  took.length = 0
  const n = native.poolTake(handle, took)
  if (n > 0) setImmediate(onReady)
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

/** The single reads asked for in this turn, not yet handed to the pool. */
let asked = []

/** Hands this turn's single reads to the pool in one call. */
function submit() {
  const reads = asked
  asked = []
  const paths = reads.map((read) => read.arg)
  const flags = Int32Array.from(reads, (read) => read.flags)
  const cancellable = Uint8Array.from(reads, (read) => (read.cancellable ? 1 : 0))
  let first = -1
  try {
    first = native.poolReadEach(pool(), paths, flags, cancellable)
  } catch {
    // Never an uncaught error in a microtask: fs answers these reads instead.
  }
  reads.forEach((read, i) => {
    if (first < 0) return read.settle(FS_ANSWERS)
    read.id = (first + i) % 2 ** 32
    if (read.stopped) native.poolCancel(handle, read.id)
    waiting.set(read.id, read.settle)
  })
}

/**
 * Reads `arg` (a native argument: string, bytes or fd) on the pool. Returns
 * `{ promise, stop }`: the promise of its string or failure code (FS_ANSWERS
 * where fs must answer), and, if `cancellable`, the function that stops the
 * read at its next chunk (its promise then settles with a code the caller
 * ignores, having rejected already).
 */
function readOne(arg, flags, cancellable) {
  const read = { arg, flags, cancellable, id: undefined, stopped: false, settle: null }
  const promise = new Promise((resolve) => (read.settle = resolve))
  if (asked.length === 0) queueMicrotask(submit)
  asked.push(read)
  const stop = () => {
    if (read.id === undefined) read.stopped = true
    else native.poolCancel(handle, read.id)
  }
  return { promise, stop }
}

/**
 * Reads every entry of `args` that is not null on the pool, at most
 * `concurrency` at once; `each(i, value)` is called as each finishes.
 * Returns the function that gives up the reads not finished (an aborted
 * batch: they stop, and none keeps the event loop alive after it), or null
 * where fs must answer them all.
 */
function readAll(args, flags, concurrency, each) {
  const first = native.poolReadAll(pool(), args, flags, concurrency)
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
