'use strict'
// What the package does under Bun and under Deno (README, lib/native.js),
// decided by `process.versions.bun` / `process.versions.deno` when it loads:
// here a Node child that names itself Bun or Deno before loading it, so that
// the routing is checked on every run of the suite, beside the real runtimes'
// own checks in CI. Under Bun the single reads and decodeUtf8 are the
// runtime's own fs and Buffer, batches stay ours, and the heap is not metered;
// under Deno every call is ours; under both every string is copied.
const { test } = require('node:test')
const assert = require('node:assert/strict')
const fs = require('node:fs')
const path = require('node:path')
const { spawnSync } = require('node:child_process')

const { scratch } = require('./helpers')

const ROOT = path.join(__dirname, '..')

/** Runs `script` in a Node child that says it is `runtime` ('bun', 'deno' or 'node'); returns its JSON. */
function runAs(runtime, script) {
  const pretend = runtime === 'node' ? '' : `Object.defineProperty(process.versions, '${runtime}', { value: '1.0.0' })\n`
  const env = { ...process.env }
  delete env.READFILE_UTF8_MEMORY_MODE
  const r = spawnSync(process.execPath, ['-e', `${pretend}${script}`], { cwd: ROOT, env, encoding: 'utf8', timeout: 60_000 })
  assert.equal(r.status, 0, r.stderr)
  return JSON.parse(r.stdout)
}

const TEXT = scratch('routing-text.txt')
const BIG = scratch('routing-big.txt')
fs.writeFileSync(TEXT, 'é 中 😀 \xff'.repeat(300))
fs.writeFileSync(BIG, 'a'.repeat(8 << 20))

// Counts the calls that reach fs's reads and Buffer#toString, then reads
// through every entry point; prints the counts and whether each result (and
// a missing file's error, field by field) is fs's.
const CALLS = `
  const fs = require('node:fs')
  const calls = { readFileSync: 0, readFile: 0, promisesReadFile: 0, toString: 0, read: 0 }
  const count = (name, fn) => function (...args) { calls[name]++; return Reflect.apply(fn, this, args) }
  // lib/fd-async.js keeps fs.read as it is at load: counted from before.
  fs.read = count('read', fs.read)
  const lib = require('.')
  const originals = { readFileSync: fs.readFileSync, readFile: fs.readFile, promisesReadFile: fs.promises.readFile }
  fs.readFileSync = count('readFileSync', fs.readFileSync)
  fs.readFile = count('readFile', fs.readFile)
  fs.promises.readFile = count('promisesReadFile', fs.promises.readFile)
  Buffer.prototype.toString = count('toString', Buffer.prototype.toString)
  const text = originals.readFileSync(${JSON.stringify(TEXT)}, 'utf8')
  const missing = ${JSON.stringify(scratch('routing-missing.txt'))}
  const fields = (e) => [e.constructor.name, e.code, e.errno, e.syscall, e.path, e.message].join('|')
  const fsError = (() => { try { originals.readFileSync(missing, 'utf8') } catch (e) { return fields(e) } })()
  const sync = (fn) => { const before = { ...calls }; const same = fn() === text; return { same, calls: diff(before) } }
  // fs's own reads may call Buffer#toString: it is counted for decodeUtf8 alone.
  const diff = (before) => Object.fromEntries(Object.entries(calls).filter(([k, v]) => k !== 'toString' && v !== before[k]).map(([k, v]) => [k, v - before[k]]))
  const bytes = Buffer.from('é'.repeat(1 << 19))
  ;(async () => {
    const out = {
      readFileUtf8: sync(() => lib.readFileUtf8(${JSON.stringify(TEXT)})),
      readFileSync: sync(() => lib.readFileSync(${JSON.stringify(TEXT)}, 'utf8')),
      bufferPath: sync(() => lib.readFileUtf8(Buffer.from(${JSON.stringify(TEXT)}))),
      fd: sync(() => { const fd = fs.openSync(${JSON.stringify(TEXT)}, 'r'); try { return lib.readFileUtf8(fd) } finally { fs.closeSync(fd) } }),
      decodeUtf8: (() => { const before = { ...calls }; const same = lib.decodeUtf8(bytes) === 'é'.repeat(1 << 19); return { same, toString: calls.toString - before.toString } })(),
      readFilesUtf8: sync(() => lib.readFilesUtf8([${JSON.stringify(TEXT)}])[0]),
      missingError: (() => { try { lib.readFileUtf8(missing) } catch (e) { return fields(e) === fsError } })(),
    }
    const before = { ...calls }
    out.async = [
      (await lib.readFileUtf8Async(${JSON.stringify(TEXT)})) === text,
      (await lib.promises.readFile(${JSON.stringify(TEXT)}, 'utf8')) === text,
      (await new Promise((resolve, reject) => lib.readFile(${JSON.stringify(TEXT)}, 'utf8', (e, s) => (e ? reject(e) : resolve(s))))) === text,
      (await lib.readFileUtf8Async(Buffer.from(${JSON.stringify(TEXT)}))) === text,
      await (async () => { const fd = fs.openSync(${JSON.stringify(TEXT)}, 'r'); try { return (await lib.readFileUtf8Async(fd)) === text } finally { fs.closeSync(fd) } })(),
    ]
    out.asyncCalls = diff(before)
    const beforeBatch = { ...calls }
    out.asyncBatch = (await lib.readFilesUtf8Async([${JSON.stringify(TEXT)}, ${JSON.stringify(TEXT)}])).every((s) => s === text)
    out.asyncBatchCalls = diff(beforeBatch)
    process.stdout.write(JSON.stringify(out))
  })()`

test('under Bun, single reads and decodeUtf8 are answered by the runtime\'s own fs and Buffer, batches by ours; results and errors are fs\'s', () => {
  const out = runAs('bun', CALLS)
  assert.deepEqual(out, {
    readFileUtf8: { same: true, calls: { readFileSync: 1 } },
    readFileSync: { same: true, calls: { readFileSync: 1 } },
    bufferPath: { same: true, calls: { readFileSync: 1 } },
    fd: { same: true, calls: { readFileSync: 1 } },
    decodeUtf8: { same: true, toString: 1 },
    readFilesUtf8: { same: true, calls: {} },
    missingError: true,
    async: [true, true, true, true, true],
    // The fd: read with fs.read from its position, as FileHandle.readFile reads it (lib/fd-async.js).
    asyncCalls: { promisesReadFile: 3, readFile: 1, read: 2 },
    asyncBatch: true,
    asyncBatchCalls: {},
  })
})

// On Windows fs answers Buffer paths and fds (lib/paths.js, fd-async.js): the
// sync ones through readFileSync, the async fd as FileHandle.readFile does.
const WINDOWS = process.platform === 'win32'

test('under Deno and under Node every call is ours: none reaches fs or Buffer#toString', () => {
  for (const runtime of ['deno', 'node']) {
    const out = runAs(runtime, CALLS)
    assert.deepEqual(
      out,
      {
        readFileUtf8: { same: true, calls: {} },
        readFileSync: { same: true, calls: {} },
        bufferPath: { same: true, calls: WINDOWS ? { readFileSync: 1 } : {} },
        fd: { same: true, calls: WINDOWS ? { readFileSync: 1 } : {} },
        decodeUtf8: { same: true, toString: 0 },
        readFilesUtf8: { same: true, calls: {} },
        // A missing file is fs's to answer, wherever we run.
        missingError: true,
        async: [true, true, true, true, true],
        asyncCalls: WINDOWS ? { promisesReadFile: 1, read: 2 } : {},
        asyncBatch: true,
        asyncBatchCalls: {},
      },
      runtime,
    )
  }
})

// The external memory a large string of each API adds: 0 when it is copied
// into the heap (the strings are kept alive until measured).
const EXTERNAL = `
  const lib = require('.')
  const big = ${JSON.stringify(BIG)}
  const kept = []
  const bytes = Buffer.from('é'.repeat(4 << 20))
  const added = async (read) => {
    const before = process.memoryUsage().external
    kept.push(await read())
    return (process.memoryUsage().external - before) >= ${4 << 20}
  }
  ;(async () => {
    process.stdout.write(JSON.stringify({
      readFileUtf8Async: await added(() => lib.readFileUtf8Async(big)),
      readFilesUtf8: await added(() => lib.readFilesUtf8([big])),
      readFilesUtf8Async: await added(() => lib.readFilesUtf8Async([big])),
      decodeUtf8: await added(() => lib.decodeUtf8(bytes)),
      v8Loaded: process.moduleLoadList.includes('NativeModule v8'),
    }))
  })()`

test('under Bun and under Deno every string is copied into the heap; under Node large async and batch strings are external', () => {
  const node = runAs('node', EXTERNAL)
  assert.deepEqual(node, { readFileUtf8Async: true, readFilesUtf8: true, readFilesUtf8Async: true, decodeUtf8: true, v8Loaded: true })
  const copied = { readFileUtf8Async: false, readFilesUtf8: false, readFilesUtf8Async: false, decodeUtf8: false }
  const { v8Loaded, ...deno } = runAs('deno', EXTERNAL)
  assert.deepEqual(deno, copied, 'deno')
  // Under Bun decodeUtf8 is the runtime's Buffer#toString, whose strings are
  // its own (Node 26's are external from a size); the heap is not metered.
  const { decodeUtf8, ...bun } = runAs('bun', EXTERNAL)
  assert.deepEqual(bun, { readFileUtf8Async: false, readFilesUtf8: false, readFilesUtf8Async: false, v8Loaded: false }, 'bun')
})
