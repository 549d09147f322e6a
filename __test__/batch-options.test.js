'use strict'
// The batches' options beside the single reads': a sync batch takes no signal
// (its reference is a loop of fs.readFileSync(p, 'utf8'), which is given
// none), so a signal in its options, valid or not, aborted or not, changes
// nothing; the async batch checks its signal as fs.promises does.
const { test } = require('node:test')
const assert = require('node:assert/strict')
const fs = require('node:fs')

const { readFilesUtf8, readFilesUtf8Async } = require('..')
const { scratch } = require('./helpers')

const FILE = scratch('batch-options.txt')
fs.writeFileSync(FILE, 'batch options é 中')
const TEXT = fs.readFileSync(FILE, 'utf8')

test('a sync batch ignores options.signal, whatever it is', () => {
  for (const signal of [5, 'signal', null, {}, AbortSignal.abort(), new AbortController().signal]) {
    assert.deepEqual(readFilesUtf8([FILE, FILE], { signal }), [TEXT, TEXT], String(signal))
  }
})

test("the async batch rejects a signal fs.promises rejects, with fs.promises' error", async () => {
  for (const signal of [5, 'signal', null, {}]) {
    const expected = await fs.promises.readFile(FILE, { encoding: 'utf8', signal }).catch((e) => e)
    const err = await readFilesUtf8Async([FILE], { signal }).catch((e) => e)
    assert.ok(err instanceof Error, String(signal))
    const fields = (e) => [e.constructor.name, e.name, e.code, e.message]
    assert.deepEqual(fields(err), fields(expected), String(signal))
  }
})
