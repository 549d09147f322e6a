'use strict'
// Async reads in flight together share one pool of reader threads (README:
// readFileUtf8Async): each must keep its own semantics — its own result or
// fs.promises' error field by field, its own signal, its own flag — whatever
// the reads beside it do, and none may wait for another's slow file longer
// than a loop of fs.promises would. Node's own fs.promises is the oracle.
const test = require('node:test')
const assert = require('node:assert/strict')
const fs = require('node:fs')
const path = require('node:path')
const { execFileSync, spawn } = require('node:child_process')

const ours = require('..')
const { scratch, errorFields, osErrorFixtures, unsupportedOnWindows } = require('./helpers')
const { randomFiles } = require('./cases')

const ROOT = path.join(__dirname, '..')

/** What a promise settles to, comparable field by field. */
async function settled(promise) {
  try {
    return { value: await promise }
  } catch (err) {
    return { error: errorFields(err) }
  }
}

/** A folder of `count` files of every kind of text (random, deterministic). */
function textFiles(name, count) {
  const dir = scratch(name)
  fs.mkdirSync(dir, { recursive: true })
  return randomFiles(7, count, 3000).map((bytes, i) => {
    const file = path.join(dir, `${i}.txt`)
    fs.writeFileSync(file, Buffer.from(bytes))
    return file
  })
}

/** Our three async APIs, each as a function of (path, options) → promise. */
const APIS = {
  readFileUtf8Async: (p, o) => ours.readFileUtf8Async(p, o),
  'promises.readFile': (p, o) => ours.promises.readFile(p, o ?? 'utf8'),
  readFile: (p, o) => new Promise((resolve, reject) => ours.readFile(p, o ?? 'utf8', (err, s) => (err ? reject(err) : resolve(s)))),
}
const FS_APIS = {
  readFileUtf8Async: (p, o) => fs.promises.readFile(p, typeof o === 'object' ? { encoding: 'utf8', ...o } : 'utf8'),
  'promises.readFile': (p, o) => fs.promises.readFile(p, o ?? 'utf8'),
  readFile: (p, o) => new Promise((resolve, reject) => fs.readFile(p, o ?? 'utf8', (err, s) => (err ? reject(err) : resolve(s)))),
}

test('a Promise.all of reads with failures mixed in: each settles as fs.promises settles it, field by field', async () => {
  const files = textFiles('mixed', 60)
  const { osErrors } = osErrorFixtures('concurrent-')
  const failing = Object.values(osErrors)
  // Failures between the texts, so that results and errors come back interleaved.
  const list = files.flatMap((file, i) => (i % 5 === 0 ? [file, failing[(i / 5) % failing.length]] : [file]))
  for (const [name, read] of Object.entries(APIS)) {
    const got = await Promise.all(list.map((p) => settled(read(p))))
    const expected = await Promise.all(list.map((p) => settled(FS_APIS[name](p))))
    list.forEach((p, i) => assert.deepEqual(got[i], expected[i], `${name}: ${String(p)}`))
  }
})

test('a signal aborts only the reads it was given; the others resolve as fs', async () => {
  const files = textFiles('signals', 80)
  const controllers = [new AbortController(), new AbortController()]
  const reads = files.map((file, i) => {
    const signal = i % 3 === 2 ? undefined : controllers[i % 3].signal
    return { file, signal, promise: settled(ours.readFileUtf8Async(file, { signal })) }
  })
  controllers[0].abort()
  const abortError = await settled(fs.promises.readFile(files[0], { encoding: 'utf8', signal: AbortSignal.abort() }))
  for (const { file, signal, promise } of reads) {
    const got = await promise
    if (signal === controllers[0].signal) {
      assert.equal(got.error?.name, 'AbortError', file)
      assert.equal(got.error?.code, abortError.error.code, file)
    } else {
      assert.deepEqual(got, { value: fs.readFileSync(file, 'utf8') }, file)
    }
  }
  // A signal aborted after its reads settled changes nothing, and one that
  // aborts while many reads share it rejects each of them once.
  controllers[1].abort()
  const shared = new AbortController()
  const many = files.map((file) => settled(ours.promises.readFile(file, { encoding: 'utf8', signal: shared.signal })))
  shared.abort()
  for (const got of await Promise.all(many)) {
    assert.ok(got.value === undefined ? got.error.name === 'AbortError' : typeof got.value === 'string')
  }
})

test('reads of one path with different flags in one Promise.all have the side effects and results of fs', async () => {
  // The same names in two folders: one read by us, one by fs; the folders must end alike.
  const run = async (dir, read) => {
    fs.mkdirSync(dir, { recursive: true })
    fs.writeFileSync(path.join(dir, 'exists.txt'), 'déjà vu\n')
    const flags = ['r', 'r+', 'a+', 'rs', 'w+', 'ax+', 'wx', 'a', 0]
    const targets = ['exists.txt', 'made-by-a+.txt', 'made-by-ax+.txt']
    const jobs = []
    for (const target of targets) for (const flag of flags) jobs.push([target, flag])
    // Sequential within a target (flags that create or truncate depend on
    // order), concurrent across targets.
    const results = await Promise.all(
      targets.map(async (target) => {
        const out = []
        for (const flag of flags) out.push(await settled(read(path.join(dir, target), { encoding: 'utf8', flag })))
        return out
      }),
    )
    const listing = fs.readdirSync(dir).sort().map((name) => [name, fs.readFileSync(path.join(dir, name), 'utf8')])
    // Error fields name the folder: compared without it.
    return { results: JSON.parse(JSON.stringify(results.flat()).replaceAll(JSON.stringify(dir).slice(1, -1), 'DIR')), listing }
  }
  const mine = await run(scratch('flags-ours'), (p, o) => ours.promises.readFile(p, o))
  const theirs = await run(scratch('flags-fs'), (p, o) => fs.promises.readFile(p, o))
  assert.deepEqual(mine, theirs)
})

test('a FIFO among the reads: it waits for its writer, the others do not wait for it', unsupportedOnWindows('FIFOs'), async () => {
  const files = textFiles('fifo-mates', 40)
  const fifo = scratch('concurrent.fifo')
  execFileSync('mkfifo', [fifo])
  const started = performance.now()
  // The FIFO first: a loop of fs.promises would wait for it before any other read.
  const fromFifo = ours.readFileUtf8Async(fifo)
  const others = Promise.all(files.map((file) => ours.readFileUtf8Async(file)))
  const texts = await others
  texts.forEach((text, i) => assert.equal(text, fs.readFileSync(files[i], 'utf8'), files[i]))
  // Only now does the FIFO get a writer: every other read resolved without it.
  const writer = fs.createWriteStream(fifo)
  writer.end('piped — ünïcode\n')
  assert.equal(await fromFifo, 'piped — ünïcode\n')
  assert.ok(performance.now() - started < 60_000)
  // Several FIFOs at once, each with a writer that waits for a later read: as
  // in fs's pool of four threads, fewer than four such reads leave the others
  // running.
  const fifos = [0, 1, 2].map((i) => {
    const p = scratch(`concurrent-${i}.fifo`)
    execFileSync('mkfifo', [p])
    return p
  })
  const fifoReads = fifos.map((p) => ours.promises.readFile(p, 'utf8'))
  const plain = await ours.readFileUtf8Async(files[0])
  assert.equal(plain, fs.readFileSync(files[0], 'utf8'))
  fifos.forEach((p, i) => fs.writeFileSync(p, `fifo ${i}`))
  assert.deepEqual(await Promise.all(fifoReads), fifos.map((_, i) => `fifo ${i}`))
})

test('while results keep coming, the event loop turns at least once per run of them (timers and I/O are not held up)', async () => {
  const { BATCH_RUN } = require('../lib/limits')
  const files = textFiles('turns', 40)
  const count = 8 * BATCH_RUN
  // Each result's continuation costs the JS thread time, so that the readers
  // get ahead of it and results are always waiting.
  const busy = () => {
    const until = process.hrtime.bigint() + 20_000n
    while (process.hrtime.bigint() < until);
  }
  let turns = 0
  let counting = true
  const tick = () => {
    turns++
    if (counting) setImmediate(tick)
  }
  setImmediate(tick)
  const reads = Array.from({ length: count }, (_, i) => ours.readFileUtf8Async(files[i % files.length]).then((s) => (busy(), s)))
  const got = await Promise.all(reads)
  counting = false
  got.forEach((s, i) => assert.ok(s === fs.readFileSync(files[i % files.length], 'utf8'), `read ${i}`))
  assert.ok(turns >= count / BATCH_RUN / 2, `${turns} turns of the loop while ${count} results came in runs of ${BATCH_RUN}`)
})

test('a queue of 64 reads in flight over many files: every string is fs\'s, in any order of completion', async () => {
  const files = textFiles('queue', 400)
  const results = new Array(files.length)
  let next = 0
  const worker = async () => {
    while (next < files.length) {
      const i = next++
      results[i] = await ours.promises.readFile(files[i], { encoding: 'utf8' })
    }
  }
  await Promise.all(Array.from({ length: 64 }, worker))
  files.forEach((file, i) => assert.ok(results[i] === fs.readFileSync(file, 'utf8'), file))
})

test('reads in flight keep the process alive as fs.promises does, and let it exit once settled', async () => {
  const files = textFiles('exit', 20)
  const script = `
    const ours = require(${JSON.stringify(ROOT)})
    const files = ${JSON.stringify(files)}
    Promise.all(files.map((f) => ours.readFileUtf8Async(f))).then((texts) => {
      process.stdout.write(String(texts.length))
    })
  `
  const started = performance.now()
  const child = spawn(process.execPath, ['-e', script], { stdio: ['ignore', 'pipe', 'inherit'] })
  let out = ''
  child.stdout.on('data', (d) => (out += d))
  const code = await new Promise((resolve) => child.on('close', resolve))
  assert.equal(code, 0)
  assert.equal(out, '20', 'the reads resolved before the process exited')
  // The pool's threads idle out; the process does not wait for them to.
  assert.ok(performance.now() - started < 5000, `exited after ${Math.round(performance.now() - started)} ms`)
})

test('the pool\'s reader threads end once idle', unsupportedOnWindows('threads are counted in /proc/self/task'), async () => {
  const threads = () => fs.readdirSync('/proc/self/task').map((t) => fs.readFileSync(`/proc/self/task/${t}/comm`, 'utf8').trim())
  const files = textFiles('idle', 30)
  await Promise.all(files.map((f) => ours.readFileUtf8Async(f)))
  assert.ok(threads().some((name) => name.startsWith('readfile-utf8-p')), 'readers ran')
  const deadline = Date.now() + 10_000
  while (threads().some((name) => name.startsWith('readfile-utf8-p')) && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
  assert.deepEqual(
    threads().filter((name) => name.startsWith('readfile-utf8-p')),
    [],
    'no reader thread is left running',
  )
  // And they come back for the next reads.
  assert.equal(await ours.readFileUtf8Async(files[0]), fs.readFileSync(files[0], 'utf8'))
})
