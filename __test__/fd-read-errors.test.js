'use strict'
// A caller's fd whose read fails after some of its bytes were taken: fs can
// no longer read those bytes again, so the error is ours to make, and it must
// be the one fs.readFileSync(fd) throws, field by field, with the fd left as
// fs leaves it. A non-blocking FIFO with a writer that stays open does that:
// its data is read, then the next read fails with EAGAIN.
const { test } = require('node:test')
const assert = require('node:assert/strict')
const fs = require('node:fs')
const { execFileSync } = require('node:child_process')

const { readFileUtf8, readFileSync } = require('..')
const { scratch, errorFields, thrown, unsupportedOnWindows } = require('./helpers')

const { O_RDONLY, O_WRONLY, O_NONBLOCK } = fs.constants
const TEXT = 'héllo wörld 中 😀\n'.repeat(50)

/** Runs `read` on the reading end of a non-blocking FIFO holding TEXT, its writer still open. */
function onStalledFifo(fifo, read) {
  const reader = fs.openSync(fifo, O_RDONLY | O_NONBLOCK)
  const writer = fs.openSync(fifo, O_WRONLY | O_NONBLOCK)
  try {
    fs.writeSync(writer, TEXT)
    const error = errorFields(thrown(() => read(reader)))
    // What is left to read: nothing (EAGAIN again), the same after fs's read and ours.
    const after = errorFields(thrown(() => fs.readSync(reader, Buffer.alloc(16))))
    return { error, after }
  } finally {
    fs.closeSync(writer)
    fs.closeSync(reader)
  }
}

test("a caller's fd that fails after some of its bytes were read: fs's error, field by field, the bytes consumed as fs consumes them", unsupportedOnWindows('FIFOs (mkfifo), O_NONBLOCK'), () => {
  const fifo = scratch('stalled.fifo')
  execFileSync('mkfifo', [fifo])
  const expected = onStalledFifo(fifo, (fd) => fs.readFileSync(fd, 'utf8'))
  assert.equal(expected.error.code, 'EAGAIN', 'the scene: fs itself fails with EAGAIN after reading the data')
  const calls = {
    'readFileUtf8(fd)': (fd) => readFileUtf8(fd),
    "readFileUtf8(fd, 'utf-8')": (fd) => readFileUtf8(fd, 'utf-8'),
    "readFileSync(fd, 'utf8')": (fd) => readFileSync(fd, 'utf8'),
    // Not an exact spelling: fs's Buffer path, whose error is the same read's.
    "readFileSync(fd, 'UTF8')": (fd) => readFileSync(fd, 'UTF8'),
    "readFileSync(fd, { encoding: 'utf8' })": (fd) => readFileSync(fd, { encoding: 'utf8' }),
  }
  for (const [name, call] of Object.entries(calls)) {
    assert.deepEqual(onStalledFifo(fifo, call), expected, name)
  }
})
