'use strict'
// Faults while reading: a file truncated or grown by another process during the
// read, and signals arriving during a long (blocking) read.
const { test } = require('node:test')
const assert = require('node:assert/strict')
const fs = require('node:fs')
const path = require('node:path')
const { spawn, spawnSync, execFileSync } = require('node:child_process')

const { readFileUtf8, readFileUtf8Async } = require('..')
const { scratch, unsupportedOnWindows } = require('./helpers')

const ROOT = path.join(__dirname, '..')

/**
 * True if `s` is what decoding the first k bytes of `original` gives, for some
 * k, where any byte may also read as 0: a file truncated and written back
 * exposes zeros (the kernel zeroes a page's tail on truncate, and a concurrent
 * read may copy it before the bytes are written back; fs reads them too).
 * `original` is valid UTF-8 without U+0000, so each of its characters decodes
 * on its own; the check walks them, keeping every position of `s` that some
 * choice of zeroed bytes reaches.
 */
function isDecodedPrefix(s, original) {
  const decodings = new Map() // character → { whole: [strings], cut: [strings] }
  const variants = (bytes) => {
    const out = new Set()
    for (let mask = 0; mask < 1 << bytes.length; mask++) {
      out.add(Buffer.from(bytes.map((b, i) => (mask & (1 << i) ? 0 : b))).toString('utf8'))
    }
    return [...out]
  }
  const text = original.toString('utf8')
  let states = new Set([0])
  for (const ch of text) {
    let d = decodings.get(ch)
    if (d === undefined) {
      const bytes = [...Buffer.from(ch)]
      const cut = []
      for (let n = 1; n < bytes.length; n++) cut.push(...variants(bytes.slice(0, n)))
      d = { whole: variants(bytes), cut }
      decodings.set(ch, d)
    }
    const next = new Set()
    for (const j of states) {
      if (j === s.length) return true // the read ended at this character
      for (const piece of d.cut) if (s.length - j === piece.length && s.endsWith(piece)) return true
      for (const piece of d.whole) if (s.startsWith(piece, j)) next.add(j + piece.length)
    }
    if (next.size === 0) return false
    states = next
  }
  return states.has(s.length)
}

/** Starts another process that keeps changing `file` until killed; resolves once it runs. */
function startWriter(file, body, ...args) {
  const child = spawn(process.execPath, ['-e', body, file, ...args], { stdio: ['ignore', 'pipe', 'inherit'] })
  return new Promise((resolve) => child.stdout.once('data', () => resolve(child)))
}

async function stop(child) {
  child.kill('SIGKILL')
  await new Promise((resolve) => child.once('exit', resolve))
}

// Valid UTF-8 with characters of every length; no U+FFFD, so a cut shows.
const ORIGINAL = Buffer.from('ascii é ÿ Ā 中文 😀 text\n'.repeat(40000)) // ~1.2 MiB: read in halves

/** Rounds of reads made while another process changes the file, however slow this machine is. */
const MIN_ROUNDS = 3

async function readDuringChanges(file, label, minChars) {
  const results = { sync: 0, async: 0, fs: 0, lengths: new Set() }
  const until = Date.now() + 1500
  while (Date.now() < until || results.sync < MIN_ROUNDS) {
    // Two sync reads back to back (each read in halves if the file is large
    // enough when it is opened), then two async ones, read on one thread.
    for (const ours of [readFileUtf8(file), readFileUtf8(file)]) {
      assert.ok(isDecodedPrefix(ours, ORIGINAL), `${label}: readFileUtf8 gave ${ours.length} chars that are no prefix of the file`)
      assert.ok(ours.length >= minChars, `${label}: ${ours.length} chars, shorter than the file ever was`)
      results.sync++
      results.lengths.add(ours.length)
    }
    const asyncReads = await Promise.all([readFileUtf8Async(file), readFileUtf8Async(file)])
    for (const s of asyncReads) {
      assert.ok(isDecodedPrefix(s, ORIGINAL), `${label}: readFileUtf8Async gave ${s.length} chars that are no prefix of the file`)
      results.async++
      results.lengths.add(s.length)
    }
    // fs itself, for comparison: the same kind of answer.
    assert.ok(isDecodedPrefix(fs.readFileSync(file, 'utf8'), ORIGINAL), `${label}: fs`)
    results.fs++
  }
  return results
}

test('a file truncated and regrown by another process while being read: always a prefix of it, as fs gives', async () => {
  const file = scratch('race-truncate.txt')
  fs.writeFileSync(file, ORIGINAL)
  // Shrinks the file to a random length (often inside a character), then writes
  // the original bytes back: every byte offset only ever holds its original byte.
  const writer = await startWriter(
    file,
    `const fs = require('node:fs')
    const original = fs.readFileSync(process.argv[1])
    const fd = fs.openSync(process.argv[1], 'r+')
    process.stdout.write('go')
    for (let i = 0; ; i++) {
      const cut = Math.floor(Math.random() * original.length)
      fs.ftruncateSync(fd, cut)
      fs.writeSync(fd, original, cut, original.length - cut, cut)
    }`,
  )
  try {
    const r = await readDuringChanges(file, 'truncate', 0)
    assert.ok(r.lengths.size > 1, `the reads saw the file at different lengths: ${JSON.stringify({ ...r, lengths: r.lengths.size })}`)
  } finally {
    await stop(writer)
  }
})

test('a file growing (appends cut inside characters) while being read: a prefix at least as long as it was', async () => {
  const file = scratch('race-grow.txt')
  const start = 1000
  fs.writeFileSync(file, ORIGINAL.subarray(0, start))
  const source = scratch('race-grow-source.txt')
  fs.writeFileSync(source, ORIGINAL.subarray(0, 300000))
  const writer = await startWriter(
    file,
    `const fs = require('node:fs')
    const original = fs.readFileSync(process.argv[2])
    process.stdout.write('go')
    for (;;) {
      fs.truncateSync(process.argv[1], ${start})
      const fd = fs.openSync(process.argv[1], 'a')
      for (let at = ${start}; at < original.length; ) {
        const n = 1 + Math.floor(Math.random() * 5000)
        fs.writeSync(fd, original, at, Math.min(n, original.length - at))
        at += n
      }
      fs.closeSync(fd)
    }`,
    source,
  )
  try {
    const r = await readDuringChanges(file, 'grow', Buffer.from(ORIGINAL.subarray(0, start)).toString('utf8').length - 1)
    assert.ok(r.lengths.size > 1, `the reads saw the file at different lengths: ${JSON.stringify({ ...r, lengths: r.lengths.size })}`)
  } finally {
    await stop(writer)
  }
})

test('signals arriving during long sync and async reads of a slow FIFO: retried, result whole', unsupportedOnWindows('FIFOs (mkfifo) and POSIX signals'), () => {
  const fifo = scratch('signals.fifo')
  execFileSync('mkfifo', [fifo])
  const text = 'signals é 中 😀\n'.repeat(6000)
  // In a child: a SIGUSR2 handler is installed, and a worker thread sends the
  // process SIGUSR2 every millisecond from a timer (the main thread is blocked
  // in the read), while a grandchild feeds the FIFO in ~40 pieces over ~400 ms.
  const script = `
    const fs = require('node:fs')
    const { spawn } = require('node:child_process')
    const { Worker } = require('node:worker_threads')
    const { readFileUtf8, readFileUtf8Async } = require(${JSON.stringify(ROOT)})
    const fifo = ${JSON.stringify(fifo)}
    const text = ${JSON.stringify(text)}
    let handled = 0
    process.on('SIGUSR2', () => handled++)
    const feed = () => spawn(process.execPath, ['-e', \`
      const fs = require('node:fs'); const fd = fs.openSync(\${JSON.stringify(fifo)}, 'w')
      const b = Buffer.from(\${JSON.stringify(text)}); let at = 0
      const next = () => { if (at >= b.length) return fs.closeSync(fd); fs.writeSync(fd, b, at, Math.min(2503, b.length - at)); at += 2503; setTimeout(next, 10) }
      next()\`], { stdio: 'inherit' })
    const signaller = new Worker("setInterval(() => process.kill(process.pid, 'SIGUSR2'), 1)", { eval: true })
    ;(async () => {
      feed()
      const sync = readFileUtf8(fifo)
      const afterSync = await new Promise((resolve) => setTimeout(() => resolve(handled), 20))
      feed()
      const viaAsync = await readFileUtf8Async(fifo)
      await signaller.terminate()
      process.stdout.write(JSON.stringify({ syncOk: sync === text, asyncOk: viaAsync === text, afterSync, handled }))
    })()`
  const r = spawnSync(process.execPath, ['-e', script], { encoding: 'utf8', timeout: 30_000 })
  assert.equal(r.signal, null, r.stderr)
  assert.equal(r.status, 0, r.stderr)
  const out = JSON.parse(r.stdout)
  assert.equal(out.syncOk, true, 'the sync read is whole')
  assert.equal(out.asyncOk, true, 'the async read is whole')
  assert.ok(out.afterSync >= 1, `signals arrived during the sync read (${out.afterSync} handled)`)
  assert.ok(out.handled >= 50, `signals arrived during the reads (${out.handled} handled)`)
})
