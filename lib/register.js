'use strict'
// readfile-utf8/register: replaces fs.readFileSync, fs.readFile and
// fs.promises.readFile with readfile-utf8's drop-ins, which serve UTF-8
// requests natively and pass every other call — and every read the native
// side could not make — to the functions they replaced, unchanged. Those are
// whatever fs held when `register()` installed ours: fs's own, or those of a
// layer that patched fs before (Yarn PnP, Electron's asar, memfs), which then
// still serves its files. Node's CommonJS loader reads every module with
// fs.readFileSync(filename, 'utf8'), so `require` benefits too.
// `unregister()` puts the replaced functions back.
const fs = require('node:fs')
const { syncBuiltinESMExports } = require('node:module')

const { setReplaced } = require('./answers')
const { readFileSyncHook } = require('./sync')
const { hooks } = require('./async')

/** The functions installed in fs. */
const ours = { readFileSync: readFileSyncHook, readFile: hooks.readFile, promisesReadFile: hooks.promisesReadFile }

/** What `register()` replaced, while ours are installed; null otherwise. */
let replaced = null

/** True while our functions are installed in fs. */
function isRegistered() {
  return fs.readFileSync === ours.readFileSync
}

/**
 * Installs the drop-ins. Called again while they are installed, it installs
 * them again over whatever replaced them since, but keeps answering with the
 * functions it first replaced: a layer installed after ours calls ours, so
 * it must not be asked back.
 */
function register() {
  if (replaced === null) {
    replaced = {
      readFileSync: fs.readFileSync,
      readFile: fs.readFile,
      promisesReadFile: fs.promises.readFile,
    }
    setReplaced(replaced)
  }
  fs.readFileSync = ours.readFileSync
  fs.readFile = ours.readFile
  fs.promises.readFile = ours.promisesReadFile
  // `import { readFileSync } from 'node:fs'` sees the change too.
  syncBuiltinESMExports()
}

/** Restores the fs functions that `register()` replaced. */
function unregister() {
  if (replaced === null) return
  fs.readFileSync = replaced.readFileSync
  fs.readFile = replaced.readFile
  fs.promises.readFile = replaced.promisesReadFile
  replaced = null
  syncBuiltinESMExports()
}

module.exports = { register, unregister, isRegistered }
