'use strict'
// Which binary the loader (lib/native.js, lib/binary-name.js) chooses, from
// the README: npm installs the platform package of this platform and libc
// (Linux x64 glibc: -gnu, musl: -musl; arm64 likewise), a local build is
// preferred to it, a bundle finds the .node beside it (or the file
// READFILE_UTF8_NATIVE_LIBRARY_PATH names), and where none loads fs answers,
// with one READFILE_UTF8_NO_NATIVE warning. The platform packages installed
// here are both libcs' (npm installs one, but a lockfile or a copied
// node_modules may hold both): only the right one holds a working binary, so
// a wrong choice shows as the fs fallback. The warning is checked by its
// code and reason and by what it names, not by its sentences.
const { test } = require('node:test')
const assert = require('node:assert/strict')
const fs = require('node:fs')
const path = require('node:path')
const { spawnSync } = require('node:child_process')

const { scratch } = require('./helpers')
const { findBinary } = require('../lib/binary-name')

const ROOT = path.join(__dirname, '..')
const { version, files: SHIPPED } = require('../package.json')
const BINARY = findBinary()
const LINUX = 'the libc choice and these package names are Linux x64 ones'
const onLinuxX64 = process.platform === 'linux' && process.arch === 'x64' ? {} : { skip: LINUX }
/** This Linux's libc, as the process itself reports it (an oracle apart from lib/binary-name.js). */
const LIBC = process.report?.getReport?.()?.header?.glibcVersionRuntime ? 'gnu' : 'musl'
const OTHER_LIBC = LIBC === 'gnu' ? 'musl' : 'gnu'

/** The package as npm installs it (package.json's `files`), at `dir`: no binary. */
function copyPackage(dir) {
  fs.mkdirSync(dir, { recursive: true })
  for (const entry of [...SHIPPED, 'package.json']) fs.cpSync(path.join(ROOT, entry), path.join(dir, entry), { recursive: true })
  return dir
}

/** Installs the platform package `readfile-utf8-<platform>` in `home`, holding the addon (`working`) or a broken file. */
function platformPackage(home, platform, { working, v = version }) {
  const dir = path.join(home, 'node_modules', `readfile-utf8-${platform}`)
  fs.mkdirSync(dir, { recursive: true })
  const main = `readfile-utf8.${platform}.node`
  fs.writeFileSync(path.join(dir, 'package.json'), JSON.stringify({ name: `readfile-utf8-${platform}`, version: v, main }))
  if (working) fs.copyFileSync(BINARY, path.join(dir, main))
  else fs.writeFileSync(path.join(dir, main), 'not a shared library\n')
}

let homes = 0
/** A project with readfile-utf8 in node_modules and the platform packages `platforms` ({ name: options }). */
function project(platforms = {}) {
  const home = scratch(`choice-${homes++}`)
  copyPackage(path.join(home, 'node_modules', 'readfile-utf8'))
  for (const [name, options] of Object.entries(platforms)) platformPackage(home, name, options)
  return home
}

// The child: the warnings' code and reason, the engine, and a read against fs.
const REPORT = `
  const warnings = []
  process.on('warning', (w) => warnings.push({ name: w.name, code: w.code, reason: w.reason, message: w.message }))
  const fs = require('node:fs')
  const lib = require(process.env.LIB ?? 'readfile-utf8')
  fs.writeFileSync('text.txt', 'é 中 😀 '.repeat(100))
  const same = lib.readFileUtf8('text.txt') === fs.readFileSync('text.txt', 'utf8')
  setImmediate(() => process.stdout.write(JSON.stringify({ engine: lib.engine(), same, warnings })))`

/** A -r script that makes this process look as given: `ldd` ('musl' / 'missing' / unchanged), `arch`. */
function pretend(home, { ldd, arch }) {
  const file = path.join(home, 'pretend.js')
  fs.writeFileSync(
    file,
    `const fs = require('node:fs')
    const readFileSync = fs.readFileSync
    const ldd = ${JSON.stringify(ldd ?? null)}
    fs.readFileSync = function (p, ...rest) {
      if (p === '/usr/bin/ldd' && ldd === 'musl') return '#!/bin/sh\\n# musl libc (x86_64)\\nexec /lib/ld-musl-x86_64.so.1 --list "$@"\\n'
      if (p === '/usr/bin/ldd' && ldd === 'missing') throw Object.assign(new Error("ENOENT: no such file or directory, open '/usr/bin/ldd'"), { code: 'ENOENT' })
      return Reflect.apply(readFileSync, this, [p, ...rest])
    }
    ${arch ? `Object.defineProperty(process, 'arch', { value: ${JSON.stringify(arch)} })` : ''}`,
  )
  return ['-r', file]
}

function run(cwd, { env = {}, args = [] } = {}) {
  const clean = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('READFILE_UTF8_')))
  const r = spawnSync(process.execPath, [...args, '-e', REPORT], { cwd, encoding: 'utf8', env: { ...clean, ...env }, timeout: 60_000 })
  assert.equal(r.status, 0, r.stderr)
  return JSON.parse(r.stdout)
}

/** Asserts the addon answered: no warning, the native engine, fs's string. */
function assertNative(out, label) {
  assert.deepEqual(out.warnings, [], label)
  assert.notEqual(out.engine, 'fs', label)
  assert.equal(out.same, true, label)
}

/** Asserts fs answered, with one READFILE_UTF8_NO_NATIVE warning of `reason` whose text names each of `names`. */
function assertFallback(out, reason, names, label) {
  assert.equal(out.engine, 'fs', label)
  assert.equal(out.same, true, label)
  assert.equal(out.warnings.length, 1, `${label}: ${JSON.stringify(out.warnings)}`)
  const [w] = out.warnings
  assert.equal(w.code, 'READFILE_UTF8_NO_NATIVE', label)
  assert.equal(w.reason, reason, label)
  for (const name of names) assert.ok(w.message.includes(name), `${label}: the warning names ${name}: ${w.message}`)
}

test(`this Linux's libc picks the package: ${LIBC} (from Node's report), not ${OTHER_LIBC}`, onLinuxX64, () => {
  assert.ok(BINARY, 'a local build of the addon (npm test builds it first)')
  const home = project({ [`linux-x64-${LIBC}`]: { working: true }, [`linux-x64-${OTHER_LIBC}`]: { working: false } })
  assertNative(run(home), 'as this process is')
  // Where /usr/bin/ldd is missing (distroless images), Node's report still tells the libc.
  assertNative(run(home, { args: pretend(home, { ldd: 'missing' }) }), 'without /usr/bin/ldd')
})

test("a Linux whose ldd is musl's asks for the -musl package first", onLinuxX64, () => {
  const home = project({ 'linux-x64-musl': { working: true }, 'linux-x64-gnu': { working: false } })
  assertNative(run(home, { args: pretend(home, { ldd: 'musl' }) }), 'musl')
  // Only the -gnu package there: the warning names the -musl package it asked for.
  const gnuOnly = project({ 'linux-x64-gnu': { working: true } })
  assertFallback(run(gnuOnly, { args: pretend(gnuOnly, { ldd: 'musl' }) }), 'not-installed', ['readfile-utf8-linux-x64-musl'], 'musl, -gnu installed')
})

test('arm64 asks for the arm64 package of its libc; not installed: fs answers and the warning names it', onLinuxX64, () => {
  const home = project({ [`linux-x64-${LIBC}`]: { working: true } })
  assertFallback(run(home, { args: pretend(home, { arch: 'arm64' }) }), 'not-installed', [`readfile-utf8-linux-arm64-${LIBC}`], 'arm64')
})

test('a platform package of another version, even one that would load, is not loaded: fs answers, the warning names both versions', onLinuxX64, () => {
  const home = project({ [`linux-x64-${LIBC}`]: { working: true, v: '0.0.1' } })
  assertFallback(run(home), 'load-failed', [`readfile-utf8-linux-x64-${LIBC}`, '0.0.1', version], 'another version')
})

test('a local build in the package root is preferred to the platform package', onLinuxX64, () => {
  const home = project({ [`linux-x64-${LIBC}`]: { working: false } })
  fs.copyFileSync(BINARY, path.join(home, 'node_modules', 'readfile-utf8', `readfile-utf8.linux-x64-${LIBC}.node`))
  assertNative(run(home), 'a local build and a broken platform package')
})

/**
 * A CommonJS bundle of the package at `file`, as esbuild makes one: every
 * module of lib/, index.js and package.json in one file, whose __filename
 * and __dirname are the bundle's own; other requires are left to Node.
 */
function bundle(file) {
  const modules = ['index.js', 'package.json', ...fs.readdirSync(path.join(ROOT, 'lib')).map((f) => `lib/${f}`)]
  const factories = modules.map((m) => {
    const source = fs.readFileSync(path.join(ROOT, m), 'utf8')
    const body = m.endsWith('.json') ? `module.exports = ${source}` : source
    return `${JSON.stringify(m)}: function (module, exports, require) {\n${body}\n}`
  })
  fs.mkdirSync(path.dirname(file), { recursive: true })
  fs.writeFileSync(
    file,
    `'use strict'
const path = require('node:path')
const factories = {\n${factories.join(',\n')}\n}
const cache = {}
function load(name) {
  if (cache[name]) return cache[name].exports
  const module = (cache[name] = { exports: {} })
  const from = path.posix.dirname(name)
  const local = (request) => {
    if (!request.startsWith('.')) return require(request)
    let target = path.posix.normalize(path.posix.join(from, request))
    if (!factories[target]) target += '.js'
    return load(target)
  }
  local.resolve = require.resolve
  factories[name](module, module.exports, local)
  return module.exports
}
module.exports = load('index.js')
`,
  )
  return file
}

test('bundled: the .node beside the bundle is loaded, not one in the folder above; without it, the warning names READFILE_UTF8_NATIVE_LIBRARY_PATH, which then loads it', onLinuxX64, () => {
  const home = scratch('choice-bundle')
  const file = bundle(path.join(home, 'dist', 'app.js'))
  const binary = `readfile-utf8.linux-x64-${LIBC}.node`
  // One folder up only: a bundle does not look there.
  fs.copyFileSync(BINARY, path.join(home, binary))
  const env = { LIB: file }
  assertFallback(run(home, { env }), 'unresolvable', ['READFILE_UTF8_NATIVE_LIBRARY_PATH', binary], 'no .node beside the bundle')
  assertNative(run(home, { env: { ...env, READFILE_UTF8_NATIVE_LIBRARY_PATH: path.join(home, binary) } }), 'named by the path variable')
  fs.copyFileSync(BINARY, path.join(home, 'dist', binary))
  assertNative(run(home, { env }), 'the .node beside the bundle')
})
