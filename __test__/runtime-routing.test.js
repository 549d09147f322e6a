'use strict'
// Which path answers each call, per runtime, as the README says: under Node
// and Deno every function is ours (the addon reads; fs is not asked), under
// Bun single reads and decodeUtf8 are Bun's own fs and Buffer, batches ours.
// "Answered by fs" is seen as a call of the runtime's fs.readFileSync /
// fs.promises.readFile / Buffer#toString; every result is still === fs's.
// Runs in the fast tier (Node) and in scripts/test-runtime.js (Bun, Deno).
const { test } = require('node:test')
const assert = require('node:assert/strict')
const fs = require('node:fs')

const api = require('..')
const { scratch } = require('./helpers')
const { BASES, bigBuffer } = require('./cases')

const RUNTIME = process.versions.bun !== undefined ? 'Bun' : process.versions.deno !== undefined ? 'Deno' : 'Node'
/** Whether the runtime's own fs and Buffer answer single reads and decodeUtf8 (README: under Bun). */
const SINGLES_TO_RUNTIME = RUNTIME === 'Bun'

/** Counts the calls of fs.readFileSync, fs.promises.readFile, fs.readFile and Buffer#toString while `fn` runs. */
async function countingFsCalls(fn) {
  const counts = { readFileSync: 0, promisesReadFile: 0, readFile: 0, toString: 0 }
  const saved = [
    [fs, 'readFileSync'],
    [fs.promises, 'readFile'],
    [fs, 'readFile'],
    [Buffer.prototype, 'toString'],
  ].map(([object, name]) => [object, name, object[name]])
  for (const [object, name, original] of saved) {
    const key = object === fs.promises ? 'promisesReadFile' : name
    object[name] = function (...args) {
      counts[key]++
      return Reflect.apply(original, this, args)
    }
  }
  try {
    await fn()
  } finally {
    for (const [object, name, original] of saved) object[name] = original
  }
  return counts
}

// Large enough that decodeUtf8 gives it to the native decoder on every Node
// line (lib/decode.js ROUTES), and that reads are split on two threads.
const MIXED = bigBuffer(BASES.utf8_mixed, 1 << 20)
const file = scratch('routing.txt')
fs.writeFileSync(file, MIXED)
const expected = fs.readFileSync(file, 'utf8')

test(`single reads: ${SINGLES_TO_RUNTIME ? `${RUNTIME}'s own fs answers each` : 'the addon answers, fs is not asked'} (${RUNTIME}), and every string === fs's`, async () => {
  const reads = {
    'readFileUtf8(path)': () => api.readFileUtf8(file),
    'readFileUtf8(Buffer path)': () => api.readFileUtf8(Buffer.from(file)),
    "readFileSync(path, 'utf8')": () => api.readFileSync(file, 'utf8'),
    'readFileUtf8(fd)': () => {
      const fd = fs.openSync(file, 'r')
      try {
        return api.readFileUtf8(fd)
      } finally {
        fs.closeSync(fd)
      }
    },
  }
  for (const [name, read] of Object.entries(reads)) {
    let got
    const counts = await countingFsCalls(() => {
      got = read()
    })
    assert.ok(got === expected, `${name}: === fs's`)
    // On Windows fs opens Buffer paths and reads fds itself (ARCHITECTURE.md): fs answers those there.
    const toFs = SINGLES_TO_RUNTIME || (process.platform === 'win32' && /Buffer path|fd/.test(name))
    assert.equal(counts.readFileSync, toFs ? 1 : 0, `${name}: fs.readFileSync calls`)
  }
})

test(`async single reads: ${SINGLES_TO_RUNTIME ? `${RUNTIME}'s fs.promises / fs.readFile answers each` : 'the addon answers, fs is not asked'} (${RUNTIME})`, async () => {
  const reads = {
    readFileUtf8Async: [() => api.readFileUtf8Async(file), 'promisesReadFile'],
    'promises.readFile': [() => api.promises.readFile(file, 'utf8'), 'promisesReadFile'],
    readFile: [() => new Promise((resolve, reject) => api.readFile(file, 'utf8', (err, s) => (err ? reject(err) : resolve(s)))), 'readFile'],
  }
  for (const [name, [read, fsName]] of Object.entries(reads)) {
    let got
    const counts = await countingFsCalls(async () => {
      got = await read()
    })
    assert.ok(got === expected, `${name}: === fs's`)
    assert.equal(counts[fsName], SINGLES_TO_RUNTIME ? 1 : 0, `${name}: fs calls`)
  }
})

test(`decodeUtf8 of a large non-ASCII buffer: ${SINGLES_TO_RUNTIME ? "Buffer#toString answers" : 'the native decoder, not Buffer#toString'} (${RUNTIME})`, async () => {
  let got
  const counts = await countingFsCalls(() => {
    got = api.decodeUtf8(MIXED)
  })
  assert.ok(got === expected)
  if (SINGLES_TO_RUNTIME) assert.ok(counts.toString >= 1, `Buffer#toString calls: ${counts.toString}`)
  else assert.equal(counts.toString, 0)
})

test(`batches are ours in every runtime: fs is not asked (${RUNTIME})`, async () => {
  const files = Object.entries(BASES).map(([kind, base], i) => {
    const p = scratch(`routing-batch-${kind}.txt`)
    fs.writeFileSync(p, bigBuffer(base, 1000 + i * 7000))
    return p
  })
  const strings = files.map((p) => fs.readFileSync(p, 'utf8'))
  let sync
  let async
  const counts = await countingFsCalls(async () => {
    sync = api.readFilesUtf8(files, { concurrency: 2 })
    async = await api.readFilesUtf8Async(files, { concurrency: 2 })
  })
  assert.deepEqual(counts, { readFileSync: 0, promisesReadFile: 0, readFile: 0, toString: 0 })
  sync.forEach((s, i) => assert.ok(s === strings[i], `readFilesUtf8 ${files[i]}`))
  async.forEach((s, i) => assert.ok(s === strings[i], `readFilesUtf8Async ${files[i]}`))
})

test(`errors are the runtime's fs's, field by field, through every entry point (${RUNTIME})`, async () => {
  const { errorFields, thrown, osErrorFixtures } = require('./helpers')
  const { osErrors } = osErrorFixtures('routing-')
  for (const [name, p] of Object.entries(osErrors)) {
    const expected = errorFields(thrown(() => fs.readFileSync(p, 'utf8')))
    const expectedAsync = errorFields(await fs.promises.readFile(p, 'utf8').catch((e) => e))
    assert.deepEqual(errorFields(thrown(() => api.readFileUtf8(p))), expected, `readFileUtf8: ${name}`)
    assert.deepEqual(errorFields(api.readFilesUtf8([p], { errors: 'return' })[0]), expected, `readFilesUtf8: ${name}`)
    assert.deepEqual(errorFields(await api.readFileUtf8Async(p).catch((e) => e)), expectedAsync, `readFileUtf8Async: ${name}`)
    assert.deepEqual(errorFields((await api.readFilesUtf8Async([p], { errors: 'return' }))[0]), expectedAsync, `readFilesUtf8Async: ${name}`)
  }
})
