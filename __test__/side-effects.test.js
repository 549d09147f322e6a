'use strict'
// What happens around the string: the files a call creates, truncates or
// leaves alone, the FIFOs it opens or not, the fds a child inherits, the
// threads a batch runs, and how soon it returns. The reference for a sync
// batch is the loop of fs.readFileSync that stops at its first failure (or,
// errors returned, the loop that catches them); for an async batch,
// Promise.all over fs.promises.readFile, which starts every read.
const { test } = require('node:test')
const assert = require('node:assert/strict')
const fs = require('node:fs')
const path = require('node:path')
const { spawnSync, execFileSync } = require('node:child_process')

const { readFilesUtf8, readFilesUtf8Async, readFileUtf8, readFileUtf8Async } = require('..')
const { FLAGS } = require('../lib/options')
const { scratch, unsupportedOnWindows } = require('./helpers')

const ROOT = path.join(__dirname, '..')

/** A fresh folder holding the files one run of a list acts on. */
function stage(name) {
  const dir = scratch(name)
  fs.mkdirSync(dir)
  fs.writeFileSync(path.join(dir, 'one'), 'one é')
  fs.writeFileSync(path.join(dir, 'important'), 'important data', { mode: 0o640 })
  fs.writeFileSync(path.join(dir, 'two'), 'two 中')
  fs.chmodSync(path.join(dir, 'important'), 0o640)
  return dir
}

/** The list: a file, a path that cannot exist, files after it (one missing). */
function listIn(dir) {
  return ['one', 'no-such-dir/x', 'important', 'new-file', 'two'].map((name) => path.join(dir, name))
}

/** Each entry's state: absent, or its content and mode. */
function stateOf(dir) {
  return ['one', 'important', 'new-file', 'two'].map((name) => {
    const p = path.join(dir, name)
    if (!fs.existsSync(p)) return `${name}: absent`
    return `${name}: ${JSON.stringify(fs.readFileSync(p, 'latin1'))} mode ${(fs.statSync(p).mode & 0o777).toString(8)}`
  })
}

/** What the loop of fs.readFileSync gives: [values], or the failure and its index. */
function fsLoop(list, flag, returnErrors) {
  const out = []
  for (let i = 0; i < list.length; i++) {
    try {
      out.push(fs.readFileSync(list[i], { encoding: 'utf8', flag }))
    } catch (err) {
      if (!returnErrors) return { failedAt: i, code: err.code }
      out.push(`error ${err.code}`)
    }
  }
  return { out }
}

/** The same shape from one of our batches. */
function ourBatch(list, flag, returnErrors) {
  try {
    const out = readFilesUtf8(list, { flag, concurrency: 4, errors: returnErrors ? 'return' : 'throw' })
    return { out: out.map((v) => (typeof v === 'string' ? v : `error ${v.code}`)) }
  } catch (err) {
    return { failedAt: err.index, code: err.code }
  }
}

/** Runs `fn` with the process's umask at 0, so that created files show the mode the call asked for. */
function withoutUmask(fn) {
  const old = process.umask(0)
  try {
    return fn()
  } finally {
    process.umask(old)
  }
}

test("a sync batch that throws leaves every file as the loop that stops at its first failure leaves it, for every flag of fs's table (umask 0)", () => {
  let n = 0
  for (const [name, number] of FLAGS) {
    for (const flag of [name, number]) {
      for (const returnErrors of [false, true]) {
        const label = `flag ${JSON.stringify(flag)}${returnErrors ? ", errors: 'return'" : ''}`
        const theirsDir = stage(`loop-${n}`)
        const oursDir = stage(`ours-${n++}`)
        const theirs = withoutUmask(() => fsLoop(listIn(theirsDir), flag, returnErrors))
        const ours = withoutUmask(() => ourBatch(listIn(oursDir), flag, returnErrors))
        assert.deepEqual(ours, theirs, label)
        assert.deepEqual(stateOf(oursDir), stateOf(theirsDir), label)
      }
    }
  }
})

test('an async batch leaves every file as Promise.all over fs.promises.readFile leaves it, for every flag (umask 0)', async () => {
  let n = 0
  for (const [name] of FLAGS) {
    const theirsDir = stage(`all-${n}`)
    const oursDir = stage(`async-${n++}`)
    const old = process.umask(0)
    try {
      const theirs = await Promise.allSettled(listIn(theirsDir).map((p) => fs.promises.readFile(p, { encoding: 'utf8', flag: name })))
      const ours = await readFilesUtf8Async(listIn(oursDir), { flag: name, errors: 'return', concurrency: 4 })
      assert.deepEqual(
        ours.map((v) => (typeof v === 'string' ? v : v.code)),
        theirs.map((r) => (r.status === 'fulfilled' ? r.value : r.reason.code)),
        name,
      )
    } finally {
      process.umask(old)
    }
    assert.deepEqual(stateOf(oursDir), stateOf(theirsDir), `flag ${name}`)
  }
})

test('a file a read creates gets mode 0o666 less the umask, as fs gives it: every entry point', unsupportedOnWindows('POSIX modes and umask'), async () => {
  const old = process.umask(0)
  try {
    const reads = {
      readFileUtf8: (p) => readFileUtf8(p, { flag: 'a+' }),
      readFileUtf8Async: (p) => readFileUtf8Async(p, { flag: 'a+' }),
      readFilesUtf8: (p) => readFilesUtf8([p], { flag: 'a+' }),
      readFilesUtf8Async: (p) => readFilesUtf8Async([p], { flag: 'a+' }),
    }
    for (const [name, read] of Object.entries(reads)) {
      const ours = scratch(`created-by-${name}`)
      const theirs = scratch(`created-by-fs-for-${name}`)
      await read(ours)
      fs.readFileSync(theirs, { encoding: 'utf8', flag: 'a+' })
      assert.equal(fs.statSync(ours).mode & 0o777, fs.statSync(theirs).mode & 0o777, name)
      assert.equal(fs.statSync(ours).mode & 0o777, 0o666, name)
    }
  } finally {
    process.umask(old)
  }
})

/** Runs `script` in a child process (CommonJS, with the package as `api`), failing after `ms`. */
function runChild(script, ms = 20_000, env = process.env) {
  const r = spawnSync(process.execPath, ['-e', `const api = require(${JSON.stringify(ROOT)});\n${script}`], {
    encoding: 'utf8',
    timeout: ms,
    env,
  })
  if (r.error?.code === 'ETIMEDOUT' || r.signal === 'SIGTERM') assert.fail(`the child hung for ${ms} ms:\n${r.stdout}${r.stderr}`)
  assert.equal(r.status, 0, r.stderr)
  return r.stdout
}

test('a sync batch that throws returns at once: no FIFO past its failure is opened or waited for', unsupportedOnWindows('FIFOs (mkfifo)'), () => {
  const dir = scratch('fifo-past-failure')
  fs.mkdirSync(dir)
  const fifo = path.join(dir, 'fifo')
  execFileSync('mkfifo', [fifo])
  fs.writeFileSync(path.join(dir, 'a'), 'a')
  fs.writeFileSync(path.join(dir, 'b'), 'b')
  const out = runChild(
    `
    const fs = require('node:fs')
    const dir = ${JSON.stringify(dir)}
    const list = [dir + '/a', dir + '/b', '/nonexistent', dir + '/fifo', dir + '/fifo', dir + '/fifo']
    for (let round = 0; round < 20; round++) {
      for (const concurrency of [1, 2, 4, 8]) {
        try {
          api.readFilesUtf8(list, { concurrency })
          throw new Error('no throw')
        } catch (err) {
          if (err.code !== 'ENOENT' || err.index !== 2) throw err
        }
      }
    }
    // No reader holds the FIFO open: a writer that does not wait finds none.
    try {
      fs.openSync(dir + '/fifo', fs.constants.O_WRONLY | fs.constants.O_NONBLOCK)
      console.log('a reader had it open')
    } catch (err) {
      console.log(err.code)
    }`,
    10_000,
  )
  assert.equal(out.trim(), 'ENXIO')
})

test('a successful fd in the middle of a list gives the full-length array, in order', () => {
  const files = ['x', 'y', 'z'].map((n) => scratch(`fd-mid-${n}`))
  files.forEach((f, i) => fs.writeFileSync(f, `file ${i} é`))
  for (const concurrency of [1, 2, 4]) {
    for (const errors of ['throw', 'return']) {
      const fd = fs.openSync(files[1], 'r')
      try {
        const out = readFilesUtf8([files[0], fd, files[2]], { concurrency, errors })
        assert.deepEqual(out, ['file 0 é', 'file 1 é', 'file 2 é'], `concurrency ${concurrency}, errors ${errors}`)
      } finally {
        fs.closeSync(fd)
      }
    }
  }
})

/** The names of this process's threads that are a batch's readers. */
const READER_THREADS = `
  function readerThreads() {
    return require('node:fs').readdirSync('/proc/self/task')
      .filter((t) => { try { return require('node:fs').readFileSync('/proc/self/task/' + t + '/comm', 'latin1').startsWith('readfile-utf8-b') } catch { return false } })
      .length
  }`

test('a sync batch runs concurrency - 1 reader threads beside the JS thread, none for concurrency 1, and none once it returns', unsupportedOnWindows('FIFOs, and thread names in /proc/self/task'), () => {
  const dir = scratch('thread-count')
  fs.mkdirSync(dir)
  execFileSync('mkfifo', [path.join(dir, 'fifo')])
  for (let i = 0; i < 2000; i++) fs.writeFileSync(path.join(dir, `f${i}`), `file ${i}`)
  const out = runChild(
    `${READER_THREADS}
    const fs = require('node:fs')
    const { Worker } = require('node:worker_threads')
    const dir = ${JSON.stringify(dir)}
    const sleep = (ms) => new Promise((r) => setTimeout(r, ms))
    ;(async () => {
      const counts = []
      for (const concurrency of [1, 2, 4]) {
        const worker = new Worker(\`
          const api = require(${JSON.stringify(ROOT)})
          const { parentPort, workerData } = require('node:worker_threads')
          const list = [workerData.dir + '/fifo']
          for (let i = 0; i < 2000; i++) list.push(workerData.dir + '/f' + i)
          const out = api.readFilesUtf8(list, { concurrency: workerData.concurrency })
          parentPort.postMessage(out.length + ' ' + out[0] + ' ' + out[2000])
        \`, { eval: true, workerData: { dir, concurrency } })
        const done = new Promise((resolve, reject) => { worker.on('message', resolve); worker.on('error', reject) })
        // The Worker is blocked on the FIFO, its readers at the ring's end
        // (waited for, up to a deadline: a loaded machine starts them late).
        await sleep(500)
        for (const until = Date.now() + 10000; readerThreads() < concurrency - 1 && Date.now() < until; ) await sleep(25)
        const during = readerThreads()
        const writer = fs.openSync(dir + '/fifo', 'w')
        fs.writeSync(writer, 'fifo text')
        fs.closeSync(writer)
        const result = await done
        await worker.terminate()
        counts.push(concurrency + ':' + during + ':' + readerThreads() + ':' + result)
      }
      console.log(counts.join('\\n'))
    })()`,
  )
  assert.deepEqual(out.trim().split('\n'), [
    '1:0:0:2001 fifo text file 1999',
    '2:1:0:2001 fifo text file 1999',
    '4:3:0:2001 fifo text file 1999',
  ])
})

test('an async batch aborted mid-way: its reader threads are gone soon, and the process exits promptly, a FIFO among the entries or not', unsupportedOnWindows('FIFOs, and thread names in /proc/self/task'), () => {
  const dir = scratch('abort-threads')
  fs.mkdirSync(dir)
  execFileSync('mkfifo', [path.join(dir, 'fifo')])
  for (let i = 0; i < 3000; i++) fs.writeFileSync(path.join(dir, `f${i}`), `file ${i} `.repeat(200))
  const out = runChild(
    `${READER_THREADS}
    const dir = ${JSON.stringify(dir)}
    const sleep = (ms) => new Promise((r) => setTimeout(r, ms))
    ;(async () => {
      const list = []
      for (let i = 0; i < 3000; i++) list.push(dir + '/f' + i)
      const controller = new AbortController()
      // Aborted as soon as its readers have started (the call starts them before it returns).
      const reading = api.readFilesUtf8Async(list, { signal: controller.signal, concurrency: 4 })
      controller.abort()
      const err = await reading.catch((e) => e)
      await sleep(300)
      console.log(err.name, readerThreads())
      // A FIFO no writer ever opens: its reader stays blocked in open(2),
      // which must not keep the process from exiting.
      const withFifo = new AbortController()
      const blocked = api.readFilesUtf8Async([dir + '/fifo', ...list.slice(0, 10)], { signal: withFifo.signal })
      setTimeout(() => withFifo.abort(), 100)
      console.log((await blocked.catch((e) => e)).name)
    })()`,
    10_000,
  )
  assert.deepEqual(out.trim().split('\n'), ['AbortError 0', 'AbortError'])
})

test('an abort while the entries left to fs are being read rejects the async batch', async () => {
  const original = fs.promises.readFile
  // A layer that serves /virtual/ paths slowly, as a file system over a network would.
  fs.promises.readFile = function (p, options) {
    if (!String(p).startsWith('/virtual/')) return Reflect.apply(original, this, arguments)
    return new Promise((resolve) => setTimeout(resolve, 200, 'virtual text'))
  }
  try {
    const real = scratch('abort-js-side')
    fs.writeFileSync(real, 'real')
    assert.deepEqual(await readFilesUtf8Async([real, '/virtual/a']), ['real', 'virtual text'])
    const controller = new AbortController()
    const reading = readFilesUtf8Async([real, '/virtual/a', '/virtual/b'], { signal: controller.signal })
    setTimeout(() => controller.abort(), 50)
    await assert.rejects(reading, { name: 'AbortError' })
  } finally {
    fs.promises.readFile = original
  }
})

test('no fd of ours reaches a child spawned while a read is blocked (O_CLOEXEC): async read and async batch', unsupportedOnWindows('FIFOs, and fds in /proc/self/fd'), async () => {
  const fifo = scratch('cloexec-fifo')
  execFileSync('mkfifo', [fifo])
  for (const [name, start] of [
    ['readFileUtf8Async', () => readFileUtf8Async(fifo)],
    ['readFilesUtf8Async', () => readFilesUtf8Async([fifo]).then((out) => out[0])],
  ]) {
    // A writer that holds the FIFO open (read-write opens do not wait), so
    // that our open succeeds and our read blocks until the text comes.
    const writer = fs.openSync(fifo, 'r+')
    const reading = start()
    await new Promise((resolve) => setTimeout(resolve, 200))
    const listing = execFileSync('ls', ['-l', '/proc/self/fd'], { encoding: 'utf8' })
    fs.writeSync(writer, 'through the fifo')
    fs.closeSync(writer)
    assert.equal(await reading, 'through the fifo', name)
    assert.ok(!listing.includes(fifo), `${name}: the child inherited our fd of the FIFO:\n${listing}`)
  }
})
