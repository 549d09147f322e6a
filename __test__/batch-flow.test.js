'use strict'
// The control flow of async batches, from the README: readFilesUtf8Async is
// Promise.all over fs.promises.readFile (every entry read) with
// `options.signal`; an aborted signal rejects with fs's AbortError at once,
// even mid-read, and stops the read — for the entries the JS side answers
// (fds, forms only fs judges) as for the native readers'. Like fs.promises,
// a settled batch holds nothing: the process exits when its work is done,
// and a signal shared by many calls keeps none of their listeners.
const { test } = require('node:test')
const assert = require('node:assert/strict')
const fs = require('node:fs')
const { getEventListeners } = require('node:events')

const { readFilesUtf8Async, readFileUtf8Async } = require('..')
const { unsupportedOnWindows, someTextFiles: someFiles, makeFifo, runPackageChild: runChild } = require('./helpers')

test('the process exits on its own once its async batches settle: resolved, rejected, with errors returned, with a signal never aborted', () => {
  const files = someFiles('exits', 30)
  const out = runChild(
    `const files = ${JSON.stringify(files)}
    const controller = new AbortController()
    ;(async () => {
      console.log((await api.readFilesUtf8Async(files)).length)
      console.log(await api.readFilesUtf8Async([...files, '/no/such/file']).catch((e) => e.code + ' ' + e.index))
      console.log((await api.readFilesUtf8Async(['/no/such/file', ...files], { errors: 'return', concurrency: 2 }))[0].code)
      console.log((await api.readFilesUtf8Async(files, { signal: controller.signal })).length)
      console.log((await api.readFileUtf8Async(files[3], { signal: controller.signal })).length > 0)
    })()`,
    20_000,
  )
  assert.deepEqual(out, ['30', 'ENOENT 30', 'ENOENT', '30', 'true'])
})

test("an abort reaches the entries the JS side reads: a batch holding a caller's fd of a silent FIFO rejects with fs's AbortError at once", unsupportedOnWindows('FIFOs (mkfifo)'), () => {
  const fifo = makeFifo('flow-fifo')
  const files = someFiles('flow-abort', 3)
  const out = runChild(
    `const fs = require('node:fs')
    const files = ${JSON.stringify(files)}
    // Opened read-write, so that the open does not wait; no one writes.
    const fd = fs.openSync(${JSON.stringify(fifo)}, 'r+')
    const controller = new AbortController()
    const started = Date.now()
    const reading = api.readFilesUtf8Async([files[0], fd, files[1]], { signal: controller.signal })
    setTimeout(() => controller.abort(new Error('stop')), 100)
    const give = setTimeout(() => fs.writeSync(fd, 'late'), 5000)
    reading.then(
      () => console.log('resolved'),
      (err) => {
        console.log(err.name, err.code, err.cause?.message, Date.now() - started < 3000)
        // The read the abort stopped ends once data comes (README): let it end.
        clearTimeout(give)
        fs.writeSync(fd, 'x')
        setTimeout(() => fs.closeSync(fd), 50)
      },
    )`,
    20_000,
  )
  assert.deepEqual(out, ['AbortError ABORT_ERR stop true'])
})

test('a signal shared by many batches and reads keeps none of their listeners once each settles, as with fs.promises', async () => {
  const files = someFiles('flow-listeners', 4)
  const theirs = new AbortController()
  for (let i = 0; i < 20; i++) await Promise.all(files.map((p) => fs.promises.readFile(p, { encoding: 'utf8', signal: theirs.signal })))
  const ours = new AbortController()
  const signal = ours.signal
  for (let i = 0; i < 20; i++) {
    await readFilesUtf8Async(files, { signal })
    await readFilesUtf8Async([...files, '/no/such/file'], { signal }).catch(() => {})
    await readFilesUtf8Async(['/no/such/file', ...files], { signal, errors: 'return' })
    await readFileUtf8Async(files[1], { signal })
  }
  assert.equal(getEventListeners(signal, 'abort').length, getEventListeners(theirs.signal, 'abort').length)
  assert.equal(getEventListeners(signal, 'abort').length, 0)
})

test('an abort after a batch settled changes nothing: its result stands, nothing rejects later', async () => {
  const files = someFiles('flow-after', 5)
  const controller = new AbortController()
  const unhandled = []
  const onUnhandled = (err) => unhandled.push(err)
  process.on('unhandledRejection', onUnhandled)
  try {
    const out = await readFilesUtf8Async(files, { signal: controller.signal })
    controller.abort()
    await new Promise((resolve) => setTimeout(resolve, 50))
    assert.deepEqual(out, files.map((p) => fs.readFileSync(p, 'utf8')))
    assert.deepEqual(unhandled, [])
  } finally {
    process.off('unhandledRejection', onUnhandled)
  }
})

test("no read waits for another batch's reads blocked in a silent FIFO (as in fs's pool of four), and the blocked batch, aborted, lets the process exit", unsupportedOnWindows('FIFOs (mkfifo)'), () => {
  const silent = makeFifo('flow-silent-fifo')
  const files = someFiles('flow-beside', 3)
  // Batch A's readers wait in the FIFO's open for ever (no one opens it to
  // write), at its concurrency (1: its next entries queued behind; 2: two
  // readers blocked); reads started beside it must still end.
  for (const concurrency of [1, 2]) {
    const out = runChild(
      `const fs = require('node:fs')
      const files = ${JSON.stringify(files)}
      const fifo = ${JSON.stringify(silent)}
      const controller = new AbortController()
      const blocked = api.readFilesUtf8Async([fifo, fifo, ...files], { signal: controller.signal, concurrency: ${concurrency} })
      const settled = blocked.then(() => 'resolved', (err) => err.name)
      setTimeout(async () => {
        const beside = await Promise.all([
          api.readFilesUtf8Async(files, { concurrency: 2 }),
          api.readFileUtf8Async(files[1]),
          api.promises.readFile(files[2], 'utf8'),
        ])
        console.log(beside[0].join('') === files.map((p) => fs.readFileSync(p, 'utf8')).join(''), beside[1] === fs.readFileSync(files[1], 'utf8'), beside[2] === fs.readFileSync(files[2], 'utf8'))
        controller.abort()
        console.log(await settled)
      }, 200)`,
      15_000,
    )
    assert.deepEqual(out, ['true true true', 'AbortError'], `concurrency ${concurrency}`)
  }
})

test('aborting a batch whose reads wait in a silent FIFO leaves the reads in flight beside it to end: the process waits for them, as for fs', unsupportedOnWindows('FIFOs (mkfifo)'), () => {
  const silent = makeFifo('flow-silent-2-fifo')
  const late = makeFifo('flow-late-fifo')
  const files = someFiles('flow-in-flight', 3)
  const out = runChild(
    `const { spawn } = require('node:child_process')
    const controller = new AbortController()
    api.readFilesUtf8Async([${JSON.stringify(silent)}, ${JSON.stringify(silent)}, ...${JSON.stringify(files)}], { signal: controller.signal, concurrency: 1 }).catch(() => {})
    // Read once a writer comes, after the abort; only the read keeps this process alive meanwhile.
    api.readFileUtf8Async(${JSON.stringify(late)}).then((text) => console.log(text))
    spawn('timeout', ['10', 'sh', '-c', 'sleep 0.5; printf late > "$0"', ${JSON.stringify(late)}], { stdio: 'ignore' }).unref()
    setTimeout(() => controller.abort(), 100)`,
    15_000,
  )
  assert.deepEqual(out, ['late'])
})
