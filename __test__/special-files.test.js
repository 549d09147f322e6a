'use strict'
// Files that are not plain regular files, and fds: procfs (st_size 0), sysfs
// (reads shorter than asked), /dev/null, a FIFO fed by another process, an fd
// after a partial read, stdin, empty files.
const { test } = require('node:test')
const assert = require('node:assert/strict')
const fs = require('node:fs')
const path = require('node:path')
const { spawn, spawnSync, execFileSync } = require('node:child_process')

const { readFileUtf8, readFileSync, readFileUtf8Async, readFilesUtf8, readFilesUtf8Async } = require('..')
const { NO_FD_COUNT, scratch, unsupportedOnWindows, openFdCount } = require('./helpers')

test('procfs files (st_size 0) read to EOF like fs', () => {
  for (const p of ['/proc/version', '/proc/self/cmdline', '/proc/self/environ', '/proc/filesystems']) {
    const ours = readFileUtf8(p)
    assert.ok(ours.length > 0, `${p} is not empty`)
    assert.equal(ours, fs.readFileSync(p, 'utf8'), p)
  }
})

test('a procfs file far larger than the first 8 KiB chunk reads whole', () => {
  // /proc/kallsyms is megabytes and stable; /proc/self/smaps (tens of KiB) may
  // change between two reads, so it gets a few tries.
  const big = fs.existsSync('/proc/kallsyms') ? '/proc/kallsyms' : '/proc/self/smaps'
  let same = false
  for (let i = 0; i < 5 && !same; i++) same = readFileUtf8(big) === fs.readFileSync(big, 'utf8')
  assert.ok(same, big)
  assert.ok(readFileUtf8(big).length > 16384, `${big} is larger than two chunks`)
})

test('a sysfs file, whose reads return less than asked before its end, reads whole: every API', async () => {
  // kernfs serves a binary attribute one page per read(2), and its st_size is
  // not its length: only a read that returns nothing ends it. BTF is in the
  // kernels of the distributions and of CI; the Rust test of read_sized checks
  // the same rule with a pipe on any machine.
  const p = '/sys/kernel/btf/vmlinux'
  assert.ok(fs.existsSync(p), `${p}: this test needs a kernel built with BTF (CONFIG_DEBUG_INFO_BTF)`)
  const fd = fs.openSync(p, 'r')
  const asked = 64 * 1024
  const got = fs.readSync(fd, Buffer.alloc(asked), 0, asked, 0)
  fs.closeSync(fd)
  assert.ok(got > 0 && got < asked, `one read returns less than asked (${got} of ${asked} bytes)`)
  const expected = fs.readFileSync(p, 'utf8')
  assert.ok(expected.length > 16 * asked, `${p} is many reads long`)
  const viaFd = async (read) => {
    const fd = fs.openSync(p, 'r')
    try {
      return await read(fd)
    } finally {
      fs.closeSync(fd)
    }
  }
  const results = {
    readFileUtf8: readFileUtf8(p),
    readFileSync: readFileSync(p, 'utf8'),
    fd: await viaFd((fd) => readFileUtf8(fd)),
    readFileUtf8Async: await readFileUtf8Async(p),
    asyncFd: await viaFd((fd) => readFileUtf8Async(fd)),
    readFilesUtf8: readFilesUtf8([p])[0],
    readFilesUtf8Async: (await readFilesUtf8Async([p]))[0],
  }
  for (const [api, text] of Object.entries(results)) assert.ok(text === expected, `${api}: ${text.length} of ${expected.length} characters`)
})

test('/dev/null and an empty file give an empty string', () => {
  assert.equal(readFileUtf8('/dev/null'), fs.readFileSync('/dev/null', 'utf8'))
  assert.equal(readFileUtf8('/dev/null'), '')
  const empty = scratch('empty.txt')
  fs.writeFileSync(empty, '')
  assert.equal(readFileUtf8(empty), '')
  assert.equal(readFileSync(empty, 'utf8'), fs.readFileSync(empty, 'utf8'))
})

/** Starts a child that writes `chunks` into the FIFO at `fifo`, slowly. */
function feedFifo(fifo, chunks) {
  const script = `
    const fs = require('node:fs')
    const fd = fs.openSync(${JSON.stringify(fifo)}, 'w')
    const chunks = ${JSON.stringify(chunks.map((c) => Buffer.from(c).toString('base64')))}
    let i = 0
    const next = () => {
      if (i === chunks.length) return fs.closeSync(fd)
      fs.writeSync(fd, Buffer.from(chunks[i++], 'base64'))
      setTimeout(next, 5)
    }
    next()`
  return spawn(process.execPath, ['-e', script], { stdio: 'inherit' })
}

test('a FIFO fed in pieces by a child process reads until the writer closes', unsupportedOnWindows('FIFOs (mkfifo)'), async () => {
  const fifo = scratch('fifo')
  execFileSync('mkfifo', [fifo])
  // Pieces split inside multi-byte characters and larger than the first chunk.
  const text = `${'é中😀 pipe text '.repeat(2000)}\n`
  const bytes = Buffer.from(text)
  const chunks = [bytes.subarray(0, 1), bytes.subarray(1, 5000), bytes.subarray(5000, 20001), bytes.subarray(20001)]
  for (const read of [readFileUtf8, (p) => fs.readFileSync(p, 'utf8')]) {
    const child = feedFifo(fifo, chunks)
    const result = read(fifo)
    await new Promise((resolve) => child.on('exit', resolve))
    assert.equal(result, text)
  }
})

test('an fd after a partial read continues from its position and stays open', () => {
  const file = scratch('partial.txt')
  const text = Buffer.from(`head é ${'body 中文 😀 '.repeat(100000)} tail`)
  let checked = 0
  // Small, and past the size from which files we open ourselves are read in halves at explicit offsets.
  for (const bytes of [text.subarray(0, 40000), text.subarray(0, (1 << 20) + 7), text]) {
    fs.writeFileSync(file, bytes)
    for (const skip of [0, 3, 6, 7, 1000]) {
      const ours = fs.openSync(file, 'r')
      const theirs = fs.openSync(file, 'r')
      try {
        fs.readSync(ours, Buffer.alloc(skip), 0, skip, null)
        fs.readSync(theirs, Buffer.alloc(skip), 0, skip, null)
        const expected = fs.readFileSync(theirs, 'utf8')
        assert.ok(expected.length > 0)
        assert.equal(readFileUtf8(ours), expected, `${bytes.length} bytes, after ${skip}`)
        // Still open, now at EOF: reading again gives '' (as fs does).
        assert.equal(readFileUtf8(ours), '')
        assert.equal(fs.fstatSync(ours).size, bytes.length)
        checked++
      } finally {
        fs.closeSync(ours)
        fs.closeSync(theirs)
      }
    }
  }
  assert.equal(checked, 15)
})

test('an fd of a file that grew after open is read to its new end', () => {
  const file = scratch('growing.txt')
  fs.writeFileSync(file, 'start ')
  const fd = fs.openSync(file, 'r')
  try {
    fs.appendFileSync(file, 'and more é'.repeat(5000))
    assert.equal(readFileUtf8(fd), fs.readFileSync(file, 'utf8'))
  } finally {
    fs.closeSync(fd)
  }
})

test('stdin (fd 0) of a child process, fed through a pipe', () => {
  const input = `stdin é 中 😀 ${'x'.repeat(70000)}`
  const script = `process.stdout.write(JSON.stringify(require(${JSON.stringify(path.join(__dirname, '..'))}).readFileUtf8(0)))`
  const r = spawnSync(process.execPath, ['-e', script], { input, encoding: 'utf8' })
  assert.equal(r.status, 0, r.stderr)
  assert.equal(JSON.parse(r.stdout), input)
})

test('a file: URL and a Buffer path read the same file as a string path', () => {
  const file = scratch('url é.txt')
  fs.writeFileSync(file, 'via URL ✓')
  const url = require('node:url').pathToFileURL(file)
  assert.equal(readFileUtf8(url), fs.readFileSync(url, 'utf8'))
  assert.equal(readFileUtf8(Buffer.from(file)), fs.readFileSync(Buffer.from(file), 'utf8'))
  assert.equal(readFileUtf8(new Uint8Array(Buffer.from(file))), 'via URL ✓')
})

test('our own fds are closed on every path (no fd leak)', unsupportedOnWindows(NO_FD_COUNT), () => {
  const fdCount = openFdCount
  const file = scratch('leak.txt')
  fs.writeFileSync(file, 'x')
  const before = fdCount()
  for (let i = 0; i < 500; i++) {
    readFileUtf8(file)
    assert.throws(() => readFileUtf8(scratch('missing')))
    assert.throws(() => readFileUtf8(path.dirname(file)))
  }
  assert.equal(fdCount(), before)
})
