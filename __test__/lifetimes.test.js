'use strict'
// The lifetimes of what the addon starts and holds, as a user sees them: no
// thread of ours is left running once the work is done (the helper thread
// of split reads, the buffer pool's reaper, batch readers), each comes back
// when work does, and idle buffers go back to the system (README: "Idle, our
// buffers go back to the system within a second"). Run in a child process,
// whose threads are ours alone to count.
const { test } = require('node:test')
const assert = require('node:assert/strict')
const fs = require('node:fs')
const path = require('node:path')
const { spawnSync } = require('node:child_process')

const { scratch, unsupportedOnWindows } = require('./helpers')
const { BASES, bigBuffer } = require('./cases')

const ROOT = path.join(__dirname, '..')
const MiB = 1 << 20
const NO_TASKS = 'threads are named and counted in /proc/self/task (Linux)'

function runChild(script, args = []) {
  const r = spawnSync(process.execPath, [...args, '-e', script], { encoding: 'utf8', timeout: 60_000 })
  assert.equal(r.signal, null, `killed by ${r.signal}\n${r.stderr}`)
  assert.equal(r.status, 0, r.stderr)
  return JSON.parse(r.stdout)
}

// In the child: the names of our threads (Linux truncates them to 15
// characters: readfile-utf8-h(elper), -r(eaper), -b(atch)), every name a
// Worker saw while the work ran (it looks every few milliseconds, so that a
// thread that came and went on a loaded machine is still seen), and a
// bounded wait for them all to end.
const THREADS = `
const fs = require('node:fs')
const { Worker } = require('node:worker_threads')
const api = require(${JSON.stringify(ROOT)})
const OUR_THREADS = \`function ourThreads() {
  const names = []
  for (const t of require('node:fs').readdirSync('/proc/self/task')) {
    try {
      const name = require('node:fs').readFileSync('/proc/self/task/' + t + '/comm', 'latin1').trim()
      if (name.startsWith('readfile-utf8')) names.push(name)
    } catch {}
  }
  return names.sort()
}\`
const ourThreads = eval('(' + OUR_THREADS + ')')
const watcher = new Worker(OUR_THREADS + \`
  const { parentPort } = require('node:worker_threads')
  let seen = new Set()
  setInterval(() => { for (const name of ourThreads()) seen.add(name) }, 2)
  parentPort.on('message', () => { parentPort.postMessage([...seen].sort()); seen = new Set() })\`, { eval: true })
watcher.unref()
/** The names the watcher saw since the last call. */
// A timer holds the loop while the answer comes: Deno lets a process end with
// a message of an unreferenced Worker still on its way.
const seen = () => new Promise((resolve) => {
  const hold = setTimeout(() => {}, 60000)
  watcher.once('message', (names) => { clearTimeout(hold); resolve(names) })
  watcher.postMessage('report')
})
async function allEnded(deadlineMs) {
  const start = Date.now()
  while (ourThreads().length > 0) {
    if (Date.now() - start > deadlineMs) return ourThreads()
    await new Promise((resolve) => setTimeout(resolve, 25))
  }
  return []
}
`

test('no thread of ours outlives the work: the helper of split reads, the reaper and batch readers end once idle, and come back for the next work', unsupportedOnWindows(NO_TASKS), () => {
  const big = scratch('lifetimes-big.txt')
  fs.writeFileSync(big, bigBuffer(BASES.utf8_mixed, 4 * MiB))
  const small = Array.from({ length: 40 }, (_, i) => {
    const p = scratch(`lifetimes-small-${i}.txt`)
    fs.writeFileSync(p, bigBuffer(BASES.cjk, 100 + i * 3001))
    return p
  })
  const out = runChild(`${THREADS}
    const big = ${JSON.stringify(big)}, small = ${JSON.stringify(small)}
    const expected = fs.readFileSync(big, 'utf8')
    ;(async () => {
      const rounds = []
      const atLoad = ourThreads()
      // The watcher is running (it has looked at least once).
      await seen()
      for (let round = 0; round < 2; round++) {
        const same = api.readFileUtf8(big) === expected
        const left = await allEnded(10000)
        const afterRead = await seen()
        const batch = api.readFilesUtf8(small, { concurrency: 4 }).every((s, i) => s === fs.readFileSync(small[i], 'utf8'))
        const batchAsync = (await api.readFilesUtf8Async(small, { concurrency: 4 })).length === small.length
        const leftAfterBatches = await allEnded(10000)
        // (Batch readers come and go too fast to be seen for sure: not compared.)
        await seen()
        rounds.push({ same, afterRead, left, batch, batchAsync, leftAfterBatches })
      }
      console.log(JSON.stringify({ atLoad, rounds, reader: require(${JSON.stringify(ROOT)} + '/lib/native').reader() }))
    })()`)
  assert.deepEqual(out.atLoad, [], 'loading the package starts no thread')
  for (const [i, round] of out.rounds.entries()) {
    assert.equal(round.same, true, `round ${i}: the string is fs's`)
    // Its read buffer went to the pool, which the reaper watches; the Linux
    // reader split the read, its second half on the helper.
    const started = out.reader === 'syscalls' ? ['readfile-utf8-h', 'readfile-utf8-r'] : ['readfile-utf8-r']
    const seen = out.reader === 'syscalls' ? round.afterRead : round.afterRead.filter((t) => t !== 'readfile-utf8-h')
    assert.deepEqual(seen, started, `round ${i}: the threads a large read starts`)
    assert.deepEqual(round.left, [], `round ${i}: threads still running 10 s after a read`)
    assert.equal(round.batch && round.batchAsync, true)
    assert.deepEqual(round.leftAfterBatches, [], `round ${i}: threads still running 10 s after the batches`)
  }
})

test("a sync batch that throws stops its readers at once: none is left reading ahead or waiting, with no GC to end it", unsupportedOnWindows(NO_TASKS), () => {
  // More files than a batch's readers may hold ahead of the JS thread, so that
  // readers nobody stopped would wait for it; first a directory, which readers
  // leave to the JS thread (no regular file), whose fs then throws EISDIR.
  const dir = scratch('lifetimes-throwing-batch')
  fs.mkdirSync(dir, { recursive: true })
  const files = Array.from({ length: 5000 }, (_, i) => {
    const p = path.join(dir, `${i}.txt`)
    fs.writeFileSync(p, `file ${i}\n`)
    return p
  })
  const list = scratch('lifetimes-throwing-batch.json')
  fs.writeFileSync(list, JSON.stringify([dir, ...files]))
  const out = runChild(`${THREADS}
    const list = JSON.parse(fs.readFileSync(${JSON.stringify(list)}, 'utf8'))
    ;(async () => {
      let code = null
      try {
        api.readFilesUtf8(list, { concurrency: 4 })
      } catch (err) {
        code = err.code
      }
      // Waited for without turning the event loop, so that no finalizer of the
      // batch's handle (a GC's) can stop the readers in the batch's place.
      const nap = new Int32Array(new SharedArrayBuffer(4))
      const start = Date.now()
      while (ourThreads().includes('readfile-utf8-b') && Date.now() - start < 3000) Atomics.wait(nap, 0, 0, 20)
      const left = ourThreads().filter((name) => name === 'readfile-utf8-b')
      console.log(JSON.stringify({ code, left }))
    })()`)
  assert.equal(out.code, 'EISDIR', "the batch throws fs's error for its first entry")
  assert.deepEqual(out.left, [], 'batch readers still running 3 s after the batch threw (the event loop not turned)')
  fs.rmSync(dir, { recursive: true, force: true })
  fs.rmSync(list, { force: true })
})
