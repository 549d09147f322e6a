'use strict'
// lib/fd-async.js: the async read of a caller's fd that the native reader
// leaves to fs (every fd on Windows; on Linux, calls whose options only fs
// judges). fs.readFile(fd) drops read errors for caller-owned fds; this must
// reject as FileHandle.readFile does, read from the fd's position and leave
// the fd open. Tested directly, and through readFileUtf8Async where it is the
// path taken on this platform.
const { test } = require('node:test')
const assert = require('node:assert/strict')
const fs = require('node:fs')

const { readFdAsync } = require('../lib/fd-async')
const { readFileUtf8Async } = require('..')
const { SCRATCH, scratch, errorFields } = require('./helpers')

const rejection = (promise) =>
  promise.then(
    (value) => assert.fail(`expected a rejection, got ${JSON.stringify(value)?.slice(0, 80)}`),
    (err) => err,
  )

const TEXT = `head é ${'body 中文 😀 '.repeat(60000)} tail`

// Options that readFileUtf8Async leaves to fs (a flag it does not know), so
// that the fd goes to readFdAsync on every platform; on Windows all fds do.
const READERS = {
  readFdAsync: (fd) => readFdAsync(fd),
  'readFdAsync (options with a signal)': (fd) => readFdAsync(fd, { encoding: 'utf8', signal: new AbortController().signal }),
  "readFileUtf8Async(fd, { flag: 'bogus' })": (fd) => readFileUtf8Async(fd, { flag: 'bogus' }),
  'readFileUtf8Async(fd)': (fd) => readFileUtf8Async(fd),
}

test("an open fd that cannot be read (write-only, a directory) rejects with FileHandle.readFile's error", async () => {
  const file = scratch('fd-async-write-only.txt')
  fs.writeFileSync(file, 'some text')
  const cases = [
    ['write-only', () => fs.promises.open(file, 'a')],
    ['directory', () => fs.promises.open(SCRATCH)],
  ]
  for (const [label, open] of cases) {
    const theirs = await open()
    const ours = await open()
    try {
      const expected = errorFields(await rejection(theirs.readFile('utf8')))
      assert.ok(['EBADF', 'EISDIR'].includes(expected.code), `${label}: ${expected.code}`)
      assert.equal(expected.syscall, 'read')
      assert.equal(expected.hasPath, false)
      for (const [name, read] of Object.entries(READERS)) {
        assert.deepEqual(errorFields(await rejection(read(ours.fd))), expected, `${label}, ${name}`)
      }
    } finally {
      await theirs.close()
      await ours.close()
    }
  }
})

test('an fd mid-file: read from its position to EOF, === FileHandle.readFile, and left open', async () => {
  const file = scratch('fd-async-mid.txt')
  const bytes = Buffer.from(TEXT)
  fs.writeFileSync(file, bytes)
  for (const [name, read] of Object.entries(READERS)) {
    // 0 bytes in, mid-character (3: inside 'é'), past the first 512 KiB chunk.
    for (const skip of [0, 3, 6, 600_001]) {
      const ours = await fs.promises.open(file)
      const theirs = await fs.promises.open(file)
      try {
        await ours.read(Buffer.alloc(skip), 0, skip, null)
        await theirs.read(Buffer.alloc(skip), 0, skip, null)
        const expected = await theirs.readFile('utf8')
        assert.equal(expected, bytes.subarray(skip).toString('utf8'))
        assert.equal(await read(ours.fd), expected, `${name}, ${skip} bytes in`)
        // Still open, at its end, as FileHandle.readFile leaves it.
        assert.equal(await read(ours.fd), await theirs.readFile('utf8'))
        assert.equal(fs.fstatSync(ours.fd).size, bytes.length)
      } finally {
        await ours.close()
        await theirs.close()
      }
    }
  }
})

test("an fd number with no open file rejects with the native readers' EBADF (fs's own read of it)", async () => {
  const closed = fs.openSync(scratch('fd-async-closed.txt'), 'w')
  fs.closeSync(closed)
  for (const fd of [closed, -1, 2147483647]) {
    const expected = errorFields(await rejection((async () => fs.readFileSync(fd, 'utf8'))()))
    assert.equal(expected.code, 'EBADF')
    assert.equal(expected.syscall, 'read')
    for (const [name, read] of Object.entries(READERS)) {
      assert.deepEqual(errorFields(await rejection(read(fd))), expected, `fd ${fd}, ${name}`)
    }
  }
})

test("arguments fs.readFile rejects get fs's own error; an aborted signal stops the read", async () => {
  const file = scratch('fd-async-options.txt')
  fs.writeFileSync(file, TEXT)
  const fd = fs.openSync(file, 'r')
  try {
    const theirs = (options) => new Promise((resolve, reject) => fs.readFile(fd, options, (err) => reject(err)))
    for (const options of [5, true, { encoding: 'utf8', signal: 'not a signal' }, { signal: null }]) {
      const expected = errorFields(await rejection(theirs(options)))
      assert.equal(expected.code, 'ERR_INVALID_ARG_TYPE')
      assert.deepEqual(errorFields(await rejection(readFdAsync(fd, options))), expected, JSON.stringify(options))
    }
    // Numbers that are no fd to fs (not int32): a path of the wrong type to it.
    for (const notFd of [1.5, 2 ** 31, -0.5, NaN]) {
      const expected = errorFields(await rejection(new Promise((resolve, reject) => fs.readFile(notFd, 'utf8', (err) => reject(err)))))
      assert.equal(expected.code, 'ERR_INVALID_ARG_TYPE')
      assert.deepEqual(errorFields(await rejection(readFdAsync(notFd, 'utf8'))), expected, String(notFd))
      assert.deepEqual(errorFields(await rejection(readFileUtf8Async(notFd))), expected, String(notFd))
    }
    const aborted = await rejection(readFdAsync(fd, { encoding: 'utf8', signal: AbortSignal.abort('why') }))
    assert.equal(aborted.name, 'AbortError')
    assert.equal(aborted.code, 'ABORT_ERR')
    assert.equal(aborted.cause, 'why')
    // The abort came before any read: the fd is still at its start.
    assert.equal(await readFdAsync(fd), TEXT)
  } finally {
    fs.closeSync(fd)
  }
})
