'use strict'
// The pool of reader threads behind the async reads, seen from outside: the
// entries of an async batch that the JS side reads (fds) leave the others'
// results whole wherever they stand in the list; an aborted batch's reads
// that end later give nothing to anyone; the process lives exactly as long as
// its reads (the event loop is kept for them, and let go after them, batch
// after batch); the readers are as many as the reads need, no more than the
// pool's cap; and a batch whose results the JS thread does not take yet
// holds a bounded amount of them (README: memory is bounded).
const { test } = require('node:test')
const assert = require('node:assert/strict')
const fs = require('node:fs')
const os = require('node:os')

const limits = require('../lib/limits')
const { scratch, unsupportedOnWindows, someTextFiles: someFiles, makeFifo, runPackageChild: runChild } = require('./helpers')

/** The child's count of our pool's reader threads (named readfile-utf8-pool; comm keeps 15 bytes). */
const POOL_THREADS = `function poolThreads() {
  return fs.readdirSync('/proc/self/task').filter((t) => {
    try { return fs.readFileSync('/proc/self/task/' + t + '/comm', 'utf8').trim() === 'readfile-utf8-p' } catch { return false }
  }).length
}`

test('an async batch whose JS side reads some entries (fds): each entry is what fs gives, wherever the fds stand, at every concurrency, batch after batch; the process waits for the last one and then exits', () => {
  const files = someFiles('pool-mixed', 6)
  const out = runChild(
    `const fs = require('node:fs')
    const files = ${JSON.stringify(files)}
    const expected = files.map((p) => fs.readFileSync(p, 'utf8'))
    // 'f' a path, 'd' an fd of the same file; the fds first, together, last, all, alternating.
    const shapes = ['dff', 'fddf', 'ffd', 'dd', 'fdfdfd', 'dddfff']
    ;(async () => {
      let same = 0, runs = 0
      for (const concurrency of [1, 2, 16]) {
        for (const shape of shapes) {
          const fds = []
          const list = [...shape].map((kind, i) => (kind === 'f' ? files[i] : (fds[fds.length] = fs.openSync(files[i], 'r'))))
          const [batch, single] = await Promise.all([api.readFilesUtf8Async(list, { concurrency }), api.readFileUtf8Async(files[5])])
          runs++
          if (batch.every((text, i) => text === expected[i]) && batch.length === shape.length && single === expected[5]) same++
          else console.log('differs:', shape, concurrency)
          for (const fd of fds) fs.closeSync(fd)
        }
      }
      console.log(same + ' of ' + runs)
      // Only the last batch's reads keep the process alive once the timer fired.
      setTimeout(() => api.readFilesUtf8Async(files).then((texts) => console.log(texts.join('') === expected.join(''))), 20)
    })()`,
    30_000,
  )
  assert.deepEqual(out, ['18 of 18', 'true'])
})

test("an aborted batch's read that ends after the abort gives its result to no one: the next batches and reads resolve as fs's, and the process exits on its own", unsupportedOnWindows('FIFOs (mkfifo)'), () => {
  const fifo = makeFifo('pool-late-fifo')
  const files = someFiles('pool-after-abort', 4)
  const out = runChild(
    `const fs = require('node:fs')
    const { spawn } = require('node:child_process')
    const files = ${JSON.stringify(files)}
    const expected = files.map((p) => fs.readFileSync(p, 'utf8')).join('')
    const controller = new AbortController()
    // Its reader waits in the FIFO's open; the others are queued behind it (concurrency 1).
    const aborted = api.readFilesUtf8Async([${JSON.stringify(fifo)}, ...files], { signal: controller.signal, concurrency: 1 }).then(() => 'resolved', (err) => err.name)
    setTimeout(() => controller.abort(), 100)
    // After the abort a writer comes: the stopped read ends, with a result for no one.
    spawn('timeout', ['10', 'sh', '-c', 'sleep 0.3; printf late > "$0"', ${JSON.stringify(fifo)}], { stdio: 'ignore' })
    setTimeout(async () => {
      console.log(await aborted)
      for (let round = 0; round < 3; round++) {
        const [batch, single] = await Promise.all([api.readFilesUtf8Async(files), api.readFileUtf8Async(files[2])])
        console.log(batch.join('') === expected, single === fs.readFileSync(files[2], 'utf8'))
      }
    }, 1000)`,
    20_000,
  )
  assert.deepEqual(out, ['AbortError', 'true true', 'true true', 'true true'])
})

test('two batches blocked in a silent FIFO, aborted one after the other: each rejects with AbortError and the process exits on its own', unsupportedOnWindows('FIFOs (mkfifo)'), () => {
  const silent = makeFifo('pool-silent-fifo')
  const files = someFiles('pool-two-blocked', 3)
  const out = runChild(
    `const files = ${JSON.stringify(files)}
    const fifo = ${JSON.stringify(silent)}
    const first = new AbortController(), second = new AbortController()
    const a = api.readFilesUtf8Async([fifo, ...files], { signal: first.signal, concurrency: 1 }).then(() => 'resolved', (err) => err.name)
    const b = api.readFilesUtf8Async([fifo, ...files], { signal: second.signal, concurrency: 1 }).then(() => 'resolved', (err) => err.name)
    setTimeout(async () => {
      first.abort()
      console.log(await a)
      second.abort()
      console.log(await b)
    }, 200)`,
    15_000,
  )
  assert.deepEqual(out, ['AbortError', 'AbortError'])
})

test("the pool starts a reader per read it has no idle reader for, and no more than its cap (libuv's four, or the cores up to BATCH_DEFAULT_THREADS) however many reads wait", unsupportedOnWindows('threads are counted by name in /proc/self/task (Linux)'), () => {
  const silent = makeFifo('pool-cap-fifo')
  const files = someFiles('pool-threads', 2)
  const cap = Math.max(4, Math.min(os.availableParallelism(), limits.BATCH_DEFAULT_THREADS))
  const out = runChild(
    `const fs = require('node:fs')
    ${POOL_THREADS}
    const files = ${JSON.stringify(files)}
    const fifo = ${JSON.stringify(silent)}
    ;(async () => {
      await api.readFileUtf8Async(files[0])
      const afterOne = poolThreads()
      // Reads that wait in the FIFO's open: four, then four more once those hold their readers.
      const controller = new AbortController()
      const wait = () => Array.from({ length: 4 }, () => api.readFileUtf8Async(fifo, { signal: controller.signal }).catch((err) => err.name))
      const blocked = wait()
      setTimeout(() => blocked.push(...wait()), 100)
      setTimeout(async () => {
        const many = poolThreads()
        controller.abort()
        const names = await Promise.all(blocked)
        // A writer lets the stopped reads end, so that the process can exit.
        fs.closeSync(fs.openSync(fifo, 'w'))
        console.log(afterOne, many, names.every((n) => n === 'AbortError'))
      }, 400)
    })()`,
    15_000,
  )
  // Eight reads wait: eight readers, or the cap.
  assert.deepEqual(out, [`1 ${Math.min(8, cap)} true`])
})

test('an async batch whose results the JS thread does not take yet holds at most BATCH_PENDING_MAX_BYTES of them, plus the files its readers are reading', unsupportedOnWindows('RSS is read from /proc/self/status (Linux)'), (t) => {
  const MiB = 2 ** 20
  const fileBytes = 16 * MiB
  const count = 24
  const concurrency = 4
  const body = Buffer.alloc(fileBytes, 'abcdefghijklmnopqrstuvwxyz0123456789\n')
  const files = Array.from({ length: count }, (_, i) => {
    const p = scratch(`pool-pending-${i}.txt`)
    fs.writeFileSync(p, body)
    return p
  })
  try {
    const out = runChild(
      `const fs = require('node:fs')
      const rss = () => Number(/VmRSS:\\s+(\\d+)/.exec(fs.readFileSync('/proc/self/status', 'utf8'))[1]) * 1024
      const files = ${JSON.stringify(files)}
      const before = rss()
      const reading = api.readFilesUtf8Async(files, { concurrency: ${concurrency} })
      // The JS thread waits without taking results (no turn of its loop), the readers go on.
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 4000)
      console.log(rss() - before)
      reading.then((texts) => console.log(texts.length, texts.every((t) => t.length === ${fileBytes})))`,
      60_000,
    )
    const held = Number(out[0])
    t.diagnostic(`held ${(held / MiB).toFixed(0)} MiB`)
    const bound = limits.BATCH_PENDING_MAX_BYTES + concurrency * fileBytes + 32 * MiB
    assert.ok(held <= bound, `held ${(held / MiB).toFixed(0)} MiB of results while the JS thread was away; the bound is ${(bound / MiB).toFixed(0)} MiB (all of them: ${(count * fileBytes) / MiB} MiB)`)
    assert.equal(out[1], `${count} true`)
  } finally {
    for (const p of files) fs.rmSync(p, { force: true })
  }
})

/** In a child run with --expose-gc: collects until `ref` is gone (a few rounds), then prints whether it is. */
const COLLECTED = `async function collected(ref) {
  for (let i = 0; i < 5 && ref.deref() !== undefined; i++) {
    await new Promise((resolve) => setTimeout(resolve, 20))
    gc()
  }
  return ref.deref() === undefined
}`

test('a settled async batch keeps nothing of its own: its array, once the caller drops it, is collected with no read after it, fds among its entries or not', () => {
  const files = someFiles('pool-collected', 3)
  const out = runChild(
    `const fs = require('node:fs')
    ${COLLECTED}
    const files = ${JSON.stringify(files)}
    ;(async () => {
      for (const withFd of [false, true]) {
        const fd = withFd ? fs.openSync(files[0], 'r') : null
        let texts = await api.readFilesUtf8Async(withFd ? [fd, files[1], files[2]] : files)
        if (fd !== null) fs.closeSync(fd)
        const ref = new WeakRef(texts)
        texts = null
        console.log(withFd, await collected(ref))
      }
    })()`,
    20_000,
    ['--expose-gc'],
  )
  assert.deepEqual(out, ['false true', 'true true'])
})

test('an aborted async batch keeps nothing of its own while its read stays blocked in a silent FIFO: its signal, once the caller drops it and the error, is collected', unsupportedOnWindows('FIFOs (mkfifo)'), () => {
  const silent = makeFifo('pool-collected-fifo')
  const files = someFiles('pool-collected-abort', 3)
  const out = runChild(
    `${COLLECTED}
    let controller = new AbortController()
    const ref = new WeakRef(controller.signal)
    let batch = api.readFilesUtf8Async([${JSON.stringify(silent)}, ...${JSON.stringify(files)}], { signal: controller.signal, concurrency: 1 })
    setTimeout(async () => {
      controller.abort()
      controller = null
      // The error's cause (the abort's reason) has a stack that holds the controller: dropped too.
      console.log(await batch.then(() => 'resolved', (err) => err.name))
      batch = null
      console.log(await collected(ref))
    }, 100)`,
    20_000,
    ['--expose-gc'],
  )
  assert.deepEqual(out, ['AbortError', 'true'])
})

test('a read whose signal aborts in the turn it started is never handed to a reader: no reader opens its FIFO (a writer opening it without blocking finds no reader, ENXIO)', unsupportedOnWindows('FIFOs (mkfifo)'), () => {
  const fifo = makeFifo('pool-stopped-fifo')
  const out = runChild(
    `const fs = require('node:fs')
    const controller = new AbortController()
    const reading = api.readFileUtf8Async(${JSON.stringify(fifo)}, { signal: controller.signal }).then(() => 'resolved', (err) => err.name)
    controller.abort()
    setTimeout(async () => {
      console.log(await reading)
      try {
        fs.closeSync(fs.openSync(${JSON.stringify(fifo)}, fs.constants.O_WRONLY | fs.constants.O_NONBLOCK))
        console.log('a reader had it open')
      } catch (err) {
        console.log(err.code)
      }
    }, 300)`,
    15_000,
  )
  assert.deepEqual(out, ['AbortError', 'ENXIO'])
})
