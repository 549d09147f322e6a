'use strict'
// The readers the suites compare, each made for one file: () => its text.
const fs = require('node:fs')

/** Ours, in `mode`, else in the one the bench was asked for (--memory-mode), else the default. */
function ours(mode = process.env.READFILE_UTF8_BENCH_MEMORY_MODE) {
  const lib = require('..')
  if (mode) lib.setMemoryMode(mode)
  return lib
}

/** Synchronous readers: ours (also in the lean mode), fs's 'utf8' read, and fs's raw Buffer read (the bytes alone). */
const SYNC_READERS = {
  ours: (file) => {
    const { readFileUtf8 } = ours()
    return () => readFileUtf8(file)
  },
  lean: (file) => {
    const { readFileUtf8 } = ours('lean')
    return () => readFileUtf8(file)
  },
  fs: (file) => () => fs.readFileSync(file, 'utf8'),
  buffer: (file) => () => fs.readFileSync(file),
}

/** Promise readers: ours (also in the lean mode) and fs.promises. */
const ASYNC_READERS = {
  ours: (file) => {
    const { readFileUtf8Async } = ours()
    return () => readFileUtf8Async(file)
  },
  lean: (file) => {
    const { readFileUtf8Async } = ours('lean')
    return () => readFileUtf8Async(file)
  },
  fs: (file) => () => fs.promises.readFile(file, 'utf8'),
}

/**
 * The length of one call's text, for a timing loop to add up. The string lives
 * only in this call's frame: a loop that held it itself would keep the last one
 * alive while V8 interprets the loop, and whether V8 has compiled the loop by
 * then depends on the reader it calls; a string alive at a scavenge is
 * promoted, and V8 then enlarges its young generation, so the readers' GC
 * costs would differ by the loop's state, not by what they return.
 */
function textLength(read) {
  return read().length
}

module.exports = { SYNC_READERS, ASYNC_READERS, textLength }
