'use strict'
// Who answers what the native path does not — argument forms only fs should
// judge, and every native read that failed: fs, as it stands when the call is
// made, so that a layer that patches fs (Yarn PnP, Electron's asar, memfs)
// serves its own files and fs's errors are fs's own. Where fs's function is
// one of our drop-ins (readfile-utf8/register installed it), the function it
// replaced answers instead, so that no call comes back to us.
const fs = require('node:fs')

/** Each drop-in of ours → the function that answers in its place while fs holds it. */
const insteadOf = new Map()

/** Says that `replaced` answers calls that reach fs's function while it is `ours`. */
function answersFor(ours, replaced) {
  insteadOf.set(ours, replaced)
}

function answering(current) {
  return insteadOf.get(current) ?? current
}

/** `fs.readFileSync` as it stands. */
function readFileSync(...args) {
  return Reflect.apply(answering(fs.readFileSync), fs, args)
}

/** `fs.readFile` as it stands. */
function readFile(...args) {
  return Reflect.apply(answering(fs.readFile), fs, args)
}

/** `fs.promises.readFile` as it stands. */
function promisesReadFile(...args) {
  return Reflect.apply(answering(fs.promises.readFile), fs.promises, args)
}

module.exports = { answersFor, readFileSync, readFile, promisesReadFile }
