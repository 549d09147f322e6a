'use strict'
// An AbortSignal given to our async reads and batches: one 'abort' listener
// per signal however many reads share it, none left once they settle (a
// leaked listener keeps the reads' state alive and warns past EventTarget's
// limit), an 'abort' event dispatched without abort() ignored (fs ignores it
// too), an object with `aborted` that is no EventTarget only looked at, and
// after an abort, fs.promises' AbortError with the reason as cause.
const { test } = require('node:test')
const assert = require('node:assert/strict')
const fs = require('node:fs')
const { getEventListeners } = require('node:events')
const { execFileSync } = require('node:child_process')

const lib = require('..')
const { scratch, unsupportedOnWindows } = require('./helpers')

const FILE = scratch('signal-listeners.txt')
const TEXT = 'signal é 中 😀\n'.repeat(2000)
fs.writeFileSync(FILE, TEXT)
const listeners = (signal) => getEventListeners(signal, 'abort').length

/**
 * What `reading` (a read of `fifo`, which no writer has opened) settles with
 * within 10 s, or 'not settled'; then a writer opens and closes the FIFO, so
 * the native open blocked in it returns and its thread is free again.
 */
async function settledBeforeAnyWriter(reading, fifo) {
  let timer
  const outcome = await Promise.race([reading, new Promise((resolve) => (timer = setTimeout(resolve, 10_000, 'not settled')))])
  clearTimeout(timer)
  fs.closeSync(fs.openSync(fifo, 'w'))
  await reading
  return outcome
}

const READS = {
  readFileUtf8Async: (signal, file = FILE) => lib.readFileUtf8Async(file, { signal }),
  'promises.readFile': (signal, file = FILE) => lib.promises.readFile(file, { encoding: 'utf8', signal }),
  readFile: (signal, file = FILE) => new Promise((resolve, reject) => lib.readFile(file, { encoding: 'utf8', signal }, (e, s) => (e ? reject(e) : resolve(s)))),
  readFilesUtf8Async: (signal, file = FILE) => lib.readFilesUtf8Async([file], { signal }).then(([s]) => s),
}

test('many reads sharing a signal: one listener while they run, none once they settle, no warning, and each result is fs\'s', async () => {
  const warnings = []
  const onWarning = (w) => warnings.push(w.name)
  process.on('warning', onWarning)
  try {
    for (const [name, read] of Object.entries(READS)) {
      const controller = new AbortController()
      const reads = Array.from({ length: 24 }, () => read(controller.signal))
      assert.equal(listeners(controller.signal), 1, name)
      const results = await Promise.all(reads)
      assert.ok(results.every((s) => s === TEXT), name)
      assert.equal(listeners(controller.signal), 0, `${name}: listeners left after the reads settled`)
    }
    await new Promise((resolve) => setImmediate(resolve))
    assert.deepEqual(warnings, [])
  } finally {
    process.off('warning', onWarning)
  }
})

test("an 'abort' event dispatched without abort() stops nothing; abort() then still rejects the next reads", async () => {
  for (const [name, read] of Object.entries(READS)) {
    const controller = new AbortController()
    const reading = read(controller.signal)
    controller.signal.dispatchEvent(new Event('abort'))
    assert.equal(await reading, TEXT, name)
    assert.equal(listeners(controller.signal), 0, name)
    const reason = new Error('stop')
    controller.abort(reason)
    const expected = await fs.promises.readFile(FILE, { encoding: 'utf8', signal: controller.signal }).catch((e) => e)
    const err = await read(controller.signal).catch((e) => e)
    assert.deepEqual([err.name, err.code, err.message, err.cause, err.constructor], [expected.name, expected.code, expected.message, reason, expected.constructor], name)
  }
})

test('reads aborted while they run reject with AbortError, and leave no listener', async () => {
  for (const [name, read] of Object.entries(READS)) {
    const controller = new AbortController()
    const reason = new Error('stop now')
    const reads = Array.from({ length: 8 }, () => read(controller.signal).then(() => 'resolved', (e) => e))
    controller.abort(reason)
    for (const err of await Promise.all(reads)) {
      assert.equal(err.name, 'AbortError', name)
      assert.equal(err.cause, reason, name)
    }
    assert.equal(listeners(controller.signal), 0, name)
  }
})

test('a signal fs accepts that is no EventTarget (an object with `aborted`) is only looked at, as fs.promises does', async () => {
  assert.equal(await fs.promises.readFile(FILE, { encoding: 'utf8', signal: { aborted: false } }), TEXT)
  for (const [name, read] of Object.entries(READS)) assert.equal(await read({ aborted: false }), TEXT, name)
})

test('a read blocked in open (a FIFO no writer has opened yet) rejects at the abort, before any data comes', unsupportedOnWindows('FIFOs (mkfifo)'), async () => {
  for (const [name, read] of Object.entries(READS)) {
    const fifo = scratch(`signal-blocked-${name}.fifo`)
    execFileSync('mkfifo', [fifo])
    const controller = new AbortController()
    const reason = new Error('stop while blocked')
    const reading = read(controller.signal, fifo).then(
      () => 'resolved',
      (e) => e,
    )
    setTimeout(() => controller.abort(reason), 20)
    // No writer opens the FIFO until the read has settled: only the abort can settle it.
    const err = await settledBeforeAnyWriter(reading, fifo)
    assert.equal(err.name, 'AbortError', name)
    assert.equal(err.cause, reason, name)
  }
})

test('a read that ends before its sibling on the same signal leaves the sibling stoppable', unsupportedOnWindows('FIFOs (mkfifo)'), async () => {
  for (const [name, read] of Object.entries(READS)) {
    const fifo = scratch(`signal-sibling-${name}.fifo`)
    execFileSync('mkfifo', [fifo])
    const controller = new AbortController()
    const blocked = read(controller.signal, fifo).then(() => 'resolved', (e) => e)
    // A read of a file on the same signal starts and ends first.
    assert.equal(await read(controller.signal), TEXT, name)
    controller.abort()
    const err = await settledBeforeAnyWriter(blocked, fifo)
    assert.equal(err.name, 'AbortError', name)
    assert.equal(listeners(controller.signal), 0, name)
  }
})
