'use strict'
// The checks of the async and decodeUtf8 identity tests
// (async-decode-differential*.test.js): decodeUtf8 against Buffer#toString on
// each kind of input, readFileUtf8Async and promises.readFile against
// fs.promises.readFile.
const assert = require('node:assert/strict')
const fs = require('node:fs')

const { decodeUtf8, readFileUtf8Async, promises } = require('..')
const { hex } = require('./helpers')

function firstDifference(actual, expected) {
  let i = 0
  while (i < expected.length && actual.charCodeAt(i) === expected.charCodeAt(i)) i++
  return `(ours length ${actual?.length}, Node's ${expected.length}, first difference at char ${i})`
}

/** decodeUtf8 on a Buffer, a Uint8Array copy and an ArrayBuffer, vs Buffer#toString. */
function assertDecodes(bytes, label) {
  const buf = Buffer.from(bytes)
  const expected = buf.toString('utf8')
  for (const input of [buf, new Uint8Array(buf), new Uint8Array(buf).buffer]) {
    const actual = decodeUtf8(input)
    if (actual !== expected) assert.fail(`decodeUtf8 ${label} ${hex(buf)} ${input.constructor.name}: ${firstDifference(actual, expected)}`)
  }
  return expected
}

/** readFileUtf8Async and promises.readFile vs fs.promises.readFile. */
async function assertReadsAsync(file, bytes, label) {
  await fs.promises.writeFile(file, bytes)
  const expected = await fs.promises.readFile(file, 'utf8')
  for (const actual of [await readFileUtf8Async(file), await promises.readFile(file, 'utf8')]) {
    if (actual !== expected) assert.fail(`async ${label} ${hex(bytes)}: ${firstDifference(actual, expected)}`)
  }
  return expected
}

module.exports = { assertDecodes, assertReadsAsync }
