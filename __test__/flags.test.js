'use strict'
// fs's `flag` option, every entry of its string table (taken from fs itself)
// in string and number form, plus flags fs refuses: for a missing and for an
// existing file, each of our entry points gives what its fs counterpart gives
// (the string, or the error field by field) and leaves the file as fs leaves
// it (created or not, its bytes, its mode).
const { test } = require('node:test')
const assert = require('node:assert/strict')
const fs = require('node:fs')
const { spawnSync } = require('node:child_process')

const api = require('..')
const { FLAGS, DELEGATE, openFlags } = require('../lib/options')
const { scratch, errorFields } = require('./helpers')

/**
 * fs's own string-to-flags table (internal/fs/utils stringToFlags), found by
 * asking it about every string of up to 3 characters from 'rwaxs+': fs's
 * flags are all of that form, and any other string is refused.
 */
function fsFlagTable() {
  const script = `
    const { stringToFlags } = require('internal/fs/utils')
    const alphabet = ['r', 'w', 'a', 'x', 's', '+']
    let strings = ['']
    const table = {}
    for (let length = 1; length <= 3; length++) {
      strings = strings.flatMap((s) => alphabet.map((c) => s + c))
      for (const s of strings) {
        try {
          table[s] = stringToFlags(s)
        } catch (err) {
          if (err.code !== 'ERR_INVALID_ARG_VALUE') throw err
        }
      }
    }
    process.stdout.write(JSON.stringify(table))`
  const r = spawnSync(process.execPath, ['--expose-internals', '-e', script], { encoding: 'utf8' })
  assert.equal(r.status, 0, r.stderr)
  return new Map(Object.entries(JSON.parse(r.stdout)))
}

const FS_FLAGS = fsFlagTable()

const CONTENT = Buffer.from('existing é 中 😀 \xff text\n', 'latin1')
const EXISTING_MODE = 0o640

/** The file's state: missing, or its bytes and permission bits. */
function fileState(file) {
  if (!fs.existsSync(file)) return 'missing'
  return { bytes: fs.readFileSync(file).toString('hex'), mode: (fs.statSync(file).mode & 0o7777).toString(8) }
}

function prepare(file, scenario) {
  fs.rmSync(file, { force: true })
  if (scenario === 'existing') {
    fs.writeFileSync(file, CONTENT)
    fs.chmodSync(file, EXISTING_MODE)
  }
}

/** What a call gave: its value, or its error's observable fields (async: with the stack's shape). */
async function outcome(call, isAsync) {
  try {
    return { value: await call() }
  } catch (err) {
    const fields = errorFields(err)
    if (isAsync) fields.stackless = typeof err?.stack === 'string' ? !err.stack.includes('\n') : undefined
    return { error: fields }
  }
}

function callback(read, file, options) {
  return new Promise((resolve, reject) => read(file, options, (err, data) => (err ? reject(err) : resolve(data))))
}

/** Each entry point of ours beside its fs oracle, for `flag`. */
function pairs(flag) {
  const options = { encoding: 'utf8', flag }
  return [
    ['readFileUtf8', false, (f) => api.readFileUtf8(f, { flag }), (f) => fs.readFileSync(f, options)],
    ['readFileSync', false, (f) => api.readFileSync(f, options), (f) => fs.readFileSync(f, options)],
    ['readFileUtf8Async', true, (f) => api.readFileUtf8Async(f, { flag }), (f) => fs.promises.readFile(f, options)],
    ['promises.readFile', true, (f) => api.promises.readFile(f, options), (f) => fs.promises.readFile(f, options)],
    ['readFile', true, (f) => callback(api.readFile, f, options), (f) => callback(fs.readFile, f, options)],
  ]
}

/** Asserts that every entry point gives fs's outcome and file state for `flag`; returns the cases run. */
async function assertFlagAsFs(flag, label) {
  const file = scratch('flag-target.txt')
  let cases = 0
  for (const scenario of ['missing', 'existing']) {
    for (const [name, isAsync, ours, theirs] of pairs(flag)) {
      prepare(file, scenario)
      const expected = { outcome: await outcome(() => theirs(file), isAsync), state: fileState(file) }
      prepare(file, scenario)
      const actual = { outcome: await outcome(() => ours(file), isAsync), state: fileState(file) }
      assert.deepEqual(actual, expected, `${name} with flag ${label} on a ${scenario} file`)
      cases++
    }
  }
  return cases
}

test("fs's flag table, read from fs itself, is the one lib/options.js decodes", () => {
  assert.equal(FS_FLAGS.size, 22)
  assert.deepEqual(new Map([...FLAGS].sort()), new Map([...FS_FLAGS].sort()))
})

for (const [flag, number] of FS_FLAGS) {
  test(`flag '${flag}' and its number ${number}: every entry point as fs, on a missing and an existing file`, async () => {
    let cases = await assertFlagAsFs(flag, `'${flag}'`)
    cases += await assertFlagAsFs(number, `${number} ('${flag}')`)
    assert.equal(cases, 2 * 2 * 5)
  })
}

test('flags fs refuses, and numbers outside its table, give what fs gives', async () => {
  const { O_RDONLY, O_WRONLY, O_RDWR, O_CREAT, O_EXCL, O_TRUNC, O_APPEND } = fs.constants
  const refused = ['', 'R', 'rw', 'x', 'ra', 'a++', ' r', 'zz', true, {}, [], 1.5, NaN, -0.5, 2 ** 31, 10n]
  const numbers = [O_RDONLY | O_CREAT, O_RDONLY | O_CREAT | O_EXCL, O_RDWR | O_TRUNC, O_WRONLY, O_RDONLY | O_APPEND, -1]
  let cases = 0
  for (const flag of [...refused, ...numbers]) cases += await assertFlagAsFs(flag, String(flag))
  assert.equal(cases, (refused.length + numbers.length) * 2 * 5)
})

test('O_DIRECT flags are left to fs, whose reads then succeed or fail by the alignment of its buffers', () => {
  // Whether a read with O_DIRECT succeeds depends on where the reader's buffer
  // happens to lie: Node 22's fs read a 100-byte file in one call and failed
  // with EINVAL in the next. No outcome can be compared; fs makes the call.
  const { O_RDONLY, O_RDWR, O_DIRECT } = fs.constants
  if (O_DIRECT === undefined) return assert.equal(openFlags(O_RDONLY), O_RDONLY) // no such flag on this OS
  for (const flag of [O_RDONLY | O_DIRECT, O_RDWR | O_DIRECT]) assert.equal(openFlags(flag), DELEGATE, String(flag))
  assert.equal(openFlags(O_RDWR), O_RDWR)
})
