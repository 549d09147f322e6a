'use strict'
// readfile-utf8/register: under `-r` / `--import`, a real module tree (typescript)
// loads through our native read and runs; non-UTF-8 fs calls are unchanged;
// unregister() restores fs.
const { test } = require('node:test')
const assert = require('node:assert/strict')
const fs = require('node:fs')
const path = require('node:path')
const { spawnSync } = require('node:child_process')

const { scratch, installPackage } = require('./helpers')

const ROOT = path.join(__dirname, '..')
// A folder whose node_modules resolves `readfile-utf8` (us) and `typescript`.
const home = scratch('register-home')
const installed = installPackage(home, 'readfile-utf8', ROOT)
installPackage(home, 'typescript', path.join(ROOT, 'node_modules', 'typescript'))

function run(args, script, name) {
  const file = path.join(home, name)
  fs.writeFileSync(file, script)
  const r = spawnSync(process.execPath, [...args, file], { cwd: home, encoding: 'utf8' })
  assert.equal(r.status, 0, r.stderr)
  return JSON.parse(r.stdout)
}

// Counts the native sync reads from here on (the addon's exports are looked up per call).
const COUNTER = `
  const native = require(${JSON.stringify(path.join(installed, 'lib', 'native.js'))})
  const counts = { readPath: 0, files: [] }
  const original = native.readPath
  native.readPath = (...args) => (counts.readPath++, counts.files.push(args[0]), original(...args))
  const modulesBefore = new Set(Object.keys(require.cache))
`

test('node -r readfile-utf8/register: require(typescript) reads its modules natively, and it runs', () => {
  const out = run(['-r', 'readfile-utf8/register'], `${COUNTER}
    const fs = require('node:fs')
    const hook = require('readfile-utf8/register')
    const patched = hook.isRegistered() && [fs.readFile, fs.promises.readFile].every((f) => f.toString().includes('utf8Request(options)'))
    const ts = require('typescript')
    const js = ts.transpileModule('const x: number = 1; export default x', { compilerOptions: { module: ts.ModuleKind.CommonJS } }).outputText
    const loaded = Object.keys(require.cache).filter((m) => !modulesBefore.has(m))
    process.stdout.write(JSON.stringify({ patched, nativeReads: counts.readPath, js, loaded, files: counts.files }))`, 'cjs-app.js')
  assert.equal(out.patched, true)
  assert.match(out.js, /exports.default = x/)
  // Every module file the require loaded (typescript/lib/typescript.js) went through our native read.
  assert.ok(out.loaded.length >= 1)
  // (The native read gets the path as fs opens it: on Windows, path.toNamespacedPath's.)
  for (const m of out.loaded) {
    assert.ok(out.files.includes(path.toNamespacedPath(m)), `${m} read natively (native reads: ${out.files.join(', ')})`)
  }
})

test('a multi-file module tree: every required file is read natively', () => {
  const tree = path.join(home, 'node_modules', 'tree')
  fs.mkdirSync(tree, { recursive: true })
  for (let i = 0; i < 20; i++) fs.writeFileSync(path.join(tree, `m${i}.js`), `module.exports = ${i} + (${i < 19 ? `require('./m${i + 1}.js')` : 0}) // é 中 😀\n`)
  fs.writeFileSync(path.join(tree, 'data.json'), '{"name": "tré"}')
  const out = run(['-r', 'readfile-utf8/register'], `${COUNTER}
    const sum = require('tree/m0.js'), data = require('tree/data.json')
    process.stdout.write(JSON.stringify({ sum, name: data.name, nativeReads: counts.readPath }))`, 'tree-app.js')
  assert.equal(out.sum, 190)
  assert.equal(out.name, 'tré')
  assert.ok(out.nativeReads >= 21, `native reads: ${out.nativeReads}`)
})

test('node --import readfile-utf8/register: fs and node:fs named imports are patched; CJS requires are native', () => {
  const out = run(['--import', 'readfile-utf8/register'], `
    import fs, { readFileSync, readFile } from 'node:fs'
    import { readFile as promisesReadFile } from 'node:fs/promises'
    import { createRequire } from 'node:module'
    import { isRegistered, unregister } from 'readfile-utf8/register'
    const require = createRequire(import.meta.url)
    ${COUNTER}
    const ts = require('typescript')
    const ok = ts.transpileModule('let a: string = "x"', {}).outputText.includes('var a = "x"')
    // The hooks: ours (they share the drop-ins' code), in fs and in its named ESM exports.
    const isOurs = (f) => f.toString().includes('utf8Request(options)')
    const hooks = [fs.readFileSync, fs.readFile, fs.promises.readFile]
    const patched = hooks.every(isOurs) && readFileSync === hooks[0] && readFile === hooks[1] && promisesReadFile === hooks[2]
    const before = isRegistered()
    unregister()
    // The named imports are live bindings: after unregister() they are fs's own again.
    const restored = [fs.readFileSync, fs.readFile, fs.promises.readFile, readFileSync, readFile, promisesReadFile].every((f) => !isOurs(f)) && readFileSync === fs.readFileSync
    process.stdout.write(JSON.stringify({ ok, patched, before, after: isRegistered(), restored, nativeReads: counts.readPath }))`, 'esm-app.mjs')
  assert.deepEqual({ ...out, nativeReads: out.nativeReads > 0 }, { ok: true, patched: true, before: true, after: false, restored: true, nativeReads: true })
})

test('under register, every non-UTF-8 fs call behaves exactly as before; unregister restores the originals', () => {
  const file = scratch('register-data.bin')
  fs.writeFileSync(file, Buffer.from([0x68, 0xc3, 0xa9, 0xff, 0x00, 0x41]))
  const out = run([], `
    const fs = require('node:fs')
    const originals = [fs.readFileSync, fs.readFile, fs.promises.readFile]
    const calls = async () => {
      const p = ${JSON.stringify(file)}
      const r = {}
      const settle = async (f) => { try { const v = await f(); return Buffer.isBuffer(v) ? ['buf', v.toString('hex')] : ['val', v] } catch (e) { return ['err', e.code, e.message] } }
      for (const o of [undefined, null, {}, 'latin1', 'hex', 'base64', { encoding: 'ucs2' }, 'nope', 5, { flag: 'r' }]) {
        const k = JSON.stringify(o) ?? 'undefined'
        r['sync ' + k] = await settle(() => fs.readFileSync(p, o))
        r['promises ' + k] = await settle(() => fs.promises.readFile(p, o))
        r['cb ' + k] = await settle(() => new Promise((res, rej) => { try { (o === undefined ? fs.readFile(p, (e, d) => e ? rej(e) : res(d)) : fs.readFile(p, o, (e, d) => e ? rej(e) : res(d))) } catch (e) { rej(e) } }))
      }
      r['sync fd'] = await settle(() => { const fd = fs.openSync(p, 'r'); try { return fs.readFileSync(fd) } finally { fs.closeSync(fd) } })
      r['utf8'] = await settle(() => fs.readFileSync(p, 'utf8'))
      r['promises utf8'] = await settle(() => fs.promises.readFile(p, 'utf8'))
      return r
    }
    ;(async () => {
      const before = await calls()
      const reg = require('readfile-utf8/register')
      const during = await calls()
      const patched = fs.readFileSync !== originals[0]
      reg.unregister()
      const restored = fs.readFileSync === originals[0] && fs.readFile === originals[1] && fs.promises.readFile === originals[2]
      process.stdout.write(JSON.stringify({ before, during, patched, restored }))
    })()`, 'plain-app.js')
  assert.equal(out.patched, true)
  assert.equal(out.restored, true)
  assert.deepEqual(out.during, out.before)
})
