'use strict'
// readfile-utf8: fs.readFileSync(path, 'utf8'), faster, with the same result and
// the same errors. This file gathers the exports of the thin JS layer (lib/),
// which decodes fs's argument forms and hands the common ones to the native
// pipeline (src/lib.rs); everything else, and every read the native side could
// not make, goes to fs itself (lib/answers.js), which then answers (or throws)
// exactly as it always does.
const native = require('./lib/native')
const { readFileUtf8, readFileSync } = require('./lib/sync')
const { readFileUtf8Async, readFile, promisesReadFile } = require('./lib/async')
const { decodeUtf8 } = require('./lib/decode')
const { readFilesUtf8, readFilesUtf8Async } = require('./lib/batch')

const MEMORY_MODES = ['fast', 'lean']

/**
 * Sets how the whole process's sync calls make strings: 'fast' (the default:
 * large ones are external strings over our buffers, which saves a copy; the
 * dead ones a loop leaves are bounded) or 'lean' (external only where fs's
 * own are, so that loops of reads peak as fs's do, at the cost of speed).
 * @param {'lean' | 'fast'} mode
 * @returns {'lean' | 'fast'} the mode it replaces
 */
function setMemoryMode(mode) {
  if (!MEMORY_MODES.includes(mode)) {
    const shown = typeof mode === 'string' ? `'${mode}'` : String(mode)
    const err = new TypeError(`The argument 'mode' must be 'fast' or 'lean'. Received ${shown}`)
    err.code = 'ERR_INVALID_ARG_VALUE'
    throw err
  }
  return native.setLeanStrings(mode === 'lean') ? 'lean' : 'fast'
}

// READFILE_UTF8_MEMORY_MODE sets the mode without code (e.g. under `-r
// readfile-utf8/register`), once: on the main thread, so that a Worker
// started later does not undo a setMemoryMode call.
const modeFromEnv = process.env.READFILE_UTF8_MEMORY_MODE
if (modeFromEnv && require('node:worker_threads').isMainThread) {
  if (MEMORY_MODES.includes(modeFromEnv)) setMemoryMode(modeFromEnv)
  else {
    process.emitWarning(`READFILE_UTF8_MEMORY_MODE must be 'fast' or 'lean', not '${modeFromEnv}': it is ignored.`, {
      code: 'READFILE_UTF8_BAD_MEMORY_MODE',
    })
  }
}

module.exports = {
  readFileUtf8,
  readFileSync,
  readFileUtf8Async,
  readFilesUtf8,
  readFilesUtf8Async,
  decodeUtf8,
  /** `fs.readFile` with fs's signature: UTF-8 requests for paths are ours. */
  readFile,
  /** `fs.promises.readFile` with its signature: UTF-8 requests are ours. */
  promises: { readFile: promisesReadFile },
  /** Which UTF-8 engine the addon uses in this process: 'simdutf' or 'fallback'. */
  engine: native.engine,
  setMemoryMode,
}
