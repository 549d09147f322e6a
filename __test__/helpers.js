'use strict'
// Shared by the tests: a scratch folder, and the differential checks that make
// Node's own fs the oracle for every result and every error.
const assert = require('node:assert/strict')
const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const { execFileSync, spawnSync } = require('node:child_process')

// A child process may be given its parent's folder (READFILE_UTF8_TEST_SCRATCH),
// which the parent then removes: under a broken SIMDUTF_FORCE_IMPLEMENTATION,
// Node 22+'s own rmSync cannot remove a folder the child made (its C++ path
// conversion uses simdutf), and every such child left one behind in /tmp.
const GIVEN = process.env.READFILE_UTF8_TEST_SCRATCH
const SCRATCH = GIVEN
  ? fs.mkdtempSync(path.join(GIVEN, 'child-'))
  : fs.mkdtempSync(path.join(os.tmpdir(), 'readfile-utf8-test-'))
process.on('exit', () => fs.rmSync(SCRATCH, { recursive: true, force: true }))

/** A child's environment in the fast memory mode (the default), where sync calls make external strings. */
const FAST_MODE_ENV = { ...process.env, READFILE_UTF8_MEMORY_MODE: 'fast' }

/**
 * The most a loop of reads may peak at in the default (fast) memory mode, in
 * MiB, given fs's peak for the same loop: what README promises (a quarter
 * above fs's, or 128 MiB above it, whichever is more). The lean mode
 * promises 1.25 × fs's.
 */
function defaultPeakBound(fsPeakMiB) {
  return Math.max(1.25 * fsPeakMiB, fsPeakMiB + 128)
}

/** A path in this process's scratch folder. */
function scratch(name) {
  return path.join(SCRATCH, name)
}

/** Describes a byte sequence briefly for assertion messages. */
function hex(bytes, max = 24) {
  const b = Buffer.from(bytes)
  const shown = [...b.subarray(0, max)].map((x) => x.toString(16).padStart(2, '0')).join(' ')
  return `${b.length} bytes [${shown}${b.length > max ? ' …' : ''}]`
}

/**
 * Writes `bytes` to `file` and asserts that `read(file)` is `===` to
 * `fs.readFileSync(file, 'utf8')`. Returns fs's string.
 */
function assertSameAsFs(read, file, bytes, label = '') {
  fs.writeFileSync(file, bytes)
  const expected = fs.readFileSync(file, 'utf8')
  const actual = read(file)
  if (actual !== expected) {
    // Find the first difference for a useful message.
    let i = 0
    while (i < expected.length && actual.charCodeAt(i) === expected.charCodeAt(i)) i++
    assert.fail(
      `${label} ${hex(bytes)}: result differs from fs at char ${i} ` +
        `(ours length ${actual?.length}, fs length ${expected.length}, ` +
        `ours U+${actual?.charCodeAt(i)?.toString(16)}, fs U+${expected.charCodeAt(i)?.toString(16)})`,
    )
  }
  return expected
}

/** Runs `fn`, returning what it threw (or fails if it did not throw). */
function thrown(fn) {
  try {
    fn()
  } catch (err) {
    return err
  }
  assert.fail('expected a throw')
}

/** The fields of an error that users can observe, for field-by-field comparison. */
function errorFields(err) {
  return {
    constructor: err?.constructor?.name,
    name: err?.name,
    code: err?.code,
    errno: err?.errno,
    syscall: err?.syscall,
    path: err?.path,
    hasPath: err != null && Object.hasOwn(err, 'path'),
    message: err?.message,
    ownKeys: err == null ? [] : Object.keys(err),
    stackHead: typeof err?.stack === 'string' ? err.stack.split('\n')[0] : undefined,
  }
}

/** Asserts that `ours()` throws exactly what `theirs()` throws, field by field. */
function assertSameError(ours, theirs, label = '') {
  const expected = errorFields(thrown(theirs))
  const actual = errorFields(thrown(ours))
  assert.deepEqual(actual, expected, label)
}

/**
 * Files that make every OS error fs can throw on open or read, under names
 * starting with `prefix`, and the paths that produce each error.
 */
function osErrorFixtures(prefix) {
  const { pathToFileURL } = require('node:url')
  const existing = scratch(`${prefix}exists.txt`)
  fs.writeFileSync(existing, 'héllo wörld 中 😀\n')
  const dir = scratch(`${prefix}a-directory`)
  fs.mkdirSync(dir)
  const loopA = scratch(`${prefix}loop-a`)
  fs.symlinkSync(scratch(`${prefix}loop-b`), loopA)
  fs.symlinkSync(loopA, scratch(`${prefix}loop-b`))
  const osErrors = {
    ENOENT: scratch('no-such-file'),
    'ENOENT (relative)': 'no/such/relative/file',
    'ENOENT (empty path)': '',
    EISDIR: dir,
    ENOTDIR: path.join(existing, 'child'),
    ELOOP: loopA,
    ENAMETOOLONG: scratch('x'.repeat(5000)),
    'ENOENT (Buffer path, non-UTF-8 bytes)': Buffer.concat([Buffer.from(`${SCRATCH}/n`), Buffer.from([0xff, 0x6f])]),
    'ENOENT (file: URL)': pathToFileURL(scratch('nöpe')),
    'EISDIR (file: URL)': pathToFileURL(dir),
    'ENOENT (Uint8Array path)': new Uint8Array(Buffer.from(scratch('nope'))),
  }
  return { existing, dir, loopA, osErrors }
}

/**
 * Test options for a test (or subtest) that cannot apply on Windows: skipped
 * there with `reason`, so that the skip is counted and listed, never passed.
 */
function unsupportedOnWindows(reason) {
  return process.platform === 'win32' ? { skip: `not on Windows: ${reason}` } : {}
}

/** Why fd counts are not checked on Windows (see unsupportedOnWindows). */
const NO_FD_COUNT = 'open fds are counted in /proc/self/fd (Linux)'

/** How many fds this process has open (/proc/self/fd). */
function openFdCount() {
  return fs.readdirSync('/proc/self/fd').length
}

/**
 * Makes `name` resolve from `dir` (as `dir/node_modules/name`) to the package
 * folder `target`: a link (a junction on Windows), or a copy where links do
 * not resolve (Wine makes none). Returns the installed path, through which
 * the package's own modules are reached either way.
 */
function installPackage(dir, name, target) {
  const dest = path.join(dir, 'node_modules', name)
  fs.mkdirSync(path.dirname(dest), { recursive: true })
  try {
    fs.symlinkSync(target, dest, process.platform === 'win32' ? 'junction' : 'dir')
  } catch {}
  if (!fs.existsSync(dest)) {
    fs.rmSync(dest, { recursive: true, force: true })
    const skip = /[\\/](node_modules|target|\.git|npm|benchmark)$/
    fs.cpSync(target, dest, { recursive: true, filter: (src) => src === target || !skip.test(src) })
  }
  return dest
}

/** `count` files of mixed text (ASCII, Latin-1, CJK, emoji), of growing size, in the scratch folder. */
function someTextFiles(name, count) {
  return Array.from({ length: count }, (_, i) => {
    const p = scratch(`${name}-${i}.txt`)
    fs.writeFileSync(p, `${name} ${i} é中😀 `.repeat(1 + i * 40))
    return p
  })
}

/** A FIFO in the scratch folder (no one writes to it unless a test does). */
function makeFifo(name) {
  const p = scratch(name)
  execFileSync('mkfifo', [p])
  return p
}

/**
 * Runs `script` (CommonJS, the package as `api`) in a child Node (with
 * `nodeArgs`); it must exit on its own, with status 0, within `ms`. Returns
 * its output's lines.
 */
function runPackageChild(script, ms, nodeArgs = []) {
  const root = path.join(__dirname, '..')
  const r = spawnSync(process.execPath, [...nodeArgs, '-e', `const api = require(${JSON.stringify(root)});\n${script}`], { encoding: 'utf8', timeout: ms })
  assert.equal(r.signal, null, `the child did not exit within ${ms} ms (killed by ${r.signal}): ${r.stdout}${r.stderr}`)
  assert.equal(r.status, 0, r.stderr)
  return r.stdout.trim().split('\n')
}

module.exports = {
  SCRATCH,
  FAST_MODE_ENV,
  defaultPeakBound,
  NO_FD_COUNT,
  scratch,
  hex,
  assertSameAsFs,
  thrown,
  errorFields,
  assertSameError,
  osErrorFixtures,
  unsupportedOnWindows,
  openFdCount,
  installPackage,
  someTextFiles,
  makeFifo,
  runPackageChild,
}
