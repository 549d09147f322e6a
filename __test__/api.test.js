'use strict'
// The package surface: readFileSync as a one-for-one fs replacement, the ESM
// entry, and the TypeScript types.
const { test } = require('node:test')
const assert = require('node:assert/strict')
const fs = require('node:fs')
const path = require('node:path')
const { spawnSync } = require('node:child_process')

// These tests expect the default memory mode, here and in their children.
delete process.env.READFILE_UTF8_MEMORY_MODE
const api = require('..')
const { scratch, assertSameError, installPackage } = require('./helpers')

const file = scratch('api.txt')
fs.writeFileSync(file, Buffer.from([...Buffer.from('héllo wörld 中 😀 '), 0xff, 0x41]))

test('readFileSync hands every non-UTF-8 request to fs unchanged', () => {
  for (const options of [undefined, null, {}, { encoding: null }, { flag: 'r' }, 'latin1', 'base64', 'hex', 'utf16le', 'ascii', { encoding: 'binary' }]) {
    assert.deepEqual(api.readFileSync(file, options), fs.readFileSync(file, options), JSON.stringify(options))
  }
  assert.ok(Buffer.isBuffer(api.readFileSync(file)))
})

test('readFileSync serves UTF-8 requests with fs\'s exact string', () => {
  for (const options of ['utf8', 'utf-8', 'UTF-8', { encoding: 'utf8' }, { encoding: 'UTF8', flag: 'r' }]) {
    assert.equal(api.readFileSync(file, options), fs.readFileSync(file, options))
  }
})

test('readFileUtf8 defaults to UTF-8 and accepts every fs path form', async () => {
  const expected = fs.readFileSync(file, 'utf8')
  const fd = fs.openSync(file, 'r')
  try {
    assert.equal(api.readFileUtf8(fd), expected)
  } finally {
    fs.closeSync(fd)
  }
  assert.equal(api.readFileUtf8(file), expected)
  assert.equal(api.readFileUtf8(file, 'utf-8'), expected)
  assert.equal(api.readFileUtf8(file, { encoding: null }), expected)
  assert.equal(api.readFileUtf8(file, {}), expected)
  // fs's defaults for options: null, or a function in their place.
  assert.equal(api.readFileUtf8(file, null), expected)
  assert.equal(api.readFileUtf8(file, () => {}), expected)
  assert.equal(api.readFileUtf8(Buffer.from(file)), expected)
  assert.equal(api.readFileUtf8(require('node:url').pathToFileURL(file)), expected)
  assert.equal(api.readFileUtf8(path.relative(process.cwd(), file)), expected)
  assert.equal(await api.readFileUtf8Async(file, null), expected)
})

test('paths of every length around the native stack buffer (1024 bytes) read as fs, non-ASCII included', () => {
  // Directories of 200-byte names (2-byte 'é' included), then a file name that
  // brings the whole path to each length, ending in a 1- to 4-byte character that
  // may straddle the buffer's end (Node then stops short of it).
  const base = scratch('long-paths')
  let dir = base
  while (Buffer.byteLength(dir) < 800) dir = path.join(dir, 'é'.repeat(50) + 'd'.repeat(100))
  fs.mkdirSync(dir, { recursive: true })
  let checked = 0
  for (const total of [1021, 1022, 1023, 1024, 1025, 1026, 1500]) {
    let dirOf = dir
    while (total - Buffer.byteLength(dirOf) - 1 > 250) dirOf = path.join(dirOf, 'z'.repeat(200))
    fs.mkdirSync(dirOf, { recursive: true })
    for (const tail of ['f', 'é', '€', '😀']) {
      const nameBytes = total - Buffer.byteLength(dirOf) - 1 // minus the '/'
      const file = path.join(dirOf, 'n'.repeat(nameBytes - Buffer.byteLength(tail)) + tail)
      fs.writeFileSync(file, `long path ${total} ${tail} ✓`)
      assert.equal(Buffer.byteLength(file), total, file)
      assert.equal(api.readFileUtf8(file), fs.readFileSync(file, 'utf8'), `${total} bytes`)
      checked++
    }
  }
  assert.equal(checked, 28)
})

test('paths with lone surrogates name the same file as in fs (and the same error when missing)', async () => {
  // The path string becomes UTF-8 in native code; a lone surrogate must turn
  // into U+FFFD there exactly as fs's conversion does.
  const dir = scratch('surrogate-paths')
  fs.mkdirSync(dir, { recursive: true })
  for (const name of ['a\uD800b', 'x\uDFFF', '\u00e9\uD83D', '\uD83D\uDE00ok']) {
    const file = path.join(dir, name)
    fs.writeFileSync(file, `content of ${JSON.stringify(name)}`)
    assert.equal(api.readFileUtf8(file), fs.readFileSync(file, 'utf8'), JSON.stringify(name))
    const missing = path.join(dir, `missing-${name}`)
    assertSameError(() => api.readFileUtf8(missing), () => fs.readFileSync(missing, 'utf8'), JSON.stringify(name))
    const fields = ({ message, path, code, errno, syscall }) => ({ message, path, code, errno, syscall })
    const expected = fields(await fs.promises.readFile(missing, 'utf8').catch((e) => e))
    assert.deepEqual(fields(await api.readFileUtf8Async(missing).catch((e) => e)), expected)
    assert.deepEqual(fields(await api.promises.readFile(missing, 'utf8').catch((e) => e)), expected)
  }
})

test('the native readPath, called with bad arguments, throws a TypeError and never crashes', () => {
  const native = require('../lib/native')
  for (const args of [[], [file], [1, 0], [null, 0], [{}, 0], [file, 'r'], [Symbol('s'), 0]]) {
    assert.throws(() => native.readPath(...args), { name: 'TypeError', message: /^readPath\(path, flags\): / }, String(args.length))
  }
  assert.equal(native.readPath(file, 0), fs.readFileSync(file, 'utf8'))
  // A path with a NUL inside is fs's to reject.
  assert.equal(native.readPath(`${file}\0x`, 0), require('../lib/errors').FS_ANSWERS)
})

test('the shipped addon leaves out the benchmark-only natives', () => {
  const native = require('../lib/native')
  assert.equal(typeof native.readPath, 'function')
  assert.equal(native.readPathLength, undefined)
  assert.equal(native.readFilesLength, undefined)
})

test('the ESM entry exports the same functions', () => {
  const script = `import { readFileUtf8, readFileSync, engine } from 'readfile-utf8'
    import def from 'readfile-utf8'
    import { readFileSync as fsRead } from 'node:fs'
    const p = ${JSON.stringify(file)}
    if (readFileUtf8(p) !== fsRead(p, 'utf8') || readFileSync(p, 'utf8') !== fsRead(p, 'utf8')) process.exit(2)
    if (def.readFileUtf8 !== readFileUtf8 || typeof engine() !== 'string') process.exit(3)
    const m = await import('readfile-utf8')
    if (m.decodeUtf8(Buffer.from('é')) !== 'é' || (await m.readFileUtf8Async(p)) !== fsRead(p, 'utf8') || (await m.promises.readFile(p, 'utf8')) !== fsRead(p, 'utf8')) process.exit(4)
    if (m.setMemoryMode('lean') !== 'fast' || readFileUtf8(p) !== fsRead(p, 'utf8') || def.setMemoryMode('fast') !== 'lean') process.exit(5)
    console.log('esm ok')`
  // Resolve the package by name from a folder whose node_modules links to us.
  const home = scratch('esm-home')
  installPackage(home, 'readfile-utf8', path.join(__dirname, '..'))
  fs.writeFileSync(path.join(home, 'check.mjs'), script)
  const r = spawnSync(process.execPath, [path.join(home, 'check.mjs')], { encoding: 'utf8', cwd: home })
  assert.equal(r.status, 0, r.stderr)
  assert.equal(r.stdout.trim(), 'esm ok')
})

test('the ESM entry has a named export for every CommonJS export, and the same values', () => {
  const home = scratch('esm-names-home')
  installPackage(home, 'readfile-utf8', path.join(__dirname, '..'))
  for (const [entry, file] of [['readfile-utf8', 'index'], ['readfile-utf8/register', 'register']]) {
    fs.writeFileSync(
      path.join(home, 'names.mjs'),
      `import * as esm from '${entry}'
      import { createRequire } from 'node:module'
      const cjs = createRequire(import.meta.url)('${entry}')
      const names = (o) => Object.keys(o).filter((k) => k !== 'default').sort()
      const same = names(esm).every((k) => esm[k] === cjs[k]) && esm.default === cjs
      console.log(JSON.stringify({ esm: names(esm), cjs: names(cjs), same }))`,
    )
    const r = spawnSync(process.execPath, [path.join(home, 'names.mjs')], { encoding: 'utf8', cwd: home })
    assert.equal(r.status, 0, r.stderr)
    const { esm, cjs, same } = JSON.parse(r.stdout)
    assert.deepEqual(esm, cjs, `${file}.mjs exports what ${file}.js exports`)
    assert.ok(cjs.length >= 3 && same, entry)
  }
})

