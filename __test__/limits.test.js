'use strict'
// Endless and huge inputs (/dev/zero, /dev/urandom, a FIFO whose writer never
// stops, a sparse file of 1 TiB) stop at kMaxLength bytes with fs's ERR_STRING_TOO_LONG, and an aborted
// signal rejects at once and stops the read. Every case runs in a child
// process under `ulimit -v`, so a broken limit fails the test instead of
// eating the machine's memory. Most use the test-only READFILE_UTF8_TEST_MAX_BYTES
// (a lower limit, see ARCHITECTURE.md); one read of each kind uses the real one.
const { test } = require('node:test')
const assert = require('node:assert/strict')
const path = require('node:path')
const { spawnSync } = require('node:child_process')

const { SCRATCH, unsupportedOnWindows } = require('./helpers')

/** Each test runs its child under /bin/sh's `ulimit -v` and reads Linux's devices, FIFOs or /proc. */
const NOT_WINDOWS = unsupportedOnWindows('ulimit -v, /dev/zero, /dev/urandom, FIFOs (mkfifo), /proc/self/status')

const ROOT = path.join(__dirname, '..')
/** The test limit: no multiple of the reader's chunk or of a doubling. */
const TEST_LIMIT = 3 * 1024 * 1024 + 5
/** A child's address space (KiB): room for Node and one kMaxLength buffer, not for a runaway read. */
const ADDRESS_SPACE_KIB = 4_000_000

/** What every child script starts with: the library, fs, and helpers to measure. */
const PRELUDE = `
const fs = require('node:fs')
const { spawn, execFileSync } = require('node:child_process')
const api = require(ROOT)
const { errorFields } = require(ROOT + '/__test__/helpers')
const MiB = 1 << 20
const rssMiB = () => process.memoryUsage().rss / MiB
/** Peak RSS since the last resetPeak() (VmHWM), in MiB. */
const peakMiB = () => Number(/VmHWM:\\s+(\\d+)/.exec(fs.readFileSync('/proc/self/status', 'latin1'))[1]) / 1024
const resetPeak = () => fs.writeFileSync('/proc/self/clear_refs', '5')
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms))
const rejection = (promise) => promise.then(() => { throw new Error('expected a rejection') }, (err) => err)
const callbackError = (path, options) =>
  new Promise((resolve) => api.readFile(path, options, (err) => resolve(err ?? new Error('expected an error'))))
const thrownBy = (fn) => { try { fn() } catch (err) { return err } throw new Error('expected a throw') }
/**
 * A child that writes to the FIFO until it breaks (EPIPE) or \`cap\` bytes:
 * \`opened\` resolves once it has the FIFO open (a reader opened it too),
 * \`done\` with { code, written } when it stops.
 */
function writeForever(fifo, cap) {
  const source = \`
    const fs = require('node:fs')
    const fd = fs.openSync(\${JSON.stringify(fifo)}, 'w')
    fs.writeSync(1, 'open;')
    const chunk = Buffer.alloc(65536, 'fifo é ')
    let written = 0
    try { while (written < \${cap}) written += fs.writeSync(fd, chunk) } catch (err) {
      fs.writeSync(1, JSON.stringify({ code: err.code, written })); process.exit(0)
    }
    fs.writeSync(1, JSON.stringify({ code: 'CAP', written }))\`
  const child = spawn(process.execPath, ['-e', source], { stdio: ['ignore', 'pipe', 'inherit'] })
  let out = ''
  let opened
  const open = new Promise((resolve) => (opened = resolve))
  child.stdout.on('data', (d) => {
    out += d
    if (out.startsWith('open;')) opened()
  })
  const done = new Promise((resolve) =>
    child.on('close', () => resolve({ ...JSON.parse(out.slice(5) || '{}'), endedAt: performance.now() })),
  )
  return { opened: open, done }
}
/** A child that opens the FIFO, then writes to it only after \`ms\`; \`opened\` and \`done\` as writeForever's. */
function writeLate(fifo, ms) {
  const source = \`
    const fs = require('node:fs')
    const fd = fs.openSync(\${JSON.stringify(fifo)}, 'w')
    fs.writeSync(1, 'open;')
    setTimeout(() => { fs.writeSync(fd, 'late'); fs.closeSync(fd) }, \${ms})\`
  const child = spawn(process.execPath, ['-e', source], { stdio: ['ignore', 'pipe', 'inherit'] })
  return {
    opened: new Promise((resolve) => child.stdout.once('data', resolve)),
    done: new Promise((resolve) => child.on('close', resolve)),
  }
}
/** A child that writes exactly \`bytes\` ASCII bytes to the FIFO, then closes it. */
function writeBytes(fifo, bytes) {
  const source = \`require('node:fs').writeFileSync(\${JSON.stringify(fifo)}, Buffer.alloc(\${bytes}, 'a'))\`
  const child = spawn(process.execPath, ['-e', source], { stdio: 'inherit' })
  return new Promise((resolve) => child.on('close', resolve))
}
`

/**
 * Runs `script` (after PRELUDE; ROOT, SCRATCH and ARGS defined) in a fresh Node
 * under `ulimit -v`, with `env` added; returns what it printed as JSON.
 */
function runChild(script, { env = {}, args = {} } = {}) {
  const source = `'use strict'
const ROOT = ${JSON.stringify(ROOT)}; const SCRATCH = ${JSON.stringify(SCRATCH)}; const ARGS = ${JSON.stringify(args)}
${PRELUDE}
;(async () => { ${script} })().then((out) => process.stdout.write(JSON.stringify(out)), (err) => { console.error(err); process.exit(1) })`
  const r = spawnSync(
    '/bin/sh',
    ['-c', `ulimit -v ${ADDRESS_SPACE_KIB} && exec "$0" "$@"`, process.execPath, '-e', source],
    {
      encoding: 'utf8',
      env: { ...process.env, ...env, READFILE_UTF8_TEST_SCRATCH: SCRATCH },
      timeout: 120_000,
      killSignal: 'SIGKILL',
      maxBuffer: 1 << 20,
    },
  )
  assert.equal(r.signal, null, `child killed by ${r.signal}: ${r.stderr}`)
  assert.equal(r.status, 0, r.stderr)
  return JSON.parse(r.stdout)
}

test('under the test limit: /dev/zero, /dev/urandom, an endless FIFO and a 1 TiB sparse file stop with fs\'s ERR_STRING_TOO_LONG, every API (where fs reads on, or fs.promises on Node 20 gives a RangeError: a documented difference)', NOT_WINDOWS, () => {
  const out = runChild(
    `
    const { LIMIT } = ARGS
    // fs's error for a too-long file: a sparse regular file of kMaxLength bytes.
    const big = SCRATCH + '/limits-kmaxlength.txt'
    fs.writeFileSync(big, '')
    fs.truncateSync(big, require('node:buffer').constants.MAX_STRING_LENGTH)
    const expected = errorFields(thrownBy(() => fs.readFileSync(big, 'utf8')))
    fs.rmSync(big)
    /** The errors of the sync reads of \`file\` (path, Buffer path, its open \`fd\`) and of the async read of \`fd\`. */
    const syncAndFdErrors = async (file, fd) => ({
      readFileUtf8: errorFields(thrownBy(() => api.readFileUtf8(file))),
      readFileSync: errorFields(thrownBy(() => api.readFileSync(file, 'utf8'))),
      bufferPath: errorFields(thrownBy(() => api.readFileUtf8(Buffer.from(file)))),
      fd: errorFields(thrownBy(() => api.readFileUtf8(fd))),
      asyncFd: errorFields(await rejection(api.readFileUtf8Async(fd))),
    })
    const results = {}
    for (const device of ['/dev/zero', '/dev/urandom']) {
      const fd = fs.openSync(device, 'r')
      results[device] = {
        ...(await syncAndFdErrors(device, fd)),
        readFileUtf8Async: errorFields(await rejection(api.readFileUtf8Async(device))),
        promisesReadFile: errorFields(await rejection(api.promises.readFile(device, 'utf8'))),
        readFile: errorFields(await callbackError(device, 'utf8')),
      }
      fs.closeSync(fd)
    }
    // A FIFO whose writer never stops: each read stops at the limit and closes
    // the FIFO, so the writer sees EPIPE soon after.
    const fifo = SCRATCH + '/limits-endless.fifo'
    execFileSync('mkfifo', [fifo])
    const fifoReads = {
      sync: () => errorFields(thrownBy(() => api.readFileUtf8(fifo))),
      async: async () => errorFields(await rejection(api.readFileUtf8Async(fifo))),
      promises: async () => errorFields(await rejection(api.promises.readFile(fifo, { encoding: 'utf8' }))),
      callback: async () => errorFields(await callbackError(fifo, 'utf8')),
    }
    const writers = {}
    for (const [name, read] of Object.entries(fifoReads)) {
      const writer = writeForever(fifo, 64 * LIMIT)
      results['fifo ' + name] = await read()
      writers[name] = await writer.done
    }
    // Content of a FIFO one byte under the limit reads whole; at the limit it is too long.
    const under = {}
    for (const bytes of [LIMIT - 1, LIMIT]) {
      const writer = writeBytes(fifo, bytes)
      const sync = (() => { try { return api.readFileUtf8(fifo).length } catch (err) { return err.code } })()
      await writer
      const writer2 = writeBytes(fifo, bytes)
      const viaAsync = await api.readFileUtf8Async(fifo).then((s) => s.length, (err) => err.code)
      await writer2
      under[bytes] = { sync, async: viaAsync }
    }
    // A regular file too large for any string: refused at once by path; an fd
    // (whose offset could leave less of it) is read up to the limit. Its size
    // is never asked for in memory, which the address-space limit would refuse.
    const huge = SCRATCH + '/limits-huge.sparse'
    fs.writeFileSync(huge, '')
    fs.truncateSync(huge, 2 ** 40)
    const hugeFd = fs.openSync(huge, 'r')
    results[huge] = await syncAndFdErrors(huge, hugeFd)
    fs.closeSync(hugeFd)
    // By path, the promise and callback APIs give fs's own answer for it.
    const hugeAsync = {
      ours: errorFields(await rejection(api.readFileUtf8Async(huge))),
      promises: errorFields(await rejection(api.promises.readFile(huge, 'utf8'))),
      callback: errorFields(await callbackError(huge, 'utf8')),
    }
    const fsHugeAsync = errorFields(await rejection(fs.promises.readFile(huge, 'utf8')))
    fs.rmSync(huge)
    // Regular files are not bound by the test limit: they are checked by size.
    const regular = SCRATCH + '/limits-regular.txt'
    fs.writeFileSync(regular, Buffer.alloc(2 * LIMIT, 'é'))
    const regularSame =
      api.readFileUtf8(regular) === fs.readFileSync(regular, 'utf8') &&
      (await api.readFileUtf8Async(regular)) === fs.readFileSync(regular, 'utf8')
    return { expected, results, hugeAsync, fsHugeAsync, writers, under, regularSame }
    `,
    { env: { READFILE_UTF8_TEST_MAX_BYTES: String(TEST_LIMIT) }, args: { LIMIT: TEST_LIMIT } },
  )
  assert.equal(out.expected.code, 'ERR_STRING_TOO_LONG')
  for (const [source, byApi] of Object.entries(out.results)) {
    if (source.startsWith('fifo')) assert.deepEqual(byApi, out.expected, source)
    else for (const [name, fields] of Object.entries(byApi)) assert.deepEqual(fields, out.expected, `${source} ${name}`)
  }
  for (const [name, fields] of Object.entries(out.hugeAsync)) assert.deepEqual(fields, out.fsHugeAsync, `huge file, ${name}`)
  for (const [name, writer] of Object.entries(out.writers)) {
    assert.equal(writer.code, 'EPIPE', `${name}: the writer's write fails once the read stopped (${JSON.stringify(writer)})`)
    assert.ok(writer.written < 4 * TEST_LIMIT, `${name}: ${writer.written} bytes written before the read stopped`)
  }
  assert.deepEqual(out.under, {
    [TEST_LIMIT - 1]: { sync: TEST_LIMIT - 1, async: TEST_LIMIT - 1 },
    [TEST_LIMIT]: { sync: 'ERR_STRING_TOO_LONG', async: 'ERR_STRING_TOO_LONG' },
  })
  assert.equal(out.regularSame, true)
})

test('one real /dev/zero read, sync and async: ERR_STRING_TOO_LONG at kMaxLength bytes, at most one such buffer, RSS back after', NOT_WINDOWS, (t) => {
  const out = runChild(`
    const measure = async (read) => {
      const before = rssMiB()
      resetPeak()
      const started = performance.now()
      const code = await read().then(() => 'no error', (err) => err.code)
      const ms = performance.now() - started
      const peak = peakMiB()
      await sleep(100)
      return { code, ms, before, peak, after: rssMiB() }
    }
    const sync = await measure(async () => api.readFileUtf8('/dev/zero'))
    const viaAsync = await measure(() => api.readFileUtf8Async('/dev/zero'))
    return { sync, async: viaAsync }
  `)
  const limitMiB = 0x1fffffe8 / (1 << 20)
  for (const [name, m] of Object.entries(out)) {
    t.diagnostic(`${name}: ${m.ms.toFixed(0)} ms, RSS before ${m.before.toFixed(0)} MiB, peak ${m.peak.toFixed(0)} MiB, after ${m.after.toFixed(0)} MiB`)
    assert.equal(m.code, 'ERR_STRING_TOO_LONG', name)
    assert.ok(m.peak < m.before + limitMiB + 64, `${name}: peak RSS ${m.peak.toFixed(0)} MiB`)
    assert.ok(m.after < m.before + 32, `${name}: RSS ${m.before.toFixed(0)} → ${m.after.toFixed(0)} MiB`)
  }
})

test('an aborted signal rejects with fs\'s AbortError within moments, mid-read, and the read stops', NOT_WINDOWS, (t) => {
  const out = runChild(`
    const warnings = []
    process.on('warning', (w) => warnings.push(w.name + ': ' + w.message))
    /**
     * Starts \`read(signal)\`, aborts 20 ms after \`reading\` resolves; the time
     * to reject and the RSS peak after the abort.
     */
    const abortAfter20ms = async (read, reading = undefined) => {
      const controller = new AbortController()
      const pending = rejection(read(controller.signal))
      await reading
      await sleep(20)
      const rssAtAbort = rssMiB()
      resetPeak()
      const aborted = performance.now()
      controller.abort(new Error('enough'))
      const err = await pending
      const ms = performance.now() - aborted
      await sleep(400) // a read still going would reach hundreds of MiB by now
      return {
        ms,
        name: err.name, code: err.code, constructor: err.constructor.name, causeIsReason: err.cause === controller.signal.reason,
        rssAtAbort, peakAfterAbort: peakMiB(), rssAfter: rssMiB(),
      }
    }
    const fd = fs.openSync('/dev/zero', 'r')
    const results = {
      readFileUtf8Async: await abortAfter20ms((signal) => api.readFileUtf8Async('/dev/zero', { signal })),
      asyncFd: await abortAfter20ms((signal) => api.readFileUtf8Async(fd, { signal })),
      promisesReadFile: await abortAfter20ms((signal) => api.promises.readFile('/dev/zero', { encoding: 'utf8', signal })),
      readFile: await abortAfter20ms((signal) => new Promise((resolve, reject) =>
        api.readFile('/dev/zero', { encoding: 'utf8', signal }, (err, data) => (err ? reject(err) : resolve(data))))),
    }
    fs.closeSync(fd)
    // An endless FIFO: once the read stops it closes the FIFO, and the writer sees EPIPE.
    const fifo = SCRATCH + '/limits-abort.fifo'
    execFileSync('mkfifo', [fifo])
    const writer = writeForever(fifo, 2 ** 32)
    let aborted
    results.fifo = await abortAfter20ms((signal) => {
      signal.addEventListener('abort', () => (aborted = performance.now()))
      return api.readFileUtf8Async(fifo, { signal })
    }, writer.opened)
    const fifoWriter = await writer.done
    fifoWriter.msAfterAbort = fifoWriter.endedAt - aborted
    // A read blocked in read(2) (a FIFO with a silent writer) rejects at the
    // abort too, though the native read stops only once data comes.
    const silent = SCRATCH + '/limits-silent.fifo'
    execFileSync('mkfifo', [silent])
    const late = writeLate(silent, 1500)
    results.blockedFifo = await abortAfter20ms((signal) => api.readFileUtf8Async(silent, { signal }), late.opened)
    await late.done
    // Twelve reads sharing one signal: all reject, and no listener-leak warning.
    const controller = new AbortController()
    const shared = Array.from({ length: 12 }, () => rejection(api.readFileUtf8Async('/dev/zero', { signal: controller.signal })))
    await sleep(20)
    controller.abort()
    const sharedNames = (await Promise.all(shared)).map((err) => err.name)
    await sleep(100)
    return { results, fifoWriter, sharedNames, warnings }
  `)
  const maxMiB = 0x1fffffe8 / (1 << 20)
  for (const [name, r] of Object.entries(out.results)) {
    t.diagnostic(
      `${name}: rejected ${r.ms.toFixed(2)} ms after abort; RSS at abort ${r.rssAtAbort.toFixed(0)} MiB, ` +
        `peak after ${r.peakAfterAbort.toFixed(0)} MiB, 400 ms later ${r.rssAfter.toFixed(0)} MiB`,
    )
    assert.deepEqual(
      [r.name, r.code, r.constructor, r.causeIsReason],
      ['AbortError', 'ABORT_ERR', 'AbortError', true],
      name,
    )
    // The target is 50 ms; a loaded 2-core machine gets room.
    assert.ok(r.ms < 200, `${name}: rejected ${r.ms.toFixed(1)} ms after the abort`)
    assert.ok(r.peakAfterAbort < r.rssAtAbort + maxMiB / 4, `${name}: the read went on after the abort (peak ${r.peakAfterAbort} MiB)`)
  }
  t.diagnostic(`FIFO writer: ${out.fifoWriter.code} ${out.fifoWriter.msAfterAbort.toFixed(0)} ms after the abort, ${(out.fifoWriter.written / (1 << 20)).toFixed(1)} MiB written`)
  assert.equal(out.fifoWriter.code, 'EPIPE')
  assert.ok(out.fifoWriter.written < 0x1fffffe8 / 4, `${out.fifoWriter.written} bytes went into the FIFO: the read did not stop`)
  assert.deepEqual(out.sharedNames, Array(12).fill('AbortError'))
  assert.deepEqual(out.warnings, [])
})
