'use strict'
// The check bench.js runs before it times anything: for each kind of text at
// each size the run reads, ours returns fs's string (===), sync and async.
// A wrong answer stops the run: a speed-up of a wrong result means nothing.
const fs = require('node:fs')

const { CONTENTS, ensureFixture } = require('./fixtures')
const { KiB, MiB, sizeLabel } = require('./format')

/** The sizes of every fixture the default suites read (mixed's sequence, the read matrix up to 4 MiB). */
const SIZES = [64, KiB, 4 * KiB, 16 * KiB, 64 * KiB, 256 * KiB, MiB, 4 * MiB]

/**
 * Checks every kind × `sizes` (generating missing fixtures); throws on the
 * first difference. Returns the line that says what was checked.
 */
async function checkIdentity(sizes = SIZES, onGenerate = () => {}) {
  const { readFileUtf8, readFileUtf8Async } = require('..')
  const kinds = Object.keys(CONTENTS)
  let files = 0
  for (const kind of kinds) {
    for (const size of sizes) {
      const { file } = ensureFixture(kind, size, () => onGenerate(kind, size))
      if (readFileUtf8(file) !== fs.readFileSync(file, 'utf8')) throw new Error(`readFileUtf8 !== fs.readFileSync(p, 'utf8') for ${kind} ${sizeLabel(size)} (${file})`)
      if ((await readFileUtf8Async(file)) !== (await fs.promises.readFile(file, 'utf8'))) {
        throw new Error(`readFileUtf8Async !== fs.promises.readFile(p, 'utf8') for ${kind} ${sizeLabel(size)} (${file})`)
      }
      files++
    }
  }
  return (
    `identity: readFileUtf8(p) === fs.readFileSync(p, 'utf8') and readFileUtf8Async(p) === fs.promises.readFile(p, 'utf8') ` +
    `for ${files} files: ${kinds.length} kinds (${kinds.join(', ')}) × ${sizes.length} sizes (${sizes.map(sizeLabel).join(', ')})`
  )
}

module.exports = { checkIdentity, SIZES }
