'use strict'
// The readers the suites compare, each made for one file: () => its text.
const fs = require('node:fs')

/** Ours in the lean memory mode (`setMemoryMode('lean')`). */
function lean() {
  const ours = require('..')
  ours.setMemoryMode('lean')
  return ours
}

/** `ours`, in the memory mode the bench was asked for (--memory-mode), else the default. */
function ours() {
  const lib = require('..')
  if (process.env.READFILE_UTF8_BENCH_MEMORY_MODE) lib.setMemoryMode(process.env.READFILE_UTF8_BENCH_MEMORY_MODE)
  return lib
}

/** Synchronous readers: ours (also lean), fs's 'utf8' read, and fs's raw Buffer read (the bytes alone). */
const SYNC_READERS = {
  ours: (file) => {
    const { readFileUtf8 } = ours()
    return () => readFileUtf8(file)
  },
  lean: (file) => {
    const { readFileUtf8 } = lean()
    return () => readFileUtf8(file)
  },
  fs: (file) => () => fs.readFileSync(file, 'utf8'),
  buffer: (file) => () => fs.readFileSync(file),
}

/** Promise readers: ours (also lean) and fs.promises. */
const ASYNC_READERS = {
  ours: (file) => {
    const { readFileUtf8Async } = ours()
    return () => readFileUtf8Async(file)
  },
  lean: (file) => {
    const { readFileUtf8Async } = lean()
    return () => readFileUtf8Async(file)
  },
  fs: (file) => () => fs.promises.readFile(file, 'utf8'),
}

module.exports = { SYNC_READERS, ASYNC_READERS }
