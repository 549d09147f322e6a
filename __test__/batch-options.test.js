'use strict'
// The batches' options beside the single reads': a sync batch takes no signal
// (its reference is a loop of fs.readFileSync(p, 'utf8'), which is given
// none), so a signal in its options, valid or not, aborted or not, changes
// nothing; the async batch checks its signal as fs.promises does.
const { test } = require('node:test')
const assert = require('node:assert/strict')
const fs = require('node:fs')

const { readFilesUtf8, readFilesUtf8Async } = require('..')
const { scratch } = require('./helpers')

const FILE = scratch('batch-options.txt')
fs.writeFileSync(FILE, 'batch options é 中')
const TEXT = fs.readFileSync(FILE, 'utf8')

test('a sync batch ignores options.signal, whatever it is', () => {
  for (const signal of [5, 'signal', null, {}, AbortSignal.abort(), new AbortController().signal]) {
    assert.deepEqual(readFilesUtf8([FILE, FILE], { signal }), [TEXT, TEXT], String(signal))
  }
})

test("the async batch rejects a signal fs.promises rejects, with fs.promises' error", async () => {
  for (const signal of [5, 'signal', null, {}]) {
    const expected = await fs.promises.readFile(FILE, { encoding: 'utf8', signal }).catch((e) => e)
    const err = await readFilesUtf8Async([FILE], { signal }).catch((e) => e)
    assert.ok(err instanceof Error, String(signal))
    const fields = (e) => [e.constructor.name, e.name, e.code, e.message]
    assert.deepEqual(fields(err), fields(expected), String(signal))
  }
})

test('a sync batch is read by the native batch, not by a loop of single reads; flags only fs should judge go to fs, entry by entry', () => {
  const native = require('../lib/native')
  const calls = { readFilesOpen: 0, readPath: 0 }
  const originals = { readFilesOpen: native.readFilesOpen, readPath: native.readPath }
  for (const name of Object.keys(calls)) {
    native[name] = (...args) => {
      calls[name]++
      return originals[name](...args)
    }
  }
  try {
    assert.deepEqual(readFilesUtf8([FILE, FILE, FILE]), [TEXT, TEXT, TEXT])
    assert.deepEqual(calls, { readFilesOpen: 1, readPath: 0 })
    assert.deepEqual(readFilesUtf8([]), [])
    // A flag fs refuses: fs's own error for the first entry, as a loop of fs calls throws it.
    for (const flag of ['bogus', 'w']) {
      const target = scratch(`batch-options-${flag}.txt`)
      fs.writeFileSync(target, 'kept?')
      const expected = (() => {
        try {
          fs.readFileSync(target, { encoding: 'utf8', flag })
        } catch (e) {
          return e
        }
      })()
      fs.writeFileSync(target, 'kept?')
      const err = (() => {
        try {
          readFilesUtf8([target, FILE], { flag })
        } catch (e) {
          return e
        }
      })()
      assert.deepEqual([err?.constructor, err?.code, err?.message, err?.index], [expected.constructor, expected.code, expected.message, 0], flag)
      assert.equal(fs.readFileSync(target, 'utf8'), flag === 'w' ? '' : 'kept?', `${flag}: the file as fs leaves it`)
    }
    assert.equal(calls.readFilesOpen, 1, 'neither the empty list nor fs-only flags open a native batch')
  } finally {
    Object.assign(native, originals)
  }
})

test('without the addon a batch is a loop of fs reads: the same strings, the first failure thrown with its index, or each returned in place', () => {
  const { spawnSync } = require('node:child_process')
  const path = require('node:path')
  const missing = scratch('batch-options-missing.txt')
  const script = `
    const lib = require(${JSON.stringify(path.join(__dirname, '..'))})
    const fs = require('node:fs')
    const list = [${JSON.stringify(FILE)}, ${JSON.stringify(missing)}, ${JSON.stringify(FILE)}]
    const fields = (e) => [e.code, e.syscall, e.path, e.message, e.index]
    const fsError = (() => { try { fs.readFileSync(list[1], 'utf8') } catch (e) { return fields(e) } })()
    const thrown = (() => { try { lib.readFilesUtf8(list) } catch (e) { return fields(e) } })()
    const returned = lib.readFilesUtf8(list, { errors: 'return' }).map((v) => (typeof v === 'string' ? v : fields(v)))
    lib.readFilesUtf8Async(list).catch((e) => fields(e)).then((rejected) =>
      process.stdout.write(JSON.stringify({ engine: lib.engine(), fsError, thrown, returned, rejected, ok: lib.readFilesUtf8([list[0], list[2]]) })))`
  const env = { ...process.env, READFILE_UTF8_NATIVE_LIBRARY_PATH: scratch('no-such-addon.node') }
  delete env.READFILE_UTF8_REQUIRE_NATIVE
  const r = spawnSync(process.execPath, ['-e', script], { encoding: 'utf8', env, timeout: 60_000 })
  assert.equal(r.status, 0, r.stderr)
  const out = JSON.parse(r.stdout)
  const fsError = out.fsError.slice(0, 4)
  assert.deepEqual(out, {
    engine: 'fs',
    fsError: [...fsError, null],
    thrown: [...fsError, 1],
    returned: [TEXT, [...fsError, null], TEXT],
    rejected: [...fsError, 1],
    ok: [TEXT, TEXT],
  })
})
