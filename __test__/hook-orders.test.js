'use strict'
// readfile-utf8/register's register() and unregister() called in any order
// and number, and our drop-ins assigned onto fs by a caller without the hook:
// fs then holds ours, and "fs as it stands" must not call ours back. Each
// case runs in a child (fs's functions are the process's); every result and
// error is compared with fs's own, field by field.
const { test } = require('node:test')
const assert = require('node:assert/strict')
const fs = require('node:fs')
const path = require('node:path')
const { spawnSync } = require('node:child_process')

const { scratch } = require('./helpers')

const ROOT = path.join(__dirname, '..')
const FILE = scratch('hook-orders.txt')
const MISSING = scratch('hook-orders-missing.txt')
fs.writeFileSync(FILE, Buffer.concat([Buffer.from('é 中 😀 '), Buffer.from([0xff, 0x41])]))

// Shared by the children: fs's own functions, what each of ours gives as a
// comparable value, and a layer that serves one virtual file.
const PRELUDE = `
  const fs = require('node:fs')
  const own = { readFileSync: fs.readFileSync, readFile: fs.readFile, promisesReadFile: fs.promises.readFile }
  const lib = require(${JSON.stringify(ROOT)})
  // lib/register.js: the hook's functions, not registered yet (./register registers at load).
  const hook = require(${JSON.stringify(path.join(ROOT, 'lib', 'register.js'))})
  const FILE = ${JSON.stringify(FILE)}, MISSING = ${JSON.stringify(MISSING)}
  const shown = (v) => (typeof v === 'string' ? v : Buffer.isBuffer(v) ? 'Buffer ' + v.toString('hex') : [v.constructor.name, v.code, v.errno, v.syscall, v.path, v.message].join('|'))
  const settle = async (f) => { try { return shown(await f()) } catch (e) { return shown(e) } }
  const cb = (fn, ...args) => new Promise((resolve, reject) => fn(...args, (e, v) => (e ? reject(e) : resolve(v))))
  /** Every read of FILE and MISSING through fs and through ours. */
  async function reads() {
    const out = {}
    for (const p of [FILE, MISSING]) {
      const k = p === FILE ? 'file' : 'missing'
      out[k + ' fs.readFileSync utf8'] = await settle(() => fs.readFileSync(p, 'utf8'))
      out[k + ' fs.readFileSync'] = await settle(() => fs.readFileSync(p))
      out[k + ' fs.readFile utf8'] = await settle(() => cb(fs.readFile, p, 'utf8'))
      out[k + ' fs.promises.readFile utf8'] = await settle(() => fs.promises.readFile(p, 'utf8'))
      out[k + ' readFileUtf8'] = await settle(() => lib.readFileUtf8(p))
      out[k + ' readFileUtf8Async'] = await settle(() => lib.readFileUtf8Async(p))
      out[k + ' readFileSync'] = await settle(() => lib.readFileSync(p, 'utf8'))
      out[k + ' promises.readFile'] = await settle(() => lib.promises.readFile(p, 'utf8'))
      out[k + ' readFile'] = await settle(() => cb(lib.readFile, p, 'utf8'))
      out[k + ' readFilesUtf8'] = await settle(() => lib.readFilesUtf8([p])[0])
    }
    return out
  }
  /** A layer over fs as it stands: serves VIRTUAL, passes the rest on. */
  const VIRTUAL = '/virtual-layer/file.txt'
  function installLayer() {
    const below = { readFileSync: fs.readFileSync }
    fs.readFileSync = function readFileSync(p, o) {
      return p === VIRTUAL ? 'from the layer' : Reflect.apply(below.readFileSync, this, arguments)
    }
    return fs.readFileSync
  }
  const print = (v) => process.stdout.write(JSON.stringify(v))
`

function child(body) {
  const script = `${PRELUDE}\n;(async () => {\n${body}\n})().catch((e) => { console.error(e); process.exit(1) })`
  const r = spawnSync(process.execPath, ['-e', script], { encoding: 'utf8', timeout: 60_000 })
  assert.equal(r.status, 0, r.stderr)
  return JSON.parse(r.stdout)
}

/** What fs alone gives for every read (ours replaced by fs's own calls). */
const expected = child(`
  const api = {
    readFileUtf8: (p) => own.readFileSync(p, 'utf8'), readFileUtf8Async: (p) => own.promisesReadFile(p, 'utf8'),
    readFileSync: own.readFileSync, promises: { readFile: own.promisesReadFile }, readFile: own.readFile,
    readFilesUtf8: (list) => list.map((p) => own.readFileSync(p, 'utf8')),
  }
  Object.assign(lib, api)
  print(await reads())`)

test('the reference: fs reads the file and fails on the missing one', () => {
  assert.equal(expected['file readFileUtf8'], fs.readFileSync(FILE, 'utf8'))
  assert.match(expected['missing readFileUtf8'], /^Error\|ENOENT\|-\d+\|open\|/)
})

test('our drop-ins assigned onto fs by the caller, without the hook: every read is fs\'s, no recursion', () => {
  const out = child(`
    fs.readFileSync = lib.readFileSync
    fs.readFile = lib.readFile
    fs.promises.readFile = lib.promises.readFile
    print(await reads())`)
  assert.deepEqual(out, expected)
})

test('the hook registered over our drop-ins a caller assigned: fs\'s results; unregister() puts the caller\'s back', () => {
  const out = child(`
    fs.readFileSync = lib.readFileSync
    fs.readFile = lib.readFile
    fs.promises.readFile = lib.promises.readFile
    hook.register()
    const during = await reads()
    hook.unregister()
    print({ during, restored: fs.readFileSync === lib.readFileSync && fs.readFile === lib.readFile && fs.promises.readFile === lib.promises.readFile, after: await reads() })`)
  assert.deepEqual(out, { during: expected, restored: true, after: expected })
})

test('register() and unregister() in every order and number: fs\'s own functions come back, nothing throws', () => {
  const out = child(`
    const isOwn = () => fs.readFileSync === own.readFileSync && fs.readFile === own.readFile && fs.promises.readFile === own.promisesReadFile
    const steps = []
    const step = (name, fn) => { fn(); steps.push([name, hook.isRegistered(), isOwn()]) }
    step('unregister before any register', () => hook.unregister())
    step('register', () => hook.register())
    step('register again', () => hook.register())
    step('unregister', () => hook.unregister())
    step('unregister again', () => hook.unregister())
    step('register after unregister', () => hook.register())
    const during = await reads()
    step('unregister', () => hook.unregister())
    print({ steps, during, after: await reads() })`)
  assert.deepEqual(out.steps, [
    ['unregister before any register', false, true],
    ['register', true, false],
    ['register again', true, false],
    ['unregister', false, true],
    ['unregister again', false, true],
    ['register after unregister', true, false],
    ['unregister', false, true],
  ])
  assert.deepEqual(out.during, expected)
  assert.deepEqual(out.after, expected)
})

test('a layer installed between unregister() and register(): the hook answers with the layer, and unregister() puts it back', () => {
  const out = child(`
    hook.register()
    hook.unregister()
    const layer = installLayer()
    hook.register()
    const served = fs.readFileSync(VIRTUAL, 'utf8')
    const direct = lib.readFileUtf8(VIRTUAL)
    hook.unregister()
    print({ served, direct, restored: fs.readFileSync === layer })`)
  assert.deepEqual(out, { served: 'from the layer', direct: 'from the layer', restored: true })
})
