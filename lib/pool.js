'use strict'
// The JS side of this thread's pool of reader threads (src/exports/pool/):
// every async read — single ones and async batches — is queued there, and
// the pool's one wake-up callback settles the reads whose results are ready,
// many at a time, as they finish. The single reads started in one turn of
// the event loop (a Promise.all, a queue's next reads) go to the pool in few
// calls: a run of them (BATCH_RUN, the results taken at a time) as soon as
// it is asked for, so the readers start while the caller asks for more, and
// the rest at the end of the turn's synchronous code.
const { setImmediate } = require('node:timers')
const native = require('./native')
const { FS_ANSWERS, CANCELLED } = require('./errors')
const { BATCH_RUN } = require('./limits')

let handle
/** id → the read (a Read, or an entry of a readAll) whose `settled(value)` takes its string or failure code. */
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
    const read = waiting.get(took[i])
    waiting.delete(took[i])
    read?.settled(took[i + 1])
  }
  took.length = 0
}

function pool() {
  handle ??= native.poolOpen(onReady)
  return handle
}

/** The single reads asked for in this turn, not yet handed to the pool. */
let asked = []

/** Hands the single reads asked for since the last hand-over to the pool, in one call. */
function submit() {
  const reads = asked
  if (reads.length === 0) return
  asked = []
  const paths = new Array(reads.length)
  const flags = new Int32Array(reads.length)
  const cancellable = new Uint8Array(reads.length)
  for (let i = 0; i < reads.length; i++) {
    paths[i] = reads[i].arg
    flags[i] = reads[i].flags
    cancellable[i] = reads[i].cancellable ? 1 : 0
  }
  let first = -1
  try {
    first = native.poolReadEach(pool(), paths, flags, cancellable)
  } catch {
    // Never an uncaught error in a microtask: fs answers these reads instead.
  }
  if (first < 0) {
    // Later, as the pool's results: a hand-over may run inside a caller's call.
    queueMicrotask(() => reads.forEach((read) => read.settled(FS_ANSWERS)))
    return
  }
  for (let i = 0; i < reads.length; i++) {
    const read = reads[i]
    read.id = (first + i) % 2 ** 32
    waiting.set(read.id, read)
  }
}

/**
 * One single read: what it asks the pool for and its id there once handed
 * over. A subclass says what settles it: `settled(value)`, called once with
 * its string or failure code (FS_ANSWERS where fs must answer), from the
 * pool's wake-up, never before this turn's synchronous code ends; it must not
 * throw. The read is the one object a read keeps on our side: no closures.
 */
class Read {
  constructor(arg, flags, cancellable) {
    this.arg = arg
    this.flags = flags
    this.cancellable = cancellable
    this.id = undefined
  }

  /**
   * Stops the read at its next chunk, or before it starts: one not handed
   * over yet never is (no reader opens its file). It is settled all the
   * same, with a code its caller ignores.
   */
  stop() {
    if (this.id !== undefined) return native.poolCancel(handle, this.id)
    const i = asked.indexOf(this)
    if (i < 0) return // its hand-over failed: it is being settled already
    asked.splice(i, 1)
    queueMicrotask(() => this.settled(CANCELLED))
  }
}

/**
 * Starts `read` (a Read: its `arg` a native argument, string, bytes or fd) on
 * the pool. No promise of its own: the caller's is the one promise a read
 * makes. `read.stop()` stops it if it is `cancellable`.
 */
function readOne(read) {
  if (asked.length === 0) queueMicrotask(submit)
  if (asked.push(read) === BATCH_RUN) submit()
}

/** An entry of a readAll, settled as `each(i, value)`. */
class Entry {
  constructor(i, each) {
    this.i = i
    this.each = each
  }

  settled(value) {
    this.each(this.i, value)
  }
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
    if (args[i] !== null) waiting.set(id(i), new Entry(i, each))
  }
  return () => {
    native.poolForget(handle, first)
    for (let i = 0; i < args.length; i++) waiting.delete(id(i))
  }
}

module.exports = { Read, readOne, readAll }
