'use strict'
// readFileUtf8Async, and the fs.readFile / fs.promises.readFile drop-ins: results
// and errors compared with fs.promises.readFile / fs.readFile field by field,
// including whether the error has stack frames (newer Nodes give none).
const { test } = require('node:test')
const assert = require('node:assert/strict')
const fs = require('node:fs')
const path = require('node:path')
const { pathToFileURL } = require('node:url')
const { monitorEventLoopDelay } = require('node:perf_hooks')

const api = require('..')
const { readFileUtf8Async, promises } = api
const { scratch, errorFields, osErrorFixtures } = require('./helpers')

const { existing, osErrors: OS_ERRORS } = osErrorFixtures('async-')

/** errorFields plus whether the stack has frames, and the cause. */
function fields(err) {
  return {
    ...errorFields(err),
    stackless: typeof err?.stack === 'string' ? !err.stack.includes('\n') : undefined,
    cause: err?.cause,
    isAbortErrorClass: err?.constructor?.name === 'AbortError',
  }
}

async function rejection(promise) {
  try {
    await promise
  } catch (err) {
    return err
  }
  assert.fail('expected a rejection')
}

function callbackError(read, ...args) {
  return new Promise((resolve) => read(...args, (err, data) => resolve(err ?? { resolvedWith: data })))
}

/** Our promise APIs reject with exactly what fs.promises.readFile rejects with. */
async function assertSameRejection(label, p, options = 'utf8') {
  const expected = fields(await rejection(fs.promises.readFile(p, options)))
  assert.deepEqual(fields(await rejection(promises.readFile(p, options))), expected, `${label}: promises.readFile`)
  if (typeof p !== 'number') assert.deepEqual(fields(await rejection(readFileUtf8Async(p, options))), expected, `${label}: readFileUtf8Async`)
}

/** Our callback readFile gives exactly what fs.readFile gives. */
async function assertSameCallbackError(label, p, options = 'utf8') {
  const expected = fields(await callbackError(fs.readFile, p, options))
  assert.deepEqual(fields(await callbackError(api.readFile, p, options)), expected, `${label}: readFile callback`)
}

for (const [label, p] of Object.entries(OS_ERRORS)) {
  test(`${label}: fs.promises' and fs.readFile's errors, field by field`, async () => {
    for (const options of ['utf8', { encoding: 'utf8' }, { encoding: 'UTF-8', flag: 'r' }]) {
      await assertSameRejection(label, p, options)
      await assertSameCallbackError(label, p, options)
    }
  })
}

test('argument errors: wrong path types, NUL bytes, non-file URLs, bad options, bad signals', async () => {
  for (const p of [undefined, null, true, 1.5, NaN, 10n, {}, [], 'a\0b', Buffer.from('a\0b'), new URL('file:///tmp/a%00b'), new URL('http://example.invalid/x'), new URL('file://remote-host/x')]) {
    await assertSameRejection(`path ${String(p)}`, p)
    await assertSameRejection(`path ${String(p)}`, p, { encoding: 'utf8', signal: AbortSignal.abort() })
  }
  for (const signal of [5, null, {}, 'x']) await assertSameRejection(`signal ${String(signal)}`, existing, { encoding: 'utf8', signal })
  for (const options of [5, true]) {
    assert.deepEqual(fields(await rejection(promises.readFile(existing, options))), fields(await rejection(fs.promises.readFile(existing, options))))
    assert.deepEqual(fields(await rejection(readFileUtf8Async(existing, options))), fields(await rejection(fs.promises.readFile(existing, options))))
  }
  // readFileUtf8Async, like readFileUtf8, refuses other encodings (rejects).
  for (const encoding of ['latin1', 'nope']) {
    const err = await rejection(readFileUtf8Async(existing, encoding))
    assert.equal(err.code, 'ERR_INVALID_ARG_VALUE')
    assert.equal((await rejection(readFileUtf8Async(existing, { encoding }))).code, 'ERR_INVALID_ARG_VALUE')
  }
})

test('fds: readFileUtf8Async reads from the position (left open), EBADF as readFileUtf8; drop-ins leave fds to fs', async () => {
  const fd = fs.openSync(existing, 'r')
  try {
    fs.readSync(fd, Buffer.alloc(3), 0, 3, null)
    assert.equal(await readFileUtf8Async(fd), fs.readFileSync(existing).subarray(3).toString('utf8'))
    fs.fstatSync(fd) // still open
  } finally {
    fs.closeSync(fd)
  }
  const err = await rejection(readFileUtf8Async(999))
  assert.deepEqual(errorFields(err), errorFields((() => { try { api.readFileUtf8(999) } catch (e) { return e } })()))
  await assertSameRejection('fd 999 (fs.promises refuses numbers)', 999)
})

test('AbortSignal: aborted before the call, and during the read, as fs.promises', async () => {
  const before = AbortSignal.abort(new Error('why'))
  const expected = fields(await rejection(fs.promises.readFile(existing, { encoding: 'utf8', signal: before })))
  assert.equal(expected.name, 'AbortError')
  assert.deepEqual(fields(await rejection(readFileUtf8Async(existing, { signal: before }))), expected)
  assert.deepEqual(fields(await rejection(promises.readFile(existing, { encoding: 'utf8', signal: before }))), expected)
  assert.deepEqual(fields(await callbackError(api.readFile, existing, { encoding: 'utf8', signal: before })), fields(await callbackError(fs.readFile, existing, { encoding: 'utf8', signal: before })))
  // Aborted while the read is on the pool: rejects with the AbortError (cause = reason).
  const big = scratch('async-abort-big.txt')
  fs.writeFileSync(big, Buffer.alloc(8 << 20, 'é'))
  const controller = new AbortController()
  const pending = readFileUtf8Async(big, { signal: controller.signal })
  controller.abort('stop')
  const err = await rejection(pending)
  assert.equal(err.name, 'AbortError')
  assert.equal(err.code, 'ABORT_ERR')
  assert.equal(err.cause, 'stop')
  assert.equal(err.constructor.name, 'AbortError')
  const c2 = new AbortController()
  const cb = callbackError(api.readFile, big, { encoding: 'utf8', signal: c2.signal })
  c2.abort()
  assert.equal((await cb).name, 'AbortError')
  // Not aborted: the signal is harmless.
  assert.equal(await readFileUtf8Async(existing, { signal: new AbortController().signal }), fs.readFileSync(existing, 'utf8'))
})

test('drop-ins pass every non-UTF-8 call to fs unchanged', async () => {
  for (const options of [undefined, null, {}, { encoding: null }, { flag: 'r' }, 'latin1', 'base64', 'hex', { encoding: 'binary' }]) {
    assert.deepEqual(await promises.readFile(existing, options), await fs.promises.readFile(existing, options), JSON.stringify(options))
    const ours = await new Promise((resolve, reject) => (options === undefined ? api.readFile(existing, (e, d) => (e ? reject(e) : resolve(d))) : api.readFile(existing, options, (e, d) => (e ? reject(e) : resolve(d)))))
    assert.deepEqual(ours, fs.readFileSync(existing, options))
  }
  const fh = await fs.promises.open(existing)
  try {
    assert.equal(await promises.readFile(fh, 'utf8'), fs.readFileSync(existing, 'utf8'))
  } finally {
    await fh.close()
  }
  // No callback: fs's own synchronous throw.
  assert.throws(() => api.readFile(existing, 'utf8'), (err) => err.code === 'ERR_INVALID_ARG_TYPE')
})

test('callback: runs on a later tick, as with fs', async () => {
  let sync = true
  const data = await new Promise((resolve) => {
    api.readFile(existing, 'utf8', (err, d) => {
      assert.equal(sync, false)
      resolve(d)
    })
    sync = false
  })
  assert.equal(data, fs.readFileSync(existing, 'utf8'))
})

test('64 concurrent reads of a 4 MiB file: correct, and the event loop is never blocked for long', async () => {
  const file = scratch('async-4m.txt')
  fs.writeFileSync(file, Buffer.from('Mixed: café, 中文, 日本語, emoji 😀🎉 and ASCII.\n'.repeat(80000)).subarray(0, 4 << 20))
  const expected = await fs.promises.readFile(file, 'utf8')
  const h = monitorEventLoopDelay({ resolution: 1 })
  h.enable()
  const results = await Promise.all(Array.from({ length: 64 }, () => readFileUtf8Async(file)))
  h.disable()
  for (const r of results) assert.equal(r, expected)
  // Generous bound: the whole decode of one 4 MiB file on the main thread would be milliseconds.
  assert.ok(h.max / 1e6 < 200, `max event loop delay ${h.max / 1e6} ms`)
})

test('promises.readFile and readFile match fs on strings, Buffers and URLs of every class', async () => {
  const file = scratch('async-kinds.txt')
  for (const bytes of [Buffer.from('plain'), Buffer.from('déjà'), Buffer.from('中😀'), Buffer.from([0x61, 0xff, 0xe2, 0x82]), Buffer.alloc(100000, 'é')]) {
    fs.writeFileSync(file, bytes)
    const expected = await fs.promises.readFile(file, 'utf8')
    for (const p of [file, Buffer.from(file), pathToFileURL(file)]) {
      assert.equal(await promises.readFile(p, 'utf8'), expected)
      assert.equal(await readFileUtf8Async(p), expected)
      assert.equal(await new Promise((resolve) => api.readFile(p, { encoding: 'utf8' }, (e, d) => resolve(d))), expected)
    }
  }
})
