'use strict'
// A Worker that loads the addon and exits, in a process whose main thread
// never loads it: Node then unloads the addon (FreeLibrary / dlclose) while
// the threads it started for the whole process (the buffer pool's reaper,
// the two-thread helper, batch readers) may still run its code. The addon
// pins itself (src/pin.rs); without that, the process crashed at a Worker's
// exit on Windows. Run in a child process, so that a crash fails the test.
const { test } = require('node:test')
const assert = require('node:assert/strict')
const path = require('node:path')
const { spawnSync } = require('node:child_process')

const { scratch } = require('./helpers')

const ROOT = path.join(__dirname, '..')
const WORKERS = 20

// The child: makes files (large ones, so that reads use the helper thread
// and batches their reader threads), then starts WORKERS Workers one after
// another; each loads the package, reads in one memory mode (sync, a batch,
// async), checks every result against fs and exits. The main thread only
// checks that it never loaded the addon itself. (No async batch: a Worker
// that ran one was not unloaded at its exit, which hid the crash.)
const CHILD = `
const fs = require('node:fs')
const path = require('node:path')
const { Worker } = require('node:worker_threads')
const [ROOT, DIR, WORKERS] = [process.argv[1], process.argv[2], Number(process.argv[3])]
fs.mkdirSync(DIR, { recursive: true })
const bodies = {
  'ascii.txt': 'plain text\\n'.repeat(200000),
  'wide.txt': 'mixed 中文 😀 é\\n'.repeat(150000),
  'latin1.txt': 'déjà vu à Noël\\n'.repeat(100000),
  'small.txt': 'é中😀',
}
const files = Object.entries(bodies).map(([name, text]) => {
  const file = path.join(DIR, name)
  fs.writeFileSync(file, text)
  return file
})
const WORKER = \`
const fs = require('node:fs')
const { workerData, parentPort } = require('node:worker_threads')
const api = require(workerData.root)
api.setMemoryMode(workerData.mode)
const expected = workerData.files.map((f) => fs.readFileSync(f, 'utf8'))
let checked = 0
const same = (got, i, how) => { if (got !== expected[i]) throw new Error(how + ' differs from fs: ' + workerData.files[i]); checked++ }
workerData.files.forEach((f, i) => same(api.readFileUtf8(f), i, 'readFileUtf8'))
api.readFilesUtf8(workerData.files, { concurrency: 4 }).forEach((s, i) => same(s, i, 'readFilesUtf8'))
Promise.all(workerData.files.map((f) => api.readFileUtf8Async(f))).then((all) => {
  all.forEach((s, i) => same(s, i, 'readFileUtf8Async'))
  parentPort.postMessage(checked)
})
\`
const loaded = () => Object.keys(require.cache).some((f) => f.endsWith('.node'))
;(async () => {
  let checked = 0
  for (let i = 0; i < WORKERS; i++) {
    const mode = i % 2 === 0 ? 'fast' : 'lean'
    const worker = new Worker(WORKER, { eval: true, workerData: { root: ROOT, files, mode } })
    worker.on('message', (n) => (checked += n))
    const code = await new Promise((resolve, reject) => {
      worker.on('error', reject)
      worker.on('exit', resolve)
    })
    if (code !== 0) throw new Error('worker ' + i + ' exited with ' + code)
  }
  if (loaded()) throw new Error('the main thread loaded the addon')
  // Let the process-wide threads wake past the last Worker's exit (the
  // reaper looks every 125 ms, idle batch readers every 250 ms).
  await new Promise((resolve) => setTimeout(resolve, 1000))
  // Linux: the library's code is still mapped once every Worker that loaded it is gone.
  const mapped = process.platform === 'linux' ? fs.readFileSync('/proc/self/maps', 'utf8').includes('readfile-utf8') : null
  process.stdout.write(JSON.stringify({ checked, mapped }))
})()
`

test(`${WORKERS} Workers in a row load the addon, read (sync, batch, async, both memory modes) and exit; the main thread never loads it; the process exits 0`, () => {
  const r = spawnSync(process.execPath, ['-e', CHILD, ROOT, scratch('worker-exit'), String(WORKERS)], {
    encoding: 'utf8',
    timeout: 300_000,
  })
  assert.equal(r.signal, null, `killed by ${r.signal}\n${r.stderr}`)
  assert.equal(r.status, 0, `exit ${r.status}\n${r.stderr}`)
  // Each Worker checked 4 files three ways (sync, batch, async).
  const mapped = process.platform === 'linux' ? true : null
  assert.deepEqual(JSON.parse(r.stdout), { checked: WORKERS * 4 * 3, mapped })
})
