'use strict'
// The large inputs of async-decode-differential.test.js from 4 MiB on, in a
// file of their own: node --test runs files side by side, and these take about
// as long as all the others of that file.
const { test } = require('node:test')

const { scratch } = require('./helpers')
const { LARGE_SIZES_FROM_4MIB, largeCases } = require('./cases')
const { assertDecodes, assertReadsAsync } = require('./oracles')

for (const size of LARGE_SIZES_FROM_4MIB) {
  test(`large inputs of ${size} bytes: every class × odd byte at start, left half, middle, end (decodeUtf8 and readFileUtf8Async)`, async () => {
    const file = scratch(`async-big-${size}.txt`)
    for (const { label, bytes } of largeCases(size)) {
      assertDecodes(bytes, label)
      await assertReadsAsync(file, bytes, label)
    }
  })
}
