'use strict'
// readFilesUtf8 / readFilesUtf8Async against Node as the oracle: every element
// must be what fs.readFileSync(p, 'utf8') (sync) or fs.promises.readFile(p,
// 'utf8') (async) gives for that path — the same string, or the same error
// field by field — over every file under node_modules and a generated tree of
// all content classes, sizes and failures.
const { test } = require('node:test')
const assert = require('node:assert/strict')
const fs = require('node:fs')
const path = require('node:path')
const { pathToFileURL } = require('node:url')
const { promisify } = require('node:util')
const { spawn, execFileSync } = require('node:child_process')

const { readFilesUtf8, readFilesUtf8Async, readFileUtf8 } = require('..')
const { NO_FD_COUNT, scratch, errorFields, hex, unsupportedOnWindows, openFdCount } = require('./helpers')

const ROOT = path.join(__dirname, '..')
const fsReadFileCb = promisify(fs.readFile)

/** Every non-directory entry under `dir` (symlinks included), sorted. */
function walk(dir, out = []) {
  for (const entry of fs.readdirSync(dir, { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : 1))) {
    const p = path.join(dir, entry.name)
    if (entry.isDirectory()) walk(p, out)
    else out.push(p)
  }
  return out
}

/** What fs.readFileSync(p, options) gives: the string, or the error it throws. */
function fsSync(p, options = 'utf8') {
  try {
    return fs.readFileSync(p, options)
  } catch (err) {
    return err
  }
}

/** What fs.promises.readFile gives (fs.readFile for fds, as readFileUtf8Async documents). */
async function fsAsync(p, options = 'utf8') {
  try {
    return typeof p === 'number' ? await fsReadFileCb(p, options) : await fs.promises.readFile(p, options)
  } catch (err) {
    return err
  }
}

/** Asserts that `actual` (a batch element) is `expected` (fs's result for that path). */
function assertSameResult(actual, expected, label) {
  if (typeof expected === 'string') {
    if (actual === expected) return
    if (typeof actual !== 'string') assert.fail(`${label}: expected a string, got ${actual?.stack ?? actual}`)
    let i = 0
    while (i < expected.length && actual.charCodeAt(i) === expected.charCodeAt(i)) i++
    assert.fail(`${label}: differs from fs at char ${i} (lengths ${actual.length} vs ${expected.length})`)
  }
  assert.ok(actual instanceof Error, `${label}: expected fs's error ${expected.code}, got ${typeof actual}`)
  assert.deepEqual(errorFields(actual), errorFields(expected), label)
}

/** fs's fields of a thrown batch error, which carries `index` besides. */
function withoutIndex(err) {
  const fields = errorFields(err)
  fields.ownKeys = fields.ownKeys.filter((k) => k !== 'index')
  return fields
}

// ---- The generated tree: content classes × sizes. ----

const KiB = 1024
const MiB = 1024 * KiB
const SIZES = [0, 1, 7, 100, 755, 4 * KiB, 64 * KiB - 1, 64 * KiB, 128 * KiB + 3, 512 * KiB, MiB + 5, 5 * MiB + 1]

/** Deterministic bytes of `size` for a content class (xorshift PRNG). */
function content(kind, size, seed) {
  let s = seed | 1
  const rand = () => {
    s ^= s << 13
    s ^= s >>> 17
    s ^= s << 5
    return s >>> 0
  }
  const pieces = {
    ascii: ['const x = 1;\n', 'function f(a, b) { return a + b }\n', '// comment\n', 'abc'],
    latin1: ['café ', 'naïve ', 'façade ', 'x', 'ÿ'],
    mixed: ['ascii ', 'é', '中文', '😀', ' – ', 'ü\n'],
    cjk: ['中文字', '日本語', '한국어', '。'],
  }
  if (kind === 'empty') return Buffer.alloc(0)
  if (kind === 'invalid') {
    const b = Buffer.from('ok é 中 😀 '.repeat(Math.ceil(size / 12) + 1)).subarray(0, size)
    for (let i = 0; i < size; i += 1 + (rand() % 997)) b[i] = [0xff, 0x80, 0xc3, 0xe4, 0xf0, 0xed][rand() % 6]
    return b
  }
  const list = pieces[kind]
  const parts = []
  let length = 0
  while (length < size) {
    const piece = Buffer.from(list[rand() % list.length])
    parts.push(piece)
    length += piece.length
  }
  // Cut at `size` bytes: a character may be cut too, which fs decodes to U+FFFD.
  return Buffer.concat(parts).subarray(0, size)
}

let tree
/** The generated tree (made once): `{ files, dir }`. */
function generatedTree() {
  if (tree) return tree
  const dir = scratch('batch-tree')
  fs.mkdirSync(dir)
  const files = []
  let seed = 1
  for (const kind of ['ascii', 'latin1', 'mixed', 'cjk', 'invalid']) {
    for (const size of SIZES) {
      const file = path.join(dir, `${kind}-${size}.txt`)
      fs.writeFileSync(file, content(kind, size, seed++))
      files.push(file)
    }
  }
  for (const [name, bytes] of [
    ['empty.txt', Buffer.alloc(0)],
    ['bom.txt', Buffer.from('\ufeffwith a BOM é\n')],
    ['cut-at-end.txt', Buffer.from([0x61, 0xf0, 0x9f, 0x98])],
    ['only-invalid.bin', Buffer.from([0xff, 0xfe, 0xfd, 0x80])],
  ]) {
    const file = path.join(dir, name)
    fs.writeFileSync(file, bytes)
    files.push(file)
  }
  tree = { files, dir }
  return tree
}

/** Paths that fail each in its own way, and where they fail. */
function failingPaths() {
  const { dir } = generatedTree()
  const existing = path.join(dir, 'ascii-100.txt')
  const loop = scratch('batch-loop')
  if (!fs.lstatSync(loop, { throwIfNoEntry: false })) fs.symlinkSync(loop, loop)
  return {
    ENOENT: scratch('batch-no-such-file'),
    'ENOENT (relative)': 'no/such/relative/file',
    'ENOENT (empty)': '',
    EISDIR: dir,
    ENOTDIR: path.join(existing, 'child'),
    ELOOP: loop,
    ENAMETOOLONG: scratch('y'.repeat(5000)),
    'ENOENT (Buffer)': Buffer.from(scratch('batch-nope')),
    'ENOENT (Buffer, non-UTF-8)': Buffer.concat([Buffer.from(scratch('n')), Buffer.from([0xff])]),
    'EISDIR (file: URL)': pathToFileURL(dir),
    'NUL byte': `${existing}\0x`,
    'bad type (object)': { not: 'a path' },
    'bad type (non-integer number)': 1.5,
    'non-file URL': new URL('http://example.com/x'),
  }
}

/** A mixed list: tree files, the same file under other forms, and failures in between. */
function mixedList() {
  const { files, dir } = generatedTree()
  const failures = Object.values(failingPaths())
  const list = []
  files.forEach((file, i) => {
    list.push(file)
    if (i % 3 === 0) list.push(failures[(i / 3) % failures.length])
  })
  list.push(Buffer.from(files[10]), pathToFileURL(files[20]), new Uint8Array(Buffer.from(files[30])))
  list.push(path.relative(process.cwd(), path.join(dir, 'mixed-755.txt')))
  return list
}

// ---- Sync. ----

test('every file under node_modules === fs.readFileSync, in list order', () => {
  const files = walk(path.join(ROOT, 'node_modules'))
  assert.ok(files.length > 1000, `node_modules has ${files.length} files`)
  const ours = readFilesUtf8(files, { errors: 'return' })
  assert.equal(ours.length, files.length)
  files.forEach((file, i) => assertSameResult(ours[i], fsSync(file), file))
  // The default mode gives the same array when nothing fails.
  const again = readFilesUtf8(files)
  assert.ok(again.every((s, i) => s === ours[i]))
})

test('the generated tree: every content class and size, at several concurrencies', () => {
  const { files } = generatedTree()
  const expected = files.map((f) => fsSync(f))
  for (const concurrency of [1, 2, 3, 16, undefined]) {
    const ours = readFilesUtf8(files, concurrency === undefined ? undefined : { concurrency })
    files.forEach((file, i) => assertSameResult(ours[i], expected[i], `${file} (concurrency ${concurrency})`))
  }
  // A list longer than the window of results read ahead (1024).
  const small = files.filter((f) => fs.statSync(f).size <= 128 * KiB)
  const long = Array.from({ length: 5000 }, (_, i) => small[i % small.length])
  const ours = readFilesUtf8(long, { concurrency: 4 })
  long.forEach((file, i) => assert.ok(ours[i] === expected[files.indexOf(file)], `${file} at ${i}`))
})

test("errors: 'return' puts fs's error in each failing place, field by field", () => {
  const list = mixedList()
  const ours = readFilesUtf8(list, { errors: 'return' })
  assert.equal(ours.length, list.length)
  list.forEach((p, i) => assertSameResult(ours[i], fsSync(p), `[${i}] ${String(p)}`))
  // The errors are fs's own: no `index` in this mode.
  assert.ok(ours.some((v) => v instanceof Error && !Object.hasOwn(v, 'index')))
})

test('each failing path alone: the call throws fs error with err.index', () => {
  const { files } = generatedTree()
  for (const [label, bad] of Object.entries(failingPaths())) {
    const list = [files[0], files[1], bad, files[2]]
    let thrown
    try {
      readFilesUtf8(list)
    } catch (err) {
      thrown = err
    }
    assert.ok(thrown, `${label}: expected a throw`)
    assert.equal(thrown.index, 2, label)
    assert.deepEqual(withoutIndex(thrown), errorFields(fsSync(bad)), label)
  }
})

test('the first failing path in list order wins, whichever thread met it first', () => {
  const { files } = generatedTree()
  const big = files.filter((f) => /-5242881\.txt$/.test(f))
  // Large files first keep the other threads ahead: later failures are met first.
  const list = [...big, scratch('first-missing'), ...files, scratch('second-missing'), path.dirname(files[0])]
  for (const concurrency of [1, 2, 4]) {
    let thrown
    try {
      readFilesUtf8(list, { concurrency })
    } catch (err) {
      thrown = err
    }
    assert.equal(thrown?.code, 'ENOENT')
    assert.equal(thrown.index, big.length)
    assert.equal(thrown.path, scratch('first-missing'))
  }
  // An entry fs answers (a NUL byte) before an OS error: fs's error comes first.
  const nul = `${files[0]}\0`
  try {
    readFilesUtf8([files[0], nul, scratch('missing')])
    assert.fail('expected a throw')
  } catch (err) {
    assert.equal(err.index, 1)
    assert.deepEqual(withoutIndex(err), errorFields(fsSync(nul)))
  }
})

test('path forms: slashes, dots, symlinked and missing directories, PATH_MAX either side, as fs', () => {
  const { dir } = generatedTree()
  const file = path.join(dir, 'ascii-100.txt')
  const link = scratch('batch-dir-link')
  const dangling = scratch('batch-dir-dangling')
  if (!fs.lstatSync(link, { throwIfNoEntry: false })) fs.symlinkSync(dir, link)
  if (!fs.lstatSync(dangling, { throwIfNoEntry: false })) fs.symlinkSync(scratch('batch-no-dir'), dangling)
  // Linux takes a whole path of up to PATH_MAX - 1 bytes: one byte more is ENAMETOOLONG.
  const dirBytes = Buffer.byteLength(dir)
  const padded = (bytes) => {
    const pad = bytes - dirBytes - '/ascii-100.txt'.length
    return `${dir}${'/.'.repeat(pad >> 1)}${'/'.repeat(pad & 1)}/ascii-100.txt`
  }
  const forms = [
    file,
    `${file}/`,
    `${dir}/.`,
    `${dir}/..`,
    `${dir}//ascii-100.txt`,
    `${dir}/./ascii-100.txt`,
    `${dir}/../${path.basename(dir)}/ascii-100.txt`,
    path.join(link, 'ascii-100.txt'),
    path.join(link, 'no-such-file'),
    path.join(dangling, 'ascii-100.txt'),
    path.join(file, 'child'),
    path.join(dir, 'no-such-dir', 'x'),
    '/ascii-100.txt',
    padded(4095),
    padded(4096),
    file,
  ]
  assert.equal(Buffer.byteLength(padded(4095)), 4095)
  assert.equal(Buffer.byteLength(padded(4096)), 4096)
  if (process.platform === 'linux') {
    assert.equal(typeof fsSync(padded(4095)), 'string')
    assert.equal(fsSync(padded(4096)).code, 'ENAMETOOLONG')
  }
  for (const concurrency of [1, 2]) {
    const ours = readFilesUtf8(forms, { concurrency, errors: 'return' })
    forms.forEach((p, i) => assertSameResult(ours[i], fsSync(p), `c=${concurrency} [${i}] ${p.slice(0, 80)}`))
  }
})

test('EACCES (or, as root, the read that root is allowed)', unsupportedOnWindows('POSIX modes (chmod 000 only makes a file read-only)'), () => {
  const file = scratch('batch-no-access.txt')
  fs.writeFileSync(file, 'secret é\n')
  fs.chmodSync(file, 0o000)
  const expected = fsSync(file)
  const [ours] = readFilesUtf8([file], { errors: 'return' })
  assertSameResult(ours, expected, file)
  if (process.getuid?.() === 0) assert.equal(ours, 'secret é\n', 'root reads a mode-000 file, as fs does')
  else assert.equal(ours.code, 'EACCES')
})

/** Starts a child that opens `fifo` for writing, writes `text` and closes it. */
function feedFifo(fifo, text) {
  const script = `require('node:fs').writeFileSync(${JSON.stringify(fifo)}, ${JSON.stringify(text)})`
  const child = spawn(process.execPath, ['-e', script], { stdio: 'inherit' })
  return new Promise((resolve) => child.on('exit', resolve))
}

test('a FIFO in the list is read to EOF (its writer is another process)', unsupportedOnWindows('FIFOs (mkfifo)'), async () => {
  const fifo = scratch('batch-fifo')
  execFileSync('mkfifo', [fifo])
  const { files } = generatedTree()
  const text = `${'pipe é中😀 '.repeat(3000)}\n`
  const list = [files[0], fifo, files[40]]
  const fed = feedFifo(fifo, text)
  const ours = readFilesUtf8(list)
  await fed
  assert.equal(ours[1], text)
  assert.equal(ours[0], fsSync(files[0]))
  assert.equal(ours[2], fsSync(files[40]))
  const fedAgain = feedFifo(fifo, text)
  const oursAsync = await readFilesUtf8Async(list)
  await fedAgain
  assert.equal(oursAsync[1], text)
})

test('fds in the list are read from their position, in list order, and left open', () => {
  const { files } = generatedTree()
  const fd = fs.openSync(files[3], 'r')
  const fd2 = fs.openSync(files[3], 'r')
  try {
    const expected = fs.readFileSync(fd2, 'utf8')
    // The same fd twice: the first read takes all, the second starts at EOF (as a loop of fs does).
    const ours = readFilesUtf8([fd, files[5], fd, 2 ** 31 - 1], { errors: 'return' })
    assert.equal(ours[0], expected)
    assert.equal(ours[1], fsSync(files[5]))
    assert.equal(ours[2], '')
    assertSameResult(ours[3], fsSync(2 ** 31 - 1), 'a bad fd')
    fs.fstatSync(fd) // still open
  } finally {
    fs.closeSync(fd)
    fs.closeSync(fd2)
  }
})

test('the flag option: as fs, including flags that create files and flags fs rejects', () => {
  const { files } = generatedTree()
  const created = scratch('batch-created-by-a+.txt')
  const ours = readFilesUtf8([files[2], created], { flag: 'a+' })
  assert.deepEqual(ours, [fsSync(files[2]), ''])
  assert.ok(fs.existsSync(created))
  for (const flag of ['bogus', 2 ** 40]) {
    const list = [files[2], files[3]]
    const returned = readFilesUtf8(list, { flag, errors: 'return' })
    list.forEach((p, i) => assertSameResult(returned[i], fsSync(p, { encoding: 'utf8', flag }), `flag ${flag}`))
  }
  assert.deepEqual(readFilesUtf8([files[2]], { flag: 'r+' }), [fsSync(files[2])])
})

test('any list that passes Array.isArray is read: a Proxy over an array, sync and async', async () => {
  const { files } = generatedTree()
  const list = files.slice(0, 50)
  const expected = list.map((f) => fsSync(f))
  const proxy = new Proxy(list.slice(), {})
  assert.ok(Array.isArray(proxy))
  assert.deepEqual(readFilesUtf8(proxy), expected)
  assert.deepEqual(await readFilesUtf8Async(new Proxy(list.slice(), {})), expected)
  const mixed = new Proxy([list[0], pathToFileURL(list[1]), Buffer.from(list[2])], {})
  assert.deepEqual(readFilesUtf8(mixed), expected.slice(0, 3))
})

test('argument validation: the errors Node validators throw, as documented', () => {
  const check = (fn, code, name, message) => {
    assert.throws(fn, (err) => {
      assert.equal(err.code, code)
      assert.equal(err.name, name)
      assert.match(err.message, message)
      return true
    })
  }
  const { files } = generatedTree()
  for (const paths of ['a-string', undefined, null, 5, { length: 1, 0: 'x' }, new Set(['x'])]) {
    check(() => readFilesUtf8(paths), 'ERR_INVALID_ARG_TYPE', 'TypeError', /^The "paths" argument must be an instance of Array\. Received /)
  }
  check(() => readFilesUtf8([], 5), 'ERR_INVALID_ARG_TYPE', 'TypeError', /^The "options" argument must be of type object\. Received type number \(5\)$/)
  check(() => readFilesUtf8([], { concurrency: '2' }), 'ERR_INVALID_ARG_TYPE', 'TypeError', /^The "options\.concurrency" property must be of type number\. Received type string \('2'\)$/)
  check(() => readFilesUtf8([], { concurrency: 1.5 }), 'ERR_OUT_OF_RANGE', 'RangeError', /^The value of "options\.concurrency" is out of range\. It must be an integer\. Received 1\.5$/)
  for (const bad of [0, -1, 257, Infinity, NaN]) {
    check(() => readFilesUtf8([], { concurrency: bad }), 'ERR_OUT_OF_RANGE', 'RangeError', /options\.concurrency" is out of range/)
  }
  check(() => readFilesUtf8([], { errors: 'ignore' }), 'ERR_INVALID_ARG_VALUE', 'TypeError', /^The property 'options\.errors' must be one of: 'throw', 'return'\. Received 'ignore'$/)
  check(() => readFilesUtf8([], { encoding: 'latin1' }), 'ERR_INVALID_ARG_VALUE', 'TypeError', /options\.encoding' must be 'utf8' or 'utf-8'/)
  check(() => readFilesUtf8([], 'hex'), 'ERR_INVALID_ARG_VALUE', 'TypeError', /options\.encoding/)
  // Accepted forms.
  assert.deepEqual(readFilesUtf8([]), [])
  assert.deepEqual(readFilesUtf8([files[2]], 'UTF-8'), [fsSync(files[2])])
  assert.deepEqual(readFilesUtf8([files[2]], { encoding: 'utf8', concurrency: 256 }), [fsSync(files[2])])
  assert.deepEqual(readFilesUtf8([files[2]], null), [fsSync(files[2])])
})

test('10^5 entries: results in order, no fd left open, memory bounded by the results', async (t) => {
  const { files } = generatedTree()
  const small = files.filter((f) => fs.statSync(f).size <= 4 * KiB)
  const expected = new Map(small.map((f) => [f, fsSync(f)]))
  const list = Array.from({ length: 100_000 }, (_, i) => small[(i * 7) % small.length])
  const fdsBefore = process.platform === 'win32' ? 0 : openFdCount()
  const rssBefore = process.memoryUsage().rss
  const ours = readFilesUtf8(list)
  const rssGrowth = process.memoryUsage().rss - rssBefore
  assert.equal(ours.length, list.length)
  list.forEach((f, i) => {
    if (ours[i] !== expected.get(f)) assert.fail(`${f} at ${i}`)
  })
  // The strings are V8's (shared where equal); the working set is a bounded window.
  const resultBytes = ours.reduce((sum, s) => sum + s.length * 2, 0)
  assert.ok(rssGrowth < resultBytes + 256 * MiB, `RSS grew ${rssGrowth} bytes for ${resultBytes} of results`)
  await t.test('no fd left open', unsupportedOnWindows(NO_FD_COUNT), () => assert.equal(openFdCount(), fdsBefore))
})

test('huge files stream through: a list far larger than the working set', () => {
  // 24 entries of 5 MiB: at most the bounded working set is read ahead of the strings.
  const { files } = generatedTree()
  const big = files.filter((f) => /-5242881\.txt$/.test(f))
  const list = Array.from({ length: 24 }, (_, i) => big[i % big.length])
  const expected = big.map((f) => fsSync(f))
  const ours = readFilesUtf8(list, { concurrency: 3 })
  list.forEach((f, i) => assert.ok(ours[i] === expected[i % big.length], `${f} at ${i}`))
})

// ---- Async. ----

test('async: node_modules and the tree === fs.promises.readFile, in list order', async () => {
  const files = [...walk(path.join(ROOT, 'node_modules')), ...generatedTree().files]
  const ours = await readFilesUtf8Async(files, { errors: 'return' })
  assert.equal(ours.length, files.length)
  for (let i = 0; i < files.length; i++) assertSameResult(ours[i], fsSync(files[i]), files[i])
  const c1 = await readFilesUtf8Async(generatedTree().files, { concurrency: 1 })
  generatedTree().files.forEach((f, i) => assertSameResult(c1[i], fsSync(f), f))
})

test("async: errors: 'return' holds fs.promises' errors, field by field", async () => {
  const list = mixedList()
  const ours = await readFilesUtf8Async(list, { errors: 'return' })
  assert.equal(ours.length, list.length)
  for (let i = 0; i < list.length; i++) assertSameResult(ours[i], await fsAsync(list[i]), `[${i}] ${String(list[i])}`)
})

test('async: rejects with the first failing path in list order, with err.index', async () => {
  const { files } = generatedTree()
  for (const [label, bad] of Object.entries(failingPaths())) {
    const list = [files[0], files[1], bad, files[2], scratch('later-missing')]
    const err = await readFilesUtf8Async(list).then(
      () => assert.fail(`${label}: expected a rejection`),
      (e) => e,
    )
    assert.equal(err.index, 2, label)
    assert.deepEqual(withoutIndex(err), errorFields(await fsAsync(bad)), label)
  }
})

test('async: an aborted signal rejects with fs.promises AbortError; an abort mid-batch too', async (t) => {
  const { files } = generatedTree()
  const reason = new Error('stop now')
  const expected = await fs.promises.readFile(files[0], { encoding: 'utf8', signal: AbortSignal.abort(reason) }).catch((e) => e)
  const pre = await readFilesUtf8Async(files, { signal: AbortSignal.abort(reason) }).catch((e) => e)
  assert.deepEqual(errorFields(pre), errorFields(expected))
  assert.equal(pre.cause, reason)

  const fdsBefore = process.platform === 'win32' ? 0 : openFdCount()
  const controller = new AbortController()
  const long = Array.from({ length: 20_000 }, (_, i) => files[i % files.length])
  const pending = readFilesUtf8Async(long, { signal: controller.signal, concurrency: 2 })
  setImmediate(() => controller.abort(reason))
  const mid = await pending.catch((e) => e)
  assert.equal(mid.name, 'AbortError')
  assert.equal(mid.code, 'ABORT_ERR')
  assert.equal(mid.cause, reason)
  // The workers stop at the next file: no fd stays open.
  await new Promise((resolve) => setTimeout(resolve, 200))
  await t.test('no fd left open after the abort', unsupportedOnWindows(NO_FD_COUNT), () => assert.equal(openFdCount(), fdsBefore))
  // A signal that never aborts changes nothing.
  const ok = await readFilesUtf8Async(files.slice(0, 5), { signal: new AbortController().signal })
  files.slice(0, 5).forEach((f, i) => assertSameResult(ok[i], fsSync(f), f))
})

test('async: argument errors reject (not throw), as documented', async () => {
  const rejects = async (promiseFn, code) => {
    let promise
    assert.doesNotThrow(() => {
      promise = promiseFn()
    })
    await assert.rejects(promise, (err) => err.code === code)
  }
  await rejects(() => readFilesUtf8Async('x'), 'ERR_INVALID_ARG_TYPE')
  await rejects(() => readFilesUtf8Async([], { concurrency: 0 }), 'ERR_OUT_OF_RANGE')
  await rejects(() => readFilesUtf8Async([], { errors: 'x' }), 'ERR_INVALID_ARG_VALUE')
  await rejects(() => readFilesUtf8Async([], { signal: {} }), 'ERR_INVALID_ARG_TYPE')
  await rejects(() => readFilesUtf8Async([], { signal: null }), 'ERR_INVALID_ARG_TYPE')
  assert.deepEqual(await readFilesUtf8Async([]), [])
})

test('async: the main thread stays free while the workers read', async () => {
  const files = generatedTree().files.filter((f) => fs.statSync(f).size <= 128 * KiB)
  const long = Array.from({ length: 20_000 }, (_, i) => files[i % files.length])
  let ticks = 0
  const timer = setInterval(() => ticks++, 1)
  const started = performance.now()
  const ours = await readFilesUtf8Async(long)
  const elapsed = performance.now() - started
  clearInterval(timer)
  const expected = files.map((f) => fsSync(f))
  long.forEach((f, i) => assert.ok(ours[i] === expected[i % files.length], `${f} at ${i}`))
  // Timers kept firing while the batch ran (a blocked loop would give none).
  if (elapsed > 50) assert.ok(ticks > 0, `no timer ran in ${elapsed.toFixed(0)} ms`)
})

test('several async batches at once, and sync batches beside them, each in its own order', async () => {
  const { files } = generatedTree()
  const expected = files.map((f) => fsSync(f))
  const lists = [0, 1, 2].map((k) => files.map((_, i) => files[(i * (k + 2)) % files.length]))
  const pending = lists.map((list) => readFilesUtf8Async(list, { concurrency: 2 }))
  const sync = readFilesUtf8(files)
  sync.forEach((s, i) => assert.ok(s === expected[i]))
  const done = await Promise.all(pending)
  done.forEach((ours, k) =>
    lists[k].forEach((f, i) => assert.ok(ours[i] === expected[files.indexOf(f)], `batch ${k} [${i}] ${hex(Buffer.from(f))}`)),
  )
})

test('ESM exports the batch functions; fds/URLs mix with readFileUtf8 results', async () => {
  const esm = await import('../index.mjs')
  assert.equal(esm.readFilesUtf8, readFilesUtf8)
  assert.equal(esm.readFilesUtf8Async, readFilesUtf8Async)
  const { files } = generatedTree()
  assert.deepEqual(readFilesUtf8([pathToFileURL(files[7])]), [readFileUtf8(files[7])])
})

test('worker threads terminated mid-batch (sync and async): no crash, no fd left open', async (t) => {
  const dir = scratch('batch-workers')
  fs.mkdirSync(dir)
  const files = Array.from({ length: 40 }, (_, i) => {
    const f = path.join(dir, `f${i}.txt`)
    fs.writeFileSync(f, content(['ascii', 'mixed', 'invalid'][i % 3], 1000 + i * 4000, i + 1))
    return f
  })
  const script = `
    const fs = require('node:fs')
    const { Worker } = require('node:worker_threads')
    const ROOT = ${JSON.stringify(ROOT)}
    const files = ${JSON.stringify(files)}
    const workerSource = 'const ROOT = ' + JSON.stringify(ROOT) + ';' + ${JSON.stringify(`
      const { parentPort, workerData } = require('node:worker_threads')
      const { readFilesUtf8, readFilesUtf8Async } = require(ROOT)
      const list = Array.from({ length: 20000 }, (_, i) => workerData.files[i % workerData.files.length])
      const lane = () => readFilesUtf8Async(list, { concurrency: 2 }).then(lane)
      lane(); lane()
      const spin = () => { readFilesUtf8(workerData.files); parentPort.postMessage('reading'); setImmediate(spin) }
      spin()`)}
    const LINUX = process.platform === 'linux'
    const openFds = () => LINUX ? fs.readdirSync('/proc/self/fd').length : null
    const batchThreads = () => !LINUX ? null :
      fs.readdirSync('/proc/self/task').filter((t) => {
        try { return fs.readFileSync('/proc/self/task/' + t + '/comm', 'utf8').startsWith('readfile-utf8-b') } catch { return false }
      }).length
    ;(async () => {
      const { readFilesUtf8 } = require(ROOT)
      const round = async (i) => {
        const w = new Worker(workerSource, { eval: true, workerData: { files } })
        await new Promise((resolve) => w.once('message', resolve))
        await new Promise((resolve) => setTimeout(resolve, 2 + (i % 5) * 7))
        await w.terminate()
        // Batch threads of a terminated worker end after the file in hand.
        await new Promise((resolve) => setTimeout(resolve, 300))
      }
      // The first round opens what stays open for the process (worker plumbing).
      await round(0)
      const fdsBefore = openFds()
      for (let i = 1; i <= 12; i++) await round(i)
      const same = readFilesUtf8(files).every((s, i) => s === fs.readFileSync(files[i], 'utf8'))
      process.stdout.write(JSON.stringify({ fdsBefore, fdsAfter: openFds(), same, threads: batchThreads() }))
    })()`
  const r = require('node:child_process').spawnSync(process.execPath, ['-e', script], { encoding: 'utf8', timeout: 60_000 })
  assert.equal(r.signal, null, r.stderr)
  assert.equal(r.status, 0, r.stderr)
  const out = JSON.parse(r.stdout)
  assert.equal(out.same, true)
  await t.test('no fd left open', unsupportedOnWindows(NO_FD_COUNT), () => assert.equal(out.fdsAfter, out.fdsBefore))
  await t.test('no batch thread left running', unsupportedOnWindows('threads are counted by name in /proc/self/task (Linux)'), () =>
    assert.equal(out.threads, 0),
  )
})
