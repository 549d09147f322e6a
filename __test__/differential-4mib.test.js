'use strict'
// The large files of differential.test.js from 4 MiB on, in a file of their
// own: node --test runs files side by side, and these take about as long as
// all the others of that file.
const { test } = require('node:test')
const assert = require('node:assert/strict')

const { readFileUtf8 } = require('..')
const { scratch, assertSameAsFs } = require('./helpers')
const { BASES, ODD, WHERE, LARGE_SIZES_FROM_4MIB, largeCases } = require('./cases')

for (const size of LARGE_SIZES_FROM_4MIB) {
  test(`large files of ${size} bytes: every class × odd byte at start, left half, middle, end`, () => {
    const file = scratch(`big-${size}.txt`)
    let checked = 0
    for (const { label, bytes } of largeCases(size)) {
      assertSameAsFs(readFileUtf8, file, bytes, label)
      checked++
    }
    assert.equal(checked, Object.keys(BASES).length * (1 + Object.keys(ODD).length * WHERE.length))
  })
}
