'use strict'
// Every failure throws what fs throws: same constructor, name, code, errno,
// syscall, path (present or absent) and message — compared field by field.
const { test } = require('node:test')
const assert = require('node:assert/strict')
const fs = require('node:fs')
const path = require('node:path')
const { spawnSync } = require('node:child_process')

const { readFileUtf8, readFileSync } = require('..')
const { SCRATCH, scratch, assertSameError, errorFields, thrown, osErrorFixtures, unsupportedOnWindows } = require('./helpers')

const { existing, osErrors: OS_ERRORS } = osErrorFixtures('')

/** Checks both entry points, with the usual option forms, against fs. */
function sameErrorEverywhere(label, pathArg, extraOptions = [undefined, 'utf8', { encoding: 'utf8' }]) {
  for (const options of extraOptions) {
    assertSameError(
      () => readFileUtf8(pathArg, options),
      () => fs.readFileSync(pathArg, options ?? 'utf8'),
      `${label}: readFileUtf8 with ${JSON.stringify(options)}`,
    )
    assertSameError(
      () => readFileSync(pathArg, options ?? 'utf8'),
      () => fs.readFileSync(pathArg, options ?? 'utf8'),
      `${label}: readFileSync with ${JSON.stringify(options)}`,
    )
  }
}

for (const [label, p] of Object.entries(OS_ERRORS)) {
  test(`${label} is fs's error`, () => {
    const err = thrown(() => readFileUtf8(p))
    assert.ok(err instanceof Error, 'throws an Error')
    sameErrorEverywhere(label, p)
  })
}

test('EBADF for bad fds (unopened, negative, closed, write-only) is fs\'s error', () => {
  const closed = fs.openSync(existing, 'r')
  fs.closeSync(closed)
  const writeOnly = fs.openSync(scratch('write-only.txt'), 'w')
  try {
    for (const fd of [999, -1, -2147483648, 2147483647, closed, writeOnly]) {
      sameErrorEverywhere(`fd ${fd}`, fd)
      assert.equal(thrown(() => readFileUtf8(fd)).code, 'EBADF')
    }
  } finally {
    fs.closeSync(writeOnly)
  }
})

test('wrong argument types give fs\'s ERR_INVALID_ARG_TYPE', () => {
  for (const p of [undefined, null, true, false, 1.5, NaN, Infinity, 2 ** 31, -(2 ** 31) - 1, 10n, {}, [], () => {}, Symbol('s'), new Date(0)]) {
    sameErrorEverywhere(`path ${typeof p} ${String(p)}`, p)
  }
})

test('NUL bytes in string, Buffer and URL paths give fs\'s ERR_INVALID_ARG_VALUE', () => {
  for (const p of ['a\0b', `${existing}\0`, Buffer.from('a\0b'), new URL('file:///tmp/a%00b')]) {
    sameErrorEverywhere(`NUL in ${JSON.stringify(String(p))}`, p)
  }
})

test('non-file URLs and bad file URLs give fs\'s URL errors', () => {
  for (const u of ['http://example.invalid/x', 'file://remote-host/x', 'file:///a%2fb', 'data:text/plain,hi']) {
    sameErrorEverywhere(u, new URL(u))
  }
})

test('bad options give fs\'s errors; readFileUtf8 rejects non-UTF-8 encodings clearly', () => {
  for (const options of [5, true, Symbol('o')]) {
    assertSameError(() => readFileUtf8(existing, options), () => fs.readFileSync(existing, options), `options ${String(options)}`)
    assertSameError(() => readFileSync(existing, options), () => fs.readFileSync(existing, options), `options ${String(options)}`)
  }
  for (const encoding of ['latin1', 'base64', 'nope', 'utf16le']) {
    const err = thrown(() => readFileUtf8(existing, encoding))
    assert.equal(err.code, 'ERR_INVALID_ARG_VALUE')
    assert.ok(err instanceof TypeError)
    assert.match(err.message, new RegExp(`'utf8' or 'utf-8'.*Received '${encoding}'`))
    assert.equal(thrown(() => readFileUtf8(existing, { encoding })).code, 'ERR_INVALID_ARG_VALUE')
  }
  // readFileSync hands an unknown encoding to fs: fs's own error.
  assertSameError(() => readFileSync(existing, 'nope'), () => fs.readFileSync(existing, 'nope'))
  // fs checks options.signal even in a synchronous call (and then ignores it).
  for (const signal of ['signal', 5, null, {}, false]) {
    const options = { encoding: 'utf8', signal }
    assertSameError(() => readFileSync(existing, options), () => fs.readFileSync(existing, options), `signal ${String(signal)}`)
    assertSameError(() => readFileUtf8(existing, { signal }), () => fs.readFileSync(existing, options), `signal ${String(signal)}`)
  }
  const options = { encoding: 'utf8', signal: AbortSignal.abort() }
  assert.equal(readFileSync(existing, options), fs.readFileSync(existing, options))
  assert.equal(readFileUtf8(existing, { signal: options.signal }), fs.readFileSync(existing, options))
})

test('EACCES (checked as an unprivileged user) is fs\'s error', unsupportedOnWindows('POSIX modes and users'), () => {
  const locked = scratch('locked.txt')
  fs.writeFileSync(locked, 'secret')
  fs.chmodSync(locked, 0o000)
  fs.chmodSync(SCRATCH, 0o755)
  // The unprivileged child may not be able to enter the checkout's folders, so it
  // loads a copy of the package from the (world-readable) scratch folder.
  const pkg = scratch('pkg-copy')
  const root = path.join(__dirname, '..')
  for (const entry of ['package.json', 'index.js', 'lib', require('../lib/binary-name').findBinary()]) {
    fs.cpSync(path.resolve(root, entry), path.join(pkg, path.basename(entry)), { recursive: true })
  }
  fs.cpSync(path.join(__dirname, 'helpers.js'), path.join(pkg, 'helpers.js'))
  // Likewise the Node binary (it may live under root's home, e.g. a downloaded Node 26).
  const nodeCopy = path.join(pkg, 'node')
  fs.cpSync(process.execPath, nodeCopy)
  const script = `
    const fs = require('node:fs')
    const { readFileUtf8, readFileSync } = require(${JSON.stringify(pkg)})
    const { errorFields, thrown } = require(${JSON.stringify(path.join(pkg, 'helpers.js'))})
    const p = ${JSON.stringify(locked)}
    process.stdout.write(JSON.stringify({
      fs: errorFields(thrown(() => fs.readFileSync(p, 'utf8'))),
      ours: errorFields(thrown(() => readFileUtf8(p))),
      oursSync: errorFields(thrown(() => readFileSync(p, 'utf8'))),
    }))`
  const asNobody = process.getuid?.() === 0 ? { uid: 65534, gid: 65534 } : {}
  const r = spawnSync(nodeCopy, ['-e', script], { ...asNobody, encoding: 'utf8', cwd: '/' })
  assert.equal(r.status, 0, String(r.error ?? r.stderr))
  const { fs: expected, ours, oursSync } = JSON.parse(r.stdout)
  assert.equal(expected.code, 'EACCES')
  assert.deepEqual(ours, expected)
  assert.deepEqual(oursSync, expected)
})

test('ERR_STRING_TOO_LONG: from kMaxLength bytes on, as fs (which counts bytes, not chars)', () => {
  const { MAX_STRING_LENGTH } = require('node:buffer').constants
  const big = scratch('kmaxlength.txt')
  // Sparse files of NULs: no disk used. One byte under the limit reads.
  fs.writeFileSync(big, '')
  fs.truncateSync(big, MAX_STRING_LENGTH - 1)
  const s = readFileUtf8(big)
  assert.equal(s.length, MAX_STRING_LENGTH - 1)
  assert.equal(s, fs.readFileSync(big, 'utf8'))
  // At the limit: too long, even when a 2-byte character makes it one char shorter.
  fs.truncateSync(big, MAX_STRING_LENGTH)
  assertSameError(() => readFileUtf8(big), () => fs.readFileSync(big, 'utf8'), 'ascii at the limit')
  const fd = fs.openSync(big, 'r+')
  fs.writeSync(fd, Buffer.from('é'), 0, 2, 0)
  fs.closeSync(fd)
  assertSameError(() => readFileUtf8(big), () => fs.readFileSync(big, 'utf8'), 'é + ascii at the limit')
  assert.equal(thrown(() => readFileUtf8(big)).code, 'ERR_STRING_TOO_LONG')
  fs.rmSync(big)
})

test('ERR_STRING_TOO_LONG for an input of unknown length that ends at exactly kMaxLength bytes, as fs', unsupportedOnWindows('FIFOs (mkfifo)'), () => {
  // A regular file is refused by its size before it is read; a FIFO only by
  // what was read. Its writer is another process, so the sync read can wait.
  const { MAX_STRING_LENGTH } = require('node:buffer').constants
  const fifo = scratch('kmaxlength.fifo')
  fs.rmSync(fifo, { force: true })
  spawnSync('mkfifo', [fifo])
  const outcome = (read) => {
    const writer = require('node:child_process').spawn('sh', ['-c', `head -c ${MAX_STRING_LENGTH} /dev/zero > "$0"`, fifo], { stdio: 'ignore' })
    try {
      return thrown(read)
    } finally {
      writer.kill()
    }
  }
  const ours = outcome(() => readFileUtf8(fifo))
  const expected = outcome(() => fs.readFileSync(fifo, 'utf8'))
  fs.rmSync(fifo)
  assert.equal(expected?.code, 'ERR_STRING_TOO_LONG')
  assert.deepEqual(errorFields(ours), errorFields(expected))
})

test("over 2 GiB, readFileSync with a UTF-8 spelling other than 'utf8' or 'utf-8' gives fs's ERR_FS_FILE_TOO_LARGE", () => {
  // Those spellings take fs's Buffer path, which refuses such a file by its size.
  const huge = scratch('over-2gib.txt')
  fs.writeFileSync(huge, '')
  fs.truncateSync(huge, 3 * 2 ** 30)
  const fd = fs.openSync(huge, 'r')
  try {
    for (const options of ['UTF8', 'Utf-8', { encoding: 'UTF-8' }]) {
      for (const file of [huge, fd]) {
        const label = `${JSON.stringify(options)}, ${typeof file === 'number' ? 'fd' : 'path'}`
        assertSameError(() => readFileSync(file, options), () => fs.readFileSync(file, options), label)
        assert.equal(thrown(() => readFileSync(file, options)).code, 'ERR_FS_FILE_TOO_LARGE', label)
      }
    }
    // readFileUtf8 is fs's 'utf8' read in any spelling.
    assert.equal(thrown(() => readFileUtf8(huge, 'UTF8')).code, 'ERR_STRING_TOO_LONG')
  } finally {
    fs.closeSync(fd)
    fs.rmSync(huge)
  }
})
