'use strict'
// readFileUtf8Async, and the fs.readFile / fs.promises.readFile drop-ins: results
// and errors compared with fs.promises.readFile / fs.readFile field by field,
// including whether the error has stack frames (newer Nodes give none).
const { test } = require('node:test')
const assert = require('node:assert/strict')
const fs = require('node:fs')
const path = require('node:path')
const { pathToFileURL } = require('node:url')
const { spawnSync, execFileSync } = require('node:child_process')

const api = require('..')
const { readFileUtf8Async, promises } = api
const { SCRATCH, scratch, errorFields, osErrorFixtures, unsupportedOnWindows } = require('./helpers')

const { existing, osErrors: OS_ERRORS } = osErrorFixtures('async-')

/** errorFields plus whether the stack has frames, and the cause. */
function fields(err) {
  return {
    ...errorFields(err),
    stackless: typeof err?.stack === 'string' ? !err.stack.includes('\n') : undefined,
    cause: err?.cause,
    isAbortErrorClass: err?.constructor?.name === 'AbortError',
  }
}

async function rejection(promise) {
  try {
    await promise
  } catch (err) {
    return err
  }
  assert.fail('expected a rejection')
}

function callbackError(read, ...args) {
  return new Promise((resolve) => read(...args, (err, data) => resolve(err ?? { resolvedWith: data })))
}

/** Our promise APIs reject with exactly what fs.promises.readFile rejects with. */
async function assertSameRejection(label, p, options = 'utf8') {
  const expected = fields(await rejection(fs.promises.readFile(p, options)))
  assert.deepEqual(fields(await rejection(promises.readFile(p, options))), expected, `${label}: promises.readFile`)
  if (typeof p !== 'number') assert.deepEqual(fields(await rejection(readFileUtf8Async(p, options))), expected, `${label}: readFileUtf8Async`)
}

/** Our callback readFile gives exactly what fs.readFile gives. */
async function assertSameCallbackError(label, p, options = 'utf8') {
  const expected = fields(await callbackError(fs.readFile, p, options))
  assert.deepEqual(fields(await callbackError(api.readFile, p, options)), expected, `${label}: readFile callback`)
}

for (const [label, p] of Object.entries(OS_ERRORS)) {
  test(`${label}: fs.promises' and fs.readFile's errors, field by field`, async () => {
    for (const options of ['utf8', { encoding: 'utf8' }, { encoding: 'UTF-8', flag: 'r' }]) {
      await assertSameRejection(label, p, options)
      await assertSameCallbackError(label, p, options)
    }
  })
}

test('argument errors: wrong path types, NUL bytes, non-file URLs, bad options, bad signals', async () => {
  for (const p of [undefined, null, true, 1.5, NaN, 10n, {}, [], 'a\0b', Buffer.from('a\0b'), new URL('file:///tmp/a%00b'), new URL('http://example.invalid/x'), new URL('file://remote-host/x')]) {
    await assertSameRejection(`path ${String(p)}`, p)
    await assertSameRejection(`path ${String(p)}`, p, { encoding: 'utf8', signal: AbortSignal.abort() })
  }
  for (const signal of [5, null, {}, 'x']) await assertSameRejection(`signal ${String(signal)}`, existing, { encoding: 'utf8', signal })
  for (const options of [5, true]) {
    assert.deepEqual(fields(await rejection(promises.readFile(existing, options))), fields(await rejection(fs.promises.readFile(existing, options))))
    assert.deepEqual(fields(await rejection(readFileUtf8Async(existing, options))), fields(await rejection(fs.promises.readFile(existing, options))))
  }
  // readFileUtf8Async, like readFileUtf8, refuses other encodings (rejects).
  for (const encoding of ['latin1', 'nope']) {
    const err = await rejection(readFileUtf8Async(existing, encoding))
    assert.equal(err.code, 'ERR_INVALID_ARG_VALUE')
    assert.equal((await rejection(readFileUtf8Async(existing, { encoding }))).code, 'ERR_INVALID_ARG_VALUE')
  }
})

test('fds: readFileUtf8Async reads from the position and leaves the fd open, as fs.promises.readFile(filehandle)', async () => {
  const text = `head é ${'body 中文 😀 '.repeat(100000)} tail`
  // Small, and past the size from which files we open ourselves are read in halves at explicit offsets.
  for (const bytes of [Buffer.from(text).subarray(0, 5000), Buffer.from(text).subarray(0, (1 << 20) + 7), Buffer.from(text)]) {
    const file = scratch('async-fd.txt')
    fs.writeFileSync(file, bytes)
    for (const skip of [0, 3, 6, 4099]) {
      const ours = await fs.promises.open(file)
      const theirs = await fs.promises.open(file)
      try {
        await ours.read(Buffer.alloc(skip), 0, skip, null)
        await theirs.read(Buffer.alloc(skip), 0, skip, null)
        const expected = await fs.promises.readFile(theirs, 'utf8')
        assert.ok(expected.length > 0)
        assert.equal(await readFileUtf8Async(ours.fd), expected, `${bytes.length} bytes after ${skip}`)
        // Still open, now at its end, as fs leaves the filehandle.
        assert.equal(await readFileUtf8Async(ours.fd), await fs.promises.readFile(theirs, 'utf8'))
      } finally {
        await ours.close()
        await theirs.close()
      }
    }
  }
})

test("fds: readFileUtf8Async's errors are fs's", async () => {
  // An fd that is open but cannot be read: fs.promises.readFile(filehandle) is the oracle.
  const writeOnly = await fs.promises.open(scratch('async-write-only.txt'), 'w')
  const directory = await fs.promises.open(SCRATCH)
  try {
    for (const [label, fh] of [['write-only fd', writeOnly], ['directory fd', directory]]) {
      const expected = errorFields(await rejection(fs.promises.readFile(fh, 'utf8')))
      assert.ok(expected.code === 'EBADF' || expected.code === 'EISDIR', label)
      assert.deepEqual(errorFields(await rejection(readFileUtf8Async(fh.fd))), expected, label)
    }
  } finally {
    await writeOnly.close()
    await directory.close()
  }
  // Fd numbers with no open file, which fs.promises cannot take: fs's own read of them is the oracle.
  for (const fd of [-1, 2147483647]) {
    const expected = errorFields(await rejection((async () => fs.readFileSync(fd, 'utf8'))()))
    assert.equal(expected.code, 'EBADF')
    assert.deepEqual(errorFields(await rejection(readFileUtf8Async(fd))), expected, `fd ${fd}`)
  }
})

test('fds: the drop-ins leave them to fs (promises.readFile refuses numbers, readFile reads them)', async () => {
  const fd = fs.openSync(existing, 'r')
  const fsFd = fs.openSync(existing, 'r')
  try {
    // An open fd that a native read would read: the drop-in must reject as fs.promises does
    // (whose message names the number, so both are given the same one).
    const expected = fields(await rejection(fs.promises.readFile(fd, 'utf8')))
    assert.equal(expected.code, 'ERR_INVALID_ARG_TYPE')
    assert.deepEqual(fields(await rejection(promises.readFile(fd, 'utf8'))), expected)
    const viaFs = await new Promise((resolve) => fs.readFile(fsFd, 'utf8', (err, data) => resolve({ err, data })))
    const viaUs = await new Promise((resolve) => api.readFile(fd, 'utf8', (err, data) => resolve({ err, data })))
    assert.equal(viaFs.data, fs.readFileSync(existing, 'utf8'))
    assert.deepEqual(viaUs, viaFs)
  } finally {
    fs.closeSync(fd)
    fs.closeSync(fsFd)
  }
})

test('AbortSignal: aborted before the call, and during the read, as fs.promises', async () => {
  const before = AbortSignal.abort(new Error('why'))
  const expected = fields(await rejection(fs.promises.readFile(existing, { encoding: 'utf8', signal: before })))
  assert.equal(expected.name, 'AbortError')
  assert.deepEqual(fields(await rejection(readFileUtf8Async(existing, { signal: before }))), expected)
  assert.deepEqual(fields(await rejection(promises.readFile(existing, { encoding: 'utf8', signal: before }))), expected)
  assert.deepEqual(fields(await callbackError(api.readFile, existing, { encoding: 'utf8', signal: before })), fields(await callbackError(fs.readFile, existing, { encoding: 'utf8', signal: before })))
  // Aborted while the read is on the pool: rejects with the AbortError (cause = reason).
  const big = scratch('async-abort-big.txt')
  fs.writeFileSync(big, Buffer.alloc(8 << 20, 'é'))
  const controller = new AbortController()
  const pending = readFileUtf8Async(big, { signal: controller.signal })
  controller.abort('stop')
  const err = await rejection(pending)
  assert.equal(err.name, 'AbortError')
  assert.equal(err.code, 'ABORT_ERR')
  assert.equal(err.cause, 'stop')
  assert.equal(err.constructor.name, 'AbortError')
  // The callback of a read aborted on the pool runs once, as fs's does,
  // also after the native read has ended (it ends at its next chunk).
  for (const readFile of [fs.readFile, api.readFile]) {
    const c2 = new AbortController()
    const calls = []
    readFile(big, { encoding: 'utf8', signal: c2.signal }, (...args) => calls.push(args))
    c2.abort()
    await readFileUtf8Async(big)
    await new Promise((resolve) => setTimeout(resolve, 300))
    assert.equal(calls.length, 1, readFile.name)
    assert.equal(calls[0][0].name, 'AbortError')
  }
  // Not aborted: the signal is harmless.
  assert.equal(await readFileUtf8Async(existing, { signal: new AbortController().signal }), fs.readFileSync(existing, 'utf8'))
})

test('drop-ins pass every non-UTF-8 call to fs unchanged', async () => {
  for (const options of [undefined, null, {}, { encoding: null }, { flag: 'r' }, 'latin1', 'base64', 'hex', { encoding: 'binary' }]) {
    assert.deepEqual(await promises.readFile(existing, options), await fs.promises.readFile(existing, options), JSON.stringify(options))
    const ours = await new Promise((resolve, reject) => (options === undefined ? api.readFile(existing, (e, d) => (e ? reject(e) : resolve(d))) : api.readFile(existing, options, (e, d) => (e ? reject(e) : resolve(d)))))
    assert.deepEqual(ours, fs.readFileSync(existing, options))
  }
  const fh = await fs.promises.open(existing)
  try {
    assert.equal(await promises.readFile(fh, 'utf8'), fs.readFileSync(existing, 'utf8'))
  } finally {
    await fh.close()
  }
  // No callback: fs's own synchronous throw.
  assert.throws(() => api.readFile(existing, 'utf8'), (err) => err.code === 'ERR_INVALID_ARG_TYPE')
})

test('callback: runs on a later tick, as with fs', async () => {
  let sync = true
  const data = await new Promise((resolve) => {
    api.readFile(existing, 'utf8', (err, d) => {
      assert.equal(sync, false)
      resolve(d)
    })
    sync = false
  })
  assert.equal(data, fs.readFileSync(existing, 'utf8'))
})

test('64 concurrent reads of a 4 MiB file: every result is fs.promises.readFile\'s', async () => {
  const file = scratch('async-4m.txt')
  fs.writeFileSync(file, Buffer.from('Mixed: café, 中文, 日本語, emoji 😀🎉 and ASCII.\n'.repeat(80000)).subarray(0, 4 << 20))
  const expected = await fs.promises.readFile(file, 'utf8')
  const results = await Promise.all(Array.from({ length: 64 }, () => readFileUtf8Async(file)))
  assert.equal(results.length, 64)
  for (const r of results) assert.equal(r, expected)
})

/**
 * Runs `script` in a fresh Node (ROOT defined, `args` as ARGS), so that a main
 * thread blocked for good ends in the timeout instead of hanging the runner.
 */
function runChild(script, args, blockedMessage) {
  const source = `const ROOT = ${JSON.stringify(path.join(__dirname, '..'))}; const ARGS = ${JSON.stringify(args)};\n${script}`
  const r = spawnSync(process.execPath, ['-e', source], { encoding: 'utf8', timeout: 30_000, killSignal: 'SIGKILL' })
  assert.equal(r.signal, null, `${blockedMessage} (child killed by ${r.signal}: ${r.stderr})`)
  assert.equal(r.status, 0, r.stderr)
  return JSON.parse(r.stdout)
}

test('reads of FIFOs that only a timer on the main thread feeds complete: the main thread never waits in open or read', unsupportedOnWindows('FIFOs (mkfifo)'), () => {
  // Each async entry point reads a FIFO with no writer. Only a 1 ms timer on
  // the main thread opens the FIFOs for writing and writes them, a chunk per
  // tick, so the reads finish only if that timer keeps firing while they are
  // in flight; a read made on the main thread waits in open(2) for good.
  const fifos = ['a', 'b', 'c'].map((name) => scratch(`async-fifo-${name}`))
  for (const fifo of fifos) execFileSync('mkfifo', [fifo])
  const out = runChild(
    `const fs = require('node:fs')
    const { readFileUtf8Async, promises, readFile } = require(ROOT)
    const { fifos, chunk, rounds } = ARGS
    let settled = 0
    const reads = [
      readFileUtf8Async(fifos[0]),
      promises.readFile(fifos[1], 'utf8'),
      new Promise((resolve, reject) => readFile(fifos[2], 'utf8', (err, data) => (err ? reject(err) : resolve(data)))),
    ].map((p) => p.finally(() => settled++))
    const writers = fifos.map(() => ({ fd: -1, sent: 0 }))
    let ticksInFlight = 0
    const timer = setInterval(() => {
      if (settled === 0) ticksInFlight++
      for (const [i, w] of writers.entries()) {
        if (w.sent === rounds) continue
        if (w.fd < 0) {
          try {
            w.fd = fs.openSync(fifos[i], fs.constants.O_WRONLY | fs.constants.O_NONBLOCK)
          } catch (err) {
            if (err.code === 'ENXIO') continue // its reader has not opened it yet
            throw err
          }
        }
        fs.writeSync(w.fd, chunk)
        if (++w.sent === rounds) fs.closeSync(w.fd)
      }
    }, 1)
    Promise.all(reads).then((results) => {
      clearInterval(timer)
      process.stdout.write(JSON.stringify({ results, ticksInFlight }))
    })`,
    { fifos, chunk: 'fifo é 中 😀 '.repeat(20), rounds: 20 },
    'the reads never finished: the main thread was blocked, so the timer that feeds the FIFOs never fired',
  )
  const expected = 'fifo é 中 😀 '.repeat(20 * 20)
  assert.deepEqual(out.results, [expected, expected, expected])
  assert.ok(out.ticksInFlight >= 20, `the timer fired ${out.ticksInFlight} times while the reads were in flight`)
})

test('large async reads leave the main thread free: it spends a small share of the CPU time they take', unsupportedOnWindows('per-thread CPU time is read from /proc/self/task'), (t) => {
  // Files of dense errors (the costliest decode), below the size from which a
  // decode is split across two threads. Main-thread CPU time, from the kernel's
  // per-thread accounting, against the whole process's over the reads.
  const files = Array.from({ length: 12 }, (_, i) => {
    const file = scratch(`async-cpu-${i}.bin`)
    const bytes = Buffer.alloc(3 << 20)
    for (let j = 0; j < bytes.length; j++) bytes[j] = (Math.imul(j + i, 2654435761) >>> 13) & 0xff
    fs.writeFileSync(file, bytes)
    return file
  })
  const out = runChild(
    `const fs = require('node:fs')
    const { readFileUtf8Async } = require(ROOT)
    const { files } = ARGS
    const schedstat = '/proc/self/task/' + process.pid + '/schedstat'
    const mainCpuNs = () => Number(fs.readFileSync(schedstat, 'latin1').split(' ')[0])
    const processCpuNs = () => { const u = process.cpuUsage(); return (u.user + u.system) * 1000 }
    const expected = files.map((f) => fs.readFileSync(f, 'utf8'))
    let settled = 0
    let ticksInFlight = 0
    const timer = setInterval(() => { if (settled < files.length) ticksInFlight++ }, 1)
    const main0 = mainCpuNs()
    const process0 = processCpuNs()
    Promise.all(files.map((f) => readFileUtf8Async(f).finally(() => settled++))).then((results) => {
      const mainNs = mainCpuNs() - main0
      const processNs = processCpuNs() - process0
      clearInterval(timer)
      const same = results.filter((s, i) => s === expected[i]).length
      process.stdout.write(JSON.stringify({ same, mainNs, processNs, ticksInFlight }))
    })`,
    { files },
    'the reads never finished',
  )
  assert.equal(out.same, files.length, 'every result is fs.readFileSync\'s')
  const share = out.mainNs / out.processNs
  t.diagnostic(`main thread: ${(out.mainNs / 1e6).toFixed(0)} ms of the reads' ${(out.processNs / 1e6).toFixed(0)} ms of CPU time`)
  assert.ok(share < 0.25, `the main thread took ${(share * 100).toFixed(0)} % of the CPU time of the reads (${(out.mainNs / 1e6).toFixed(0)} of ${(out.processNs / 1e6).toFixed(0)} ms)`)
  assert.ok(out.ticksInFlight > 0, 'the timer fired while the reads were in flight')
})

test('promises.readFile and readFile match fs on strings, Buffers and URLs of every class', async () => {
  const file = scratch('async-kinds.txt')
  for (const bytes of [Buffer.from('plain'), Buffer.from('déjà'), Buffer.from('中😀'), Buffer.from([0x61, 0xff, 0xe2, 0x82]), Buffer.alloc(100000, 'é')]) {
    fs.writeFileSync(file, bytes)
    const expected = await fs.promises.readFile(file, 'utf8')
    for (const p of [file, Buffer.from(file), pathToFileURL(file)]) {
      assert.equal(await promises.readFile(p, 'utf8'), expected)
      assert.equal(await readFileUtf8Async(p), expected)
      assert.equal(await new Promise((resolve) => api.readFile(p, { encoding: 'utf8' }, (e, d) => resolve(d))), expected)
    }
  }
})
