'use strict'
// Who answers what the native path does not — argument forms only fs should
// judge, and every native read that failed:
// - for our functions called directly (readFileUtf8, the drop-ins, the
//   batches…): fs as it stands when the call is made, so that a layer that
//   patches fs (Yarn PnP, Electron's asar, memfs) serves its own files and
//   fs's errors are fs's own;
// - for the hooks readfile-utf8/register installs in fs: the functions they
//   replaced. A layer installed after the hook calls the hook for what it
//   does not serve, so the hook must not ask fs as it stands (the layer) back.
// Where fs's function is one of ours, the function the hook replaced (or, if
// a caller assigned ours, the one fs had when this package loaded) answers.
const fs = require('node:fs')

const NAMES = ['readFileSync', 'readFile', 'promisesReadFile']

/** fs's function of that name as it stands, and its `this`. */
function current(name) {
  return name === 'promisesReadFile' ? [fs.promises.readFile, fs.promises] : [fs[name], fs]
}

/** Our functions that fs may hold under each name, and what fs held when this package loaded. */
const ours = Object.fromEntries(NAMES.map((name) => [name, new Set()]))
const atLoad = Object.fromEntries(NAMES.map((name) => [name, current(name)[0]]))

/** What readfile-utf8/register's hooks replaced, by name (kept once they are removed). */
let replaced = null

/** Says that `fn` is ours for fs's function `name` (one of `NAMES`). */
function ourFunction(name, fn) {
  ours[name].add(fn)
  return fn
}

/** readfile-utf8/register: `functions` (by name) were replaced by its hooks. */
function setReplaced(functions) {
  // One of ours among them (a caller assigned it) stands for what it replaced.
  replaced = Object.fromEntries(NAMES.map((name) => [name, ours[name].has(functions[name]) ? atLoad[name] : functions[name]]))
}

/** What answers in place of our own function for `name`. */
function insteadOfOurs(name) {
  return replaced?.[name] ?? atLoad[name]
}

/** fs's function `name` as it stands (ours replaced by what it stands for). */
function asItStands(name) {
  const [fn, self] = current(name)
  return [ours[name].has(fn) ? insteadOfOurs(name) : fn, self]
}

/** What answers for the hook `name`. */
function forHook(name) {
  return [insteadOfOurs(name), current(name)[1]]
}

/** Functions by name that call what `pick` chooses at each call. */
function callers(pick) {
  return Object.fromEntries(
    NAMES.map((name) => [
      name,
      (...args) => {
        const [fn, self] = pick(name)
        return Reflect.apply(fn, self, args)
      },
    ]),
  )
}

/** fs's functions as they stand: what answers for our functions called directly. */
const direct = callers(asItStands)
/** What answers for the hooks. */
const hooked = callers(forHook)

module.exports = { ourFunction, setReplaced, direct, hooked }
