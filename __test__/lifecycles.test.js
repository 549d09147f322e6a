'use strict'
// The public API's lifecycles, from the README: readfile-utf8/register
// replaces fs.readFileSync, fs.readFile and fs.promises.readFile (and
// node:fs's named ESM exports); every call it does not serve reaches the
// function it replaced, untouched (fs's own, or a layer's that patched fs
// first); `unregister()` restores the originals, `register()` installs them
// again, `isRegistered()` tells — in any order and number. And the drop-ins
// have "exactly fs's signature": a user may assign them onto fs by hand,
// without the hook; fs as it stands then holds ours, and every call fs must
// answer still gets fs's own result or error (no recursion).
// Each sequence runs in a child process of its own, as a program would.
const { test } = require('node:test')
const assert = require('node:assert/strict')
const fs = require('node:fs')
const path = require('node:path')
const { spawnSync } = require('node:child_process')
const { pathToFileURL } = require('node:url')

const { scratch } = require('./helpers')

const ROOT = path.join(__dirname, '..')

function fixture(name) {
  const dir = scratch(name)
  fs.mkdirSync(dir)
  fs.writeFileSync(path.join(dir, 'text.txt'), Buffer.from('héllo wörld 中 😀 \xff end', 'latin1'))
  fs.writeFileSync(path.join(dir, 'archive.zip'), 'not a zip')
  return dir
}

/** Runs `body` (CommonJS, or ESM with `esm`) in a child with `dir`, ROOT and the probes below; returns what it prints. */
function child(dir, body, { esm = false, args = [] } = {}) {
  const file = path.join(dir, esm ? 'app.mjs' : 'app.cjs')
  const head = esm
    ? `import { createRequire } from 'node:module'\nconst require = createRequire(import.meta.url)\n`
    : ''
  fs.writeFileSync(file, `${head}const dir = ${JSON.stringify(dir)}\nconst ROOT = ${JSON.stringify(ROOT)}\n${PROBES}\n${body}`)
  const r = spawnSync(process.execPath, [...args, file], { cwd: dir, encoding: 'utf8', timeout: 60_000 })
  assert.equal(r.signal, null, r.stderr)
  assert.equal(r.status, 0, r.stderr)
  return JSON.parse(r.stdout)
}

// In the child: what a set of fs calls give (values or error fields), through
// `read` — the calls fs must answer (other encodings, fds, bad arguments,
// missing files, a layer's files) and the UTF-8 reads ours serve.
const PROBES = `
const fs = require('node:fs')
const { promisify } = require('node:util')
const shown = (v) => typeof v === 'string' ? 'string ' + v : Buffer.isBuffer(v) ? 'Buffer ' + v.toString('hex') : String(v)
const fields = (e) => e instanceof Error ? ['error', e.name, e.code, e.errno, e.syscall, e.path, e.message].join('|') : shown(e)
const settle = async (f) => { try { return shown(await f()) } catch (e) { return fields(e) } }
const CALLS = [
  ['text.txt', 'utf8'], ['text.txt', undefined], ['text.txt', 'latin1'], ['text.txt', { encoding: 'hex' }],
  ['text.txt', { encoding: 'utf8', flag: 'r' }], ['missing.txt', 'utf8'], ['missing.txt', undefined], ['.', 'utf8'],
  ['archive.zip/pkg/data.txt', 'utf8'], ['archive.zip/pkg/none.txt', 'utf8'], ['nul\\0byte', 'utf8'], [42.5, 'utf8'], ['text.txt', 'nope'],
]
/** What fs.readFileSync, fs.readFile and fs.promises.readFile give for each call, as they stand now. */
async function probe() {
  const out = {}
  for (const [name, options] of CALLS) {
    const p = typeof name === 'string' ? require('node:path').join(dir, name) : name
    const key = JSON.stringify([name, options ?? null])
    const fd = fs.openSync(require('node:path').join(dir, 'text.txt'), 'r')
    out[key] = [
      await settle(() => fs.readFileSync(p, options)),
      await settle(() => promisify(fs.readFile)(p, options)),
      await settle(() => fs.promises.readFile(p, options)),
      await settle(() => fs.readFileSync(fd, options)),
    ]
    fs.closeSync(fd)
  }
  return out
}
/** A layer as Yarn PnP is one: it serves dir/archive.zip/pkg/data.txt, and passes the rest to what it replaced. */
function installLayer() {
  const served = require('node:path').join(dir, 'archive.zip/pkg/data.txt')
  const text = Buffer.from('from the layer é中')
  const encodingOf = (o) => (typeof o === 'string' ? o : o?.encoding ?? null)
  const content = (o) => (encodingOf(o) ? text.toString(encodingOf(o)) : text)
  const orig = { readFileSync: fs.readFileSync, readFile: fs.readFile, promisesReadFile: fs.promises.readFile }
  fs.readFileSync = function readFileSync(p, o) {
    return p === served ? content(o) : Reflect.apply(orig.readFileSync, this, arguments)
  }
  fs.readFile = function readFile(p, o, cb) {
    if (p !== served) return Reflect.apply(orig.readFile, this, arguments)
    if (typeof o === 'function') [o, cb] = [undefined, o]
    process.nextTick(cb, null, content(o))
  }
  fs.promises.readFile = async function readFile(p, o) {
    return p === served ? content(o) : Reflect.apply(orig.promisesReadFile, this, arguments)
  }
  return [fs.readFileSync, fs.readFile, fs.promises.readFile]
}
const installed = () => [fs.readFileSync, fs.readFile, fs.promises.readFile]
const same = (a, b) => a.every((f, i) => f === b[i])
`

test('register() and unregister() in every order and number (CommonJS): unregister restores what the last first register() replaced, isRegistered() tells', () => {
  const dir = fixture('lifecycle-cjs')
  const out = child(
    dir,
    `;(async () => {
      const own = installed()
      const reference = await probe()
      const hook = require(ROOT + '/register')
      const steps = []
      const step = async (name) => steps.push([name, hook.isRegistered(), same(installed(), own), JSON.stringify(await probe()) === JSON.stringify(reference)])
      await step('loaded')
      hook.register(); await step('register again')
      hook.unregister(); await step('unregister')
      hook.unregister(); await step('unregister again')
      hook.register(); hook.register(); hook.register(); await step('register thrice')
      hook.unregister(); await step('unregister once')
      // A layer installed while nothing is registered: register() now replaces the layer's.
      const layer = installLayer()
      const layered = await probe()
      hook.register(); await step('register over the layer')
      const servedWhileRegistered = JSON.stringify(await probe()) === JSON.stringify(layered)
      hook.unregister()
      const layerBack = same(installed(), layer)
      hook.register(); hook.unregister(); hook.unregister()
      console.log(JSON.stringify({ steps, servedWhileRegistered, layerBack, layerAtEnd: same(installed(), layer) }))
    })()`,
  )
  assert.deepEqual(out.steps, [
    ['loaded', true, false, true],
    ['register again', true, false, true],
    ['unregister', false, true, true],
    ['unregister again', false, true, true],
    ['register thrice', true, false, true],
    ['unregister once', false, true, true],
    ['register over the layer', true, false, false],
  ])
  assert.equal(out.servedWhileRegistered, true, "registered over the layer, every call gives the layer's answer")
  assert.equal(out.layerBack, true, "unregister() put the layer's functions back")
  assert.equal(out.layerAtEnd, true)
})

test("ESM: --import readfile-utf8/register, then unregister() and register(): node:fs named exports follow (Node; not under Deno: README), calls give what fs gives", () => {
  const dir = fixture('lifecycle-esm')
  const out = child(
    dir,
    `import * as named from 'node:fs'
    import { readFile as promisesNamed } from 'node:fs/promises'
    import { register, unregister, isRegistered } from ${JSON.stringify(pathToFileURL(path.join(ROOT, 'register.mjs')).href)}
    const hooked = installed()
    const bound = () => named.readFileSync === fs.readFileSync && named.readFile === fs.readFile && promisesNamed === fs.promises.readFile
    const steps = [['loaded', isRegistered(), bound()]]
    const registered = JSON.stringify(await probe())
    unregister(); steps.push(['unregister', isRegistered(), bound(), !same(installed(), hooked)])
    const plain = JSON.stringify(await probe())
    register(); steps.push(['register', isRegistered(), bound(), same(installed(), hooked)])
    register(); unregister(); steps.push(['register, unregister', isRegistered(), bound(), !same(installed(), hooked)])
    console.log(JSON.stringify({ steps, sameAnswers: registered === plain && plain === JSON.stringify(await probe()) }))`,
    { esm: true, args: ['--import', pathToFileURL(path.join(ROOT, 'register.mjs')).href] },
  )
  // Under Deno the hook replaces the functions of the fs object only, not
  // node:fs's named exports (README); the README says nothing of Bun's (there
  // unregister() leaves them on the hooks): not compared.
  const named = process.versions.deno === undefined
  if (process.versions.bun !== undefined) for (const step of out.steps) step[2] = named
  assert.deepEqual(out.steps, [
    ['loaded', true, named],
    ['unregister', false, true, true],
    ['register', true, named, true],
    ['register, unregister', false, true, true],
  ])
  assert.equal(out.sameAnswers, true)
})

test("the drop-ins assigned onto fs by hand, without the hook: every call gives fs's own result or error; the hook registered over them, and removed, too", () => {
  const dir = fixture('lifecycle-by-hand')
  const out = child(
    dir,
    `;(async () => {
      // The layer first, as Yarn PnP installs itself before the program loads anything.
      installLayer()
      const api = require(ROOT)
      const reference = JSON.stringify(await probe())
      // As a user would: fs now holds ours, which must not call themselves back.
      fs.readFileSync = api.readFileSync
      fs.readFile = api.readFile
      fs.promises.readFile = api.promises.readFile
      const byHand = JSON.stringify(await probe())
      const direct = JSON.stringify(await settle(() => api.readFileUtf8(require('node:path').join(dir, 'missing.txt'))))
      const hook = require(ROOT + '/register')
      const hooked = JSON.stringify(await probe())
      hook.unregister()
      const restored = same(installed(), [api.readFileSync, api.readFile, api.promises.readFile])
      const after = JSON.stringify(await probe())
      console.log(JSON.stringify({ reference, byHand, hooked, after, restored, direct, layerServes: reference.includes('from the layer') }))
    })()`,
  )
  assert.equal(out.layerServes, true, 'the layer serves its file (the reference is meaningful)')
  const reference = JSON.parse(out.reference)
  assert.deepEqual(JSON.parse(out.byHand), reference, 'assigned by hand')
  assert.deepEqual(JSON.parse(out.hooked), reference, 'the hook over them')
  assert.equal(out.restored, true, 'unregister() puts back what fs held: the drop-ins')
  assert.deepEqual(JSON.parse(out.after), reference, 'after unregister()')
  assert.match(JSON.parse(out.direct), /^error\|Error\|ENOENT\|/)
})
