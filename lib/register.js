'use strict'
// readfile-utf8/register: replaces fs.readFileSync, fs.readFile and
// fs.promises.readFile with readfile-utf8's drop-ins, which serve UTF-8 requests
// natively and pass every other call to the original fs functions unchanged.
// Node's CommonJS loader reads every module with fs.readFileSync(filename,
// 'utf8'), so `require` benefits too. `unregister()` puts the originals back.
const fs = require('node:fs')
const { syncBuiltinESMExports } = require('node:module')

const ours = require('..')
const { answersFor } = require('./answers')

// The functions the drop-ins replace: whatever fs held when this file loaded
// (fs's own, or a layer's that patched them: Yarn PnP, asar, memfs). While
// ours are installed, these answer every call the native path does not.
const originals = {
  readFileSync: fs.readFileSync,
  readFile: fs.readFile,
  promisesReadFile: fs.promises.readFile,
}
answersFor(ours.readFileSync, originals.readFileSync)
answersFor(ours.readFile, originals.readFile)
answersFor(ours.promises.readFile, originals.promisesReadFile)

/** True while our functions are installed in fs. */
function isRegistered() {
  return fs.readFileSync === ours.readFileSync
}

/** Installs the drop-ins (idempotent). */
function register() {
  fs.readFileSync = ours.readFileSync
  fs.readFile = ours.readFile
  fs.promises.readFile = ours.promises.readFile
  // `import { readFileSync } from 'node:fs'` sees the change too.
  syncBuiltinESMExports()
}

/** Restores the fs functions that were there when readfile-utf8/register was loaded. */
function unregister() {
  fs.readFileSync = originals.readFileSync
  fs.readFile = originals.readFile
  fs.promises.readFile = originals.promisesReadFile
  syncBuiltinESMExports()
}

module.exports = { register, unregister, isRegistered }
