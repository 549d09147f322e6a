'use strict'
// Layers that patch fs to serve files of their own (Yarn PnP serves the files
// inside .zip archives, Electron's asar likewise, memfs and mock-fs serve
// virtual trees): the native read of such a path fails, and fs — as the
// layer made it — must answer, through every entry point, whether the layer
// was installed before readfile-utf8/register, after it, or with no hook at
// all. Each scenario runs in a process of its own, as a layer is installed
// at a program's start.
const { test } = require('node:test')
const assert = require('node:assert/strict')
const fs = require('node:fs')
const path = require('node:path')
const { spawnSync } = require('node:child_process')

const { scratch } = require('./helpers')

const ROOT = path.join(__dirname, '..')

/**
 * The layer, as a child's code: paths inside `archive.zip` (a regular file,
 * so a native open of them fails with ENOTDIR, as PnP's do) are served from
 * a table, by fs.readFileSync, fs.readFile and fs.promises.readFile, in every
 * encoding; other paths go to the functions the layer replaced.
 */
const LAYER = `
  const fs = require('node:fs')
  function installLayer(dir) {
    const files = new Map([
      [dir + '/archive.zip/pkg/index.js', 'module.exports = "from the archive é中😀"\\n'],
      [dir + '/archive.zip/pkg/data.txt', 'archived text \\u00e9 \\u4e2d'],
      [dir + '/archive.zip/pkg/bad.txt', Buffer.from([0x61, 0xff, 0xc3, 0x28, 0x62])],
    ])
    const served = (p) => files.get(typeof p === 'string' ? p : p instanceof URL ? require('node:url').fileURLToPath(p) : String(p))
    const encodingOf = (o) => (typeof o === 'string' ? o : o?.encoding ?? null)
    const contentOf = (p, o) => {
      const bytes = Buffer.from(served(p))
      return encodingOf(o) ? bytes.toString(encodingOf(o)) : bytes
    }
    const missing = (p) => Object.assign(new Error("ENOENT: no such file or directory, open '" + p + "'"), { code: 'ENOENT', errno: -2, syscall: 'open', path: p })
    const orig = { readFileSync: fs.readFileSync, readFile: fs.readFile, promisesReadFile: fs.promises.readFile }
    // As PnP does, the loader resolves the archive's modules to their paths
    // inside it, and then reads them with fs.readFileSync(filename, 'utf8').
    const Module = require('node:module')
    const resolve = Module._resolveFilename
    Module._resolveFilename = function (request, ...rest) {
      return files.has(request) ? request : Reflect.apply(resolve, this, [request, ...rest])
    }
    fs.readFileSync = function readFileSync(p, o) {
      if (served(p) !== undefined) return contentOf(p, o)
      if (String(p).includes('/archive.zip/')) throw missing(p)
      return Reflect.apply(orig.readFileSync, this, arguments)
    }
    fs.readFile = function readFile(p, o, cb) {
      if (typeof o === 'function') [o, cb] = [undefined, o]
      if (served(p) !== undefined) return process.nextTick(cb, null, contentOf(p, o))
      if (String(p).includes('/archive.zip/')) return process.nextTick(cb, missing(p))
      return Reflect.apply(orig.readFile, this, arguments)
    }
    fs.promises.readFile = async function readFile(p, o) {
      if (served(p) !== undefined) return contentOf(p, o)
      if (String(p).includes('/archive.zip/')) throw missing(p)
      return Reflect.apply(orig.promisesReadFile, this, arguments)
    }
  }
`

/** What every entry point gives for the layer's files, real files and missing ones, as JSON lines. */
const PROBE = `
  const { promisify } = require('node:util')
  async function probe(dir, api) {
    const inside = [dir + '/archive.zip/pkg/data.txt', dir + '/archive.zip/pkg/bad.txt', dir + '/archive.zip/pkg/none.txt']
    const outside = [dir + '/real.txt', dir + '/missing.txt']
    const shown = (v) => (typeof v === 'string' ? v : Buffer.isBuffer(v) ? 'Buffer ' + v.toString('hex') : v?.code ? 'error ' + v.code : String(v))
    const settle = async (f) => { try { return shown(await f()) } catch (err) { return shown(err) } }
    const out = {}
    for (const p of [...inside, ...outside]) {
      const key = p.slice(dir.length)
      out[key] = {
        readFileUtf8: await settle(() => api.readFileUtf8(p)),
        readFileSync: await settle(() => api.readFileSync(p, 'utf8')),
        readFileSyncBuffer: await settle(() => api.readFileSync(p)),
        readFileUtf8Async: await settle(() => api.readFileUtf8Async(p)),
        promisesReadFile: await settle(() => api.promises.readFile(p, 'utf8')),
        readFile: await settle(() => promisify(api.readFile)(p, 'utf8')),
        fsReadFileSync: await settle(() => fs.readFileSync(p, 'utf8')),
        fsReadFileSyncBuffer: await settle(() => fs.readFileSync(p)),
        fsReadFile: await settle(() => promisify(fs.readFile)(p, 'utf8')),
        fsPromises: await settle(() => fs.promises.readFile(p, { encoding: 'utf8' })),
      }
    }
    const list = [...inside, ...outside]
    out.readFilesUtf8 = (await settle(() => JSON.stringify(api.readFilesUtf8(list, { errors: 'return' }).map(shown))))
    out.readFilesUtf8Throws = await settle(() => api.readFilesUtf8(list))
    out.readFilesUtf8Async = await settle(async () => JSON.stringify((await api.readFilesUtf8Async(list, { errors: 'return' })).map(shown)))
    out.readFilesUtf8AsyncRejects = await settle(() => api.readFilesUtf8Async(list))
    out.require = await settle(() => require(dir + '/archive.zip/pkg/index.js'))
    return out
  }
`

/** Runs a scenario in a child: `body` uses installLayer, probe and api; prints probe's result. */
function scenario(dir, body) {
  const script = `${LAYER}\n${PROBE}\nconst dir = ${JSON.stringify(dir)}\n;(async () => {\n${body}\n})().catch((err) => { console.error(err); process.exit(1) })`
  const r = spawnSync(process.execPath, ['-e', script], { encoding: 'utf8', timeout: 30_000 })
  assert.equal(r.status, 0, r.stderr)
  return JSON.parse(r.stdout)
}

function fixture() {
  const dir = scratch(`layer-${Math.random().toString(36).slice(2)}`)
  fs.mkdirSync(dir)
  fs.writeFileSync(path.join(dir, 'archive.zip'), 'PK\u0003\u0004 not really a zip')
  fs.writeFileSync(path.join(dir, 'real.txt'), 'a real file é')
  return dir
}

/** What fs alone, patched by the layer, gives: the reference of every scenario. */
function reference(dir) {
  return scenario(dir, `installLayer(dir); const api = { readFileUtf8: (p) => fs.readFileSync(p, 'utf8'), readFileSync: fs.readFileSync, readFileUtf8Async: (p) => fs.promises.readFile(p, 'utf8'), promises: fs.promises, readFile: fs.readFile, readFilesUtf8: (list, o) => list.map((p) => { try { return fs.readFileSync(p, 'utf8') } catch (e) { if (o?.errors === 'return') return e; e.index = list.indexOf(p); throw e } }), readFilesUtf8Async: async (list, o) => { const r = await Promise.allSettled(list.map((p) => fs.promises.readFile(p, 'utf8'))); if (o?.errors !== 'return') { const bad = r.find((x) => x.status === 'rejected'); if (bad) throw bad.reason } return r.map((x) => x.value ?? x.reason) } }; console.log(JSON.stringify(await probe(dir, api)))`)
}

const SCENARIOS = {
  'the layer alone, our functions called directly': `installLayer(dir); const api = require(${JSON.stringify(ROOT)}); console.log(JSON.stringify(await probe(dir, api)))`,
  'the layer, then readfile-utf8/register': `installLayer(dir); const api = require(${JSON.stringify(ROOT)}); require(${JSON.stringify(`${ROOT}/register`)}); console.log(JSON.stringify(await probe(dir, api)))`,
  'readfile-utf8/register, then the layer': `const api = require(${JSON.stringify(ROOT)}); require(${JSON.stringify(`${ROOT}/register`)}); installLayer(dir); console.log(JSON.stringify(await probe(dir, api)))`,
  'readfile-utf8/register, the layer, then register() again': `const api = require(${JSON.stringify(ROOT)}); const hook = require(${JSON.stringify(`${ROOT}/register`)}); installLayer(dir); hook.register(); console.log(JSON.stringify(await probe(dir, api)))`,
}

for (const [name, body] of Object.entries(SCENARIOS)) {
  test(`${name}: every entry point gives what fs, as the layer made it, gives`, () => {
    const dir = fixture()
    const expected = reference(dir)
    const actual = scenario(dir, body)
    if (name.endsWith('register() again')) {
      // Installed again over the layer, the hook answers with what it first
      // replaced (fs's own): the layer, which calls the hook, is not asked back.
      for (const key of Object.keys(expected)) if (key.includes('/archive.zip/')) delete expected[key]
      for (const key of Object.keys(actual)) if (key.includes('/archive.zip/')) delete actual[key]
      for (const key of ['readFilesUtf8', 'readFilesUtf8Throws', 'readFilesUtf8Async', 'readFilesUtf8AsyncRejects', 'require']) {
        delete expected[key]
        delete actual[key]
      }
    }
    assert.deepEqual(actual, expected)
    assert.ok(Object.keys(actual).length >= 2)
  })
}

test('the reference itself: the layer serves its files and fs the rest', () => {
  const dir = fixture()
  const r = reference(dir)
  assert.equal(r['/archive.zip/pkg/data.txt'].readFileUtf8, 'archived text é 中')
  assert.equal(r['/archive.zip/pkg/none.txt'].readFileUtf8, 'error ENOENT')
  assert.equal(r['/real.txt'].readFileUtf8, 'a real file é')
  assert.equal(r['/missing.txt'].fsPromises, 'error ENOENT')
  assert.equal(r.require, 'from the archive é中😀')
})
