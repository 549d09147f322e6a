'use strict'
// The readers the suites compare, each made for one file: () => its text.
const fs = require('node:fs')

/** Synchronous readers: ours, fs's 'utf8' read, and fs's raw Buffer read (the bytes alone). */
const SYNC_READERS = {
  ours: (file) => {
    const { readFileUtf8 } = require('..')
    return () => readFileUtf8(file)
  },
  fs: (file) => () => fs.readFileSync(file, 'utf8'),
  buffer: (file) => () => fs.readFileSync(file),
}

/** Promise readers: ours and fs.promises. */
const ASYNC_READERS = {
  ours: (file) => {
    const { readFileUtf8Async } = require('..')
    return () => readFileUtf8Async(file)
  },
  fs: (file) => () => fs.promises.readFile(file, 'utf8'),
}

module.exports = { SYNC_READERS, ASYNC_READERS }
