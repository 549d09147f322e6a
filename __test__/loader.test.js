'use strict'
// lib/native.js, the loader: where it finds the addon, and when it finds none,
// the one warning (or, under READFILE_UTF8_REQUIRE_NATIVE, the error) that
// gives the real cause. Each case runs a copy of the package, laid out as an
// install would be, in a fresh Node, with our variables cleared.
const { test } = require('node:test')
const assert = require('node:assert/strict')
const fs = require('node:fs')
const path = require('node:path')
const { spawnSync } = require('node:child_process')

const { scratch } = require('./helpers')
const { PUBLISHED, platforms, findBinary } = require('../lib/binary-name')

const ROOT = path.join(__dirname, '..')
const { version, files: SHIPPED } = require('../package.json')
const BINARY = findBinary()
const PLATFORM = platforms().find((p) => PUBLISHED.includes(p))
const PKG = `readfile-utf8-${PLATFORM}`

/** The package as npm installs it (package.json's `files`), at `dir`: no binary. */
function copyPackage(dir) {
  fs.mkdirSync(dir, { recursive: true })
  for (const entry of [...SHIPPED, 'package.json']) {
    fs.cpSync(path.join(ROOT, entry), path.join(dir, entry), { recursive: true })
  }
  return dir
}

/** A platform package at `dir`: its package.json (with `version`) and `binary` (bytes or a file to copy). */
function platformPackage(dir, { binary, version: v = version }) {
  fs.mkdirSync(dir, { recursive: true })
  const main = `readfile-utf8.${PLATFORM}.node`
  fs.writeFileSync(path.join(dir, 'package.json'), JSON.stringify({ name: PKG, version: v, main }))
  if (Buffer.isBuffer(binary)) fs.writeFileSync(path.join(dir, main), binary)
  else fs.copyFileSync(binary, path.join(dir, main))
}

/** A project with readfile-utf8 (and, if given, its platform package) in node_modules. */
function project(name, platform) {
  const home = scratch(`loader-${name}`)
  copyPackage(path.join(home, 'node_modules', 'readfile-utf8'))
  if (platform) platformPackage(path.join(home, 'node_modules', PKG), platform)
  return home
}

/** Runs `script` in `cwd` with our variables cleared, then `env` set. */
function run(cwd, script, { env = {}, args = [] } = {}) {
  const clean = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('READFILE_UTF8_')))
  const r = spawnSync(process.execPath, [...args, '-e', script], { cwd, encoding: 'utf8', env: { ...clean, ...env }, timeout: 60_000 })
  assert.equal(r.signal, null, r.stderr)
  return { ...r, warnings: r.stderr.match(/\[READFILE_UTF8_NO_NATIVE\] Warning/g)?.length ?? 0 }
}

// What a child prints: the engine, a read compared with fs (in the default
// memory mode, fast, with or without the addon), and the error fs gives compared with ours.
const REPORT = `
  const fs = require('node:fs')
  const lib = require('readfile-utf8')
  const fields = (fn) => { try { fn() } catch (e) { return [e.code, e.errno, e.syscall, e.path, e.message].join('|') } }
  const missing = require('node:path').join(process.cwd(), 'missing.txt')
  fs.writeFileSync('text.txt', Buffer.from('é 中 😀 \\xff'.repeat(1000), 'latin1'))
  process.stdout.write(JSON.stringify({
    engine: lib.engine(),
    same: lib.setMemoryMode('lean') === 'fast' && lib.setMemoryMode('fast') === 'lean' && lib.readFileUtf8('text.txt') === fs.readFileSync('text.txt', 'utf8'),
    error: fields(() => lib.readFileUtf8(missing)) === fields(() => fs.readFileSync(missing, 'utf8')),
  }))`

/** Loads readfile-utf8 under REQUIRE_NATIVE and prints the error's code, reason and message (or 'loaded'). */
const REQUIRED = `
  try { require('readfile-utf8'); process.stdout.write('loaded') }
  catch (e) { process.stdout.write(JSON.stringify({ code: e.code, reason: e.reason, message: e.message, cause: e.cause?.message })) }`

test('without its platform package: fs answers, and exactly one warning says where it looked, the possible causes and every way out', () => {
  const home = project('none')
  fs.writeFileSync(path.join(home, 'package.json'), '{"name": "app"}')
  const r = run(home, `${REPORT}; require('readfile-utf8/register'); import('readfile-utf8')`)
  assert.equal(r.status, 0, r.stderr)
  assert.deepEqual(JSON.parse(r.stdout), { engine: 'fs', same: true, error: true })
  assert.equal(r.warnings, 1, r.stderr)
  assert.match(r.stderr, new RegExp(`the platform package ${PKG} is not installed`))
  // What .ci/run asks a build, answered for none: fs reads.
  const reader = run(home, `process.stdout.write(require('./node_modules/readfile-utf8/lib/native').reader())`)
  assert.equal(reader.stdout, 'fs', reader.stderr)
  // Where it looked: the path variable, the local build in the package root, the platform package.
  const root = path.join(home, 'node_modules', 'readfile-utf8')
  assert.match(r.stderr, /Looked for: the file READFILE_UTF8_NATIVE_LIBRARY_PATH names \(it is not set\)/)
  assert.ok(r.stderr.includes(`readfile-utf8.${PLATFORM}.node`) && r.stderr.includes(root), r.stderr)
  assert.ok(r.stderr.includes(`the platform package ${PKG}@${version}`), r.stderr)
  // The causes it cannot tell apart.
  assert.match(r.stderr, /--omit=optional/)
  assert.ok(r.stderr.includes(`the registry has no ${PKG}@${version}`), r.stderr)
  assert.match(r.stderr, /the lockfile was written on another platform/)
  // Every way out, each one a consumer can follow: nothing to run inside the installed package.
  assert.match(r.stderr, /reinstall with optional dependencies \(npm install --include=optional/)
  assert.match(r.stderr, /set READFILE_UTF8_NATIVE_LIBRARY_PATH to/)
  assert.match(r.stderr, new RegExp(`git clone --branch v${version.replace(/\./g, '\\.')} https://\\S+ && cd readfile-utf8 && npm install`))
  assert.doesNotMatch(r.stderr, /npm run build/, 'no advice to build inside the installed package, which ships no Rust sources')
})

test('READFILE_UTF8_REQUIRE_NATIVE=1 or true: an error with a code and the cause, not a fallback', () => {
  const home = project('required')
  for (const value of ['1', 'true', 'TRUE']) {
    const r = run(home, REQUIRED, { env: { READFILE_UTF8_REQUIRE_NATIVE: value } })
    const out = JSON.parse(r.stdout)
    assert.equal(out.code, 'READFILE_UTF8_NO_NATIVE', value)
    assert.equal(out.reason, 'not-installed', value)
    assert.match(out.message, new RegExp(`${PKG} is not installed`), value)
    assert.match(out.message, /READFILE_UTF8_REQUIRE_NATIVE is set/, value)
    assert.doesNotMatch(out.message, /falls? back|hands its calls to fs/, value)
    assert.equal(r.warnings, 0, value)
  }
  for (const value of ['0', 'false', '']) {
    const r = run(home, REQUIRED, { env: { READFILE_UTF8_REQUIRE_NATIVE: value } })
    assert.equal(r.stdout, 'loaded', `${value}: ${r.stdout}`)
    assert.equal(r.warnings, 1, value)
  }
  const bad = run(home, REQUIRED, { env: { READFILE_UTF8_REQUIRE_NATIVE: 'yes' } })
  const out = JSON.parse(bad.stdout)
  assert.equal(out.code, 'READFILE_UTF8_BAD_ENV')
  assert.match(out.message, /READFILE_UTF8_REQUIRE_NATIVE must be 1 or true .* not 'yes'/)
})

test('one warning for the main thread and 64 workers that load it after it', () => {
  const home = project('workers')
  const script = `
    const { Worker } = require('node:worker_threads')
    const engine = require('readfile-utf8').engine()
    const workers = Array.from({ length: 64 }, () =>
      new Worker("require('node:worker_threads').parentPort.postMessage(require('readfile-utf8').engine())", { eval: true }))
    Promise.all(workers.map((w) => new Promise((resolve, reject) => w.on('message', resolve).on('error', reject))))
      .then((engines) => process.stdout.write(JSON.stringify([engine, ...new Set(engines)])))`
  const r = run(home, script)
  assert.equal(r.status, 0, r.stderr)
  assert.deepEqual(JSON.parse(r.stdout), ['fs', 'fs'])
  assert.equal(r.warnings, 1, r.stderr)
})

test('the installed platform package loads, with no warning', () => {
  assert.ok(BINARY, 'a local build of the addon (npm test builds it first)')
  const home = project('platform', { binary: BINARY })
  const r = run(home, REPORT, { env: { READFILE_UTF8_REQUIRE_NATIVE: '1' } })
  assert.equal(r.status, 0, r.stderr)
  assert.deepEqual(JSON.parse(r.stdout), { engine: 'simdutf', same: true, error: true })
  assert.equal(r.stderr, '')
})

test('a platform package that fails to load: the cause is the loader error', () => {
  const home = project('broken', { binary: Buffer.from('not a shared library\n') })
  const r = run(home, REPORT)
  assert.equal(r.status, 0, r.stderr)
  assert.deepEqual(JSON.parse(r.stdout), { engine: 'fs', same: true, error: true })
  assert.equal(r.warnings, 1)
  assert.match(r.stderr, new RegExp(`${PKG} \\(.*\\) is installed but failed to load: \\S`))
  const required = JSON.parse(run(home, REQUIRED, { env: { READFILE_UTF8_REQUIRE_NATIVE: '1' } }).stdout)
  assert.equal(required.reason, 'load-failed')
  assert.ok(required.cause, 'the loader error is the error cause')
  assert.ok(required.message.includes(required.cause.split('\n')[0]), required.message)
})

test('a platform package of another version: not loaded, and the message names both versions', () => {
  const home = project('version', { binary: Buffer.from('never loaded'), version: '0.0.1' })
  const out = JSON.parse(run(home, REQUIRED, { env: { READFILE_UTF8_REQUIRE_NATIVE: '1' } }).stdout)
  assert.equal(out.reason, 'load-failed')
  assert.match(out.message, new RegExp(`${PKG} 0\\.0\\.1 is installed .* readfile-utf8 ${version.replace(/\./g, '\\.')} needs the same version`))
})

test('installed where the package cannot resolve it: the message says so and where it is', () => {
  const home = scratch('loader-elsewhere')
  copyPackage(path.join(home, 'lib-here', 'readfile-utf8'))
  const app = path.join(home, 'app')
  platformPackage(path.join(app, 'node_modules', PKG), { binary: Buffer.from('never loaded') })
  const script = REQUIRED.replace("require('readfile-utf8')", `require(${JSON.stringify(path.join(home, 'lib-here', 'readfile-utf8'))})`)
  const out = JSON.parse(run(app, script, { env: { READFILE_UTF8_REQUIRE_NATIVE: '1' } }).stdout)
  assert.equal(out.reason, 'unresolvable')
  assert.match(out.message, new RegExp(`${PKG} is installed in .*app.node_modules.*, but it cannot be resolved from`))
  assert.match(out.message, /READFILE_UTF8_NATIVE_LIBRARY_PATH/)
})

test('READFILE_UTF8_NATIVE_LIBRARY_PATH: the file it names is loaded, and nothing else', () => {
  assert.ok(BINARY, 'a local build of the addon (npm test builds it first)')
  const home = project('named')
  fs.copyFileSync(BINARY, path.join(home, 'addon.node'))
  const r = run(home, REPORT, { env: { READFILE_UTF8_NATIVE_LIBRARY_PATH: 'addon.node', READFILE_UTF8_REQUIRE_NATIVE: '1' } })
  assert.equal(r.status, 0, r.stderr)
  assert.deepEqual(JSON.parse(r.stdout), { engine: 'simdutf', same: true, error: true })
  // A wrong name does not send the loader elsewhere, even with a platform package installed.
  const installed = project('named-wrong', { binary: BINARY })
  const wrong = run(installed, REPORT, { env: { READFILE_UTF8_NATIVE_LIBRARY_PATH: 'nope.node' } })
  assert.equal(JSON.parse(wrong.stdout).engine, 'fs')
  assert.equal(wrong.warnings, 1)
  assert.match(wrong.stderr, /READFILE_UTF8_NATIVE_LIBRARY_PATH names \S*nope\.node, and there is no such file/)
})

// Node below the floor and an unknown platform, as the process reports them.
const pretend = (home, name, code) => {
  const file = path.join(home, `${name}.js`)
  fs.writeFileSync(file, code)
  return ['-r', file]
}

test('Node older than 20.12: fs answers, even with a platform package, and the warning names the version', () => {
  assert.ok(BINARY, 'a local build of the addon (npm test builds it first)')
  const home = project('old-node', { binary: BINARY })
  const args = pretend(home, 'node18', "Object.defineProperty(process, 'versions', { value: { ...process.versions, node: '18.20.8' } })")
  const r = run(home, REPORT, { args })
  assert.equal(r.status, 0, r.stderr)
  assert.deepEqual(JSON.parse(r.stdout), { engine: 'fs', same: true, error: true })
  assert.equal(r.warnings, 1)
  assert.match(r.stderr, /Node 18\.20\.8 is older than 20\.12, the oldest Node its native addon supports/)
  const out = JSON.parse(run(home, REQUIRED, { args, env: { READFILE_UTF8_REQUIRE_NATIVE: '1' } }).stdout)
  assert.equal(out.reason, 'old-node')
})

test('a platform with no binary: the warning says so and lists those that have one', () => {
  const home = project('no-binary')
  const args = pretend(home, 'ia32', "Object.defineProperty(process, 'arch', { value: 'ia32' })")
  const r = run(home, REPORT, { args })
  assert.equal(r.status, 0, r.stderr)
  assert.deepEqual(JSON.parse(r.stdout), { engine: 'fs', same: true, error: true })
  assert.equal(r.warnings, 1)
  assert.match(r.stderr, new RegExp(`there is no binary for ${process.platform}-ia32\\S* \\(binaries exist for ${PUBLISHED.join(', ')}\\)`))
  assert.match(r.stderr, new RegExp(`Set READFILE_UTF8_NATIVE_LIBRARY_PATH to a readfile-utf8\\.${process.platform}-ia32\\S*\\.node you have, or build one from source`))
})

// Every warning in full: what a user reads is the cause, the consequence and the fix.
const WARNED = `
  const warnings = []
  process.on('warning', (w) => { if (w.code === 'READFILE_UTF8_NO_NATIVE') warnings.push({ name: w.name, reason: w.reason, message: w.message, hasCause: Object.hasOwn(w, 'cause'), cause: w.cause?.message }) })
  const engine = require('readfile-utf8').engine()
  setImmediate(() => process.stdout.write(JSON.stringify({ engine, warnings })))`
const FALLBACK = 'Every function hands its calls to fs: the same results and errors, without the speed-up.'
const REQUIRED_TOO = 'READFILE_UTF8_REQUIRE_NATIVE is set, so this is an error.'
const message = (cause, consequence, fix) => `readfile-utf8: no native addon: ${cause}. ${consequence}${fix ? ` ${fix}` : ''}`

test('READFILE_UTF8_REQUIRE_NATIVE: only the whole words 1, true, 0, false (any case) count', () => {
  const home = project('required-words')
  for (const value of ['xfalse', 'falsey', 'xtrue', 'truey', '10', 'False!']) {
    const out = JSON.parse(run(home, REQUIRED, { env: { READFILE_UTF8_REQUIRE_NATIVE: value } }).stdout)
    assert.equal(out.code, 'READFILE_UTF8_BAD_ENV', value)
    assert.equal(out.message, `readfile-utf8: READFILE_UTF8_REQUIRE_NATIVE must be 1 or true (or 0, false, empty), not '${value}'.`)
  }
  assert.equal(run(home, REQUIRED, { env: { READFILE_UTF8_REQUIRE_NATIVE: 'FALSE' } }).stdout, 'loaded')
})

test('the warnings and errors in full, for every cause: message, reason, and the loader error as cause', () => {
  const notInstalled = project('full-none')
  const root = path.join(notInstalled, 'node_modules', 'readfile-utf8')
  // What it looked for and where, the causes it cannot tell apart, every way out.
  const says = (text, consequence) => {
    assert.ok(text.startsWith(`readfile-utf8: no native addon: the platform package ${PKG} is not installed. ${consequence}\n`), text)
    for (const part of [
      `Looked for: the file READFILE_UTF8_NATIVE_LIBRARY_PATH names (it is not set)`,
      `readfile-utf8.${PLATFORM}.node`,
      root,
      `the platform package ${PKG}@${version}`,
      'Possible causes, which it cannot tell apart:',
      '--omit=optional',
      `the registry has no ${PKG}@${version}`,
      'the lockfile was written on another platform',
      'Ways out:',
      'npm install --include=optional',
      `npm view ${PKG}@${version}`,
      `set READFILE_UTF8_NATIVE_LIBRARY_PATH to a readfile-utf8.${PLATFORM}.node`,
      `git clone --branch v${version}`,
    ]) assert.ok(text.includes(part), `${part} in: ${text}`)
  }
  const warned = JSON.parse(run(notInstalled, WARNED).stdout)
  assert.equal(warned.engine, 'fs')
  assert.deepEqual(warned.warnings.map(({ name, reason, hasCause }) => ({ name, reason, hasCause })), [{ name: 'Warning', reason: 'not-installed', hasCause: false }])
  says(warned.warnings[0].message, FALLBACK)
  const required = JSON.parse(run(notInstalled, REQUIRED, { env: { READFILE_UTF8_REQUIRE_NATIVE: '1' } }).stdout)
  assert.deepEqual([required.code, required.reason], ['READFILE_UTF8_NO_NATIVE', 'not-installed'])
  says(required.message, REQUIRED_TOO)

  const old = pretend(notInstalled, 'node20-11', "Object.defineProperty(process, 'versions', { value: { ...process.versions, node: '20.11.1' } })")
  assert.deepEqual(JSON.parse(run(notInstalled, WARNED, { args: old }).stdout).warnings[0], {
    name: 'Warning',
    reason: 'old-node',
    message: message('Node 20.11.1 is older than 20.12, the oldest Node its native addon supports', FALLBACK, 'Run Node 20.12 or newer for the native reads.'),
    hasCause: false,
  })

  const ia32 = pretend(notInstalled, 'ia32', "Object.defineProperty(process, 'arch', { value: 'ia32' })")
  const noBinary = JSON.parse(run(notInstalled, WARNED, { args: ia32 }).stdout).warnings[0]
  assert.equal(noBinary.reason, 'no-binary')
  assert.ok(noBinary.message.startsWith(`readfile-utf8: no native addon: there is no binary for ${process.platform}-ia32`), noBinary.message)
  assert.ok(noBinary.message.includes(` (binaries exist for ${PUBLISHED.join(', ')}). ${FALLBACK}`), noBinary.message)
  assert.ok(noBinary.message.includes('READFILE_UTF8_NATIVE_LIBRARY_PATH'), noBinary.message)

  // A binary that fails to load, wherever it lies: the loader's error (its first line) is the cause.
  const garbage = Buffer.from('not a shared library\n')
  const local = project('full-local')
  fs.writeFileSync(path.join(local, 'node_modules', 'readfile-utf8', `readfile-utf8.${PLATFORM}.node`), garbage)
  const named = project('full-named')
  fs.writeFileSync(path.join(named, 'garbage.node'), garbage)
  const broken = project('full-broken', { binary: garbage })
  const cases = [
    [local, {}, (file) => `${file} failed to load`],
    [named, { READFILE_UTF8_NATIVE_LIBRARY_PATH: 'garbage.node' }, (file) => `READFILE_UTF8_NATIVE_LIBRARY_PATH names ${file}, and it failed to load`],
    [broken, {}, (file) => `${PKG} (${path.dirname(file)}) is installed but failed to load`],
  ]
  for (const [home, env, causeFor] of cases) {
    const { warnings } = JSON.parse(run(home, WARNED, { env }).stdout)
    assert.equal(warnings.length, 1, home)
    const [w] = warnings
    // The file as the loader names it (Windows' message has it after 'for', behind a \\?\ prefix).
    const file = (w.cause.match(/^(\/\S+\.node)/) ?? w.cause.match(/([A-Za-z]:\\\S+?\.node)/))?.[1]
    assert.ok(file, w.cause)
    assert.deepEqual(w, { name: 'Warning', reason: 'load-failed', message: message(`${causeFor(file)}: ${w.cause.split('\n')[0]}`, FALLBACK), hasCause: true, cause: w.cause })
  }
  // A working local build in the package root is loaded, with no warning.
  const built = project('full-built')
  fs.copyFileSync(BINARY, path.join(built, 'node_modules', 'readfile-utf8', `readfile-utf8.${PLATFORM}.node`))
  assert.deepEqual(JSON.parse(run(built, WARNED).stdout), { engine: 'simdutf', warnings: [] })
})

test('where threads cannot share the one-warning flag (no environment data), the thread still warns', () => {
  const home = project('no-environment-data')
  const args = pretend(home, 'no-env-data', "require('node:worker_threads').getEnvironmentData = () => { throw new Error('not here') }")
  const { engine, warnings } = JSON.parse(run(home, WARNED, { args }).stdout)
  assert.equal(engine, 'fs')
  assert.deepEqual(warnings.map((w) => w.reason), ['not-installed'])
})

test('the version and resolution warnings in full: both versions, where the package is, and the file to name', () => {
  const other = project('full-version', { binary: Buffer.from('never loaded'), version: '0.0.1' })
  const [w] = JSON.parse(run(other, WARNED).stdout).warnings
  const dir = path.join(other, 'node_modules', PKG)
  assert.deepEqual(w, {
    name: 'Warning',
    reason: 'load-failed',
    message: message(`${PKG} 0.0.1 is installed (${dir}), but readfile-utf8 ${version} needs the same version`, FALLBACK, `Install ${PKG}@${version}, or reinstall readfile-utf8.`),
    hasCause: false,
  })
  const home = scratch('loader-full-elsewhere')
  const lib = copyPackage(path.join(home, 'lib-here', 'readfile-utf8'))
  const app = path.join(home, 'app')
  platformPackage(path.join(app, 'node_modules', PKG), { binary: Buffer.from('never loaded') })
  const script = WARNED.replace("require('readfile-utf8')", `require(${JSON.stringify(lib)})`)
  const [elsewhere] = JSON.parse(run(app, script).stdout).warnings
  const where = path.join(app, 'node_modules', PKG)
  assert.deepEqual(elsewhere, {
    name: 'Warning',
    reason: 'unresolvable',
    message: message(
      `${PKG} is installed in ${where}, but it cannot be resolved from ${lib}`,
      FALLBACK,
      `Install ${PKG}@${version} where readfile-utf8 is installed, or set READFILE_UTF8_NATIVE_LIBRARY_PATH to ${path.join(where, `readfile-utf8.${PLATFORM}.node`)}.`,
    ),
    hasCause: false,
  })
})
