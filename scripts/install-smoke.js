'use strict'
// Run inside a project where readfile-utf8 was installed as users install it
// (scripts/install-check.sh):
//
//   node install-smoke.js <engine> [check…]
//
// <engine>: what engine() must say ('simdutf' with the platform package, 'fs'
// for the fallback). Each check prints `ok <check>` or `FAIL <check>: why`
// (details on stderr), and the run goes on; it exits 1 if any failed.
//   require       require('readfile-utf8'): strings === fs's for text of every
//                 kind, both memory modes, async reads, fs's errors field by field
//   import        import('readfile-utf8'): the same functions
//   register-cjs  node -r readfile-utf8/register: fs.readFileSync is ours, reads
//                 === fs, and a package required afterwards loads through it
//   register-esm  node --import readfile-utf8/register: the same from ESM, with
//                 node:fs's named export patched and an ESM module imported
//   fixture-paths the direct API on the files of the fixture package (inside
//                 Yarn PnP's zip archives there), === fs
// The fixture package, readfile-utf8-smoke-fixture, is published to the local
// registry beside ours; its text is FIXTURE_TEXT.
const assert = require('node:assert/strict')
const { spawnSync } = require('node:child_process')
const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')

const FIXTURE = 'readfile-utf8-smoke-fixture'
const FIXTURE_TEXT = 'fixture: é 中 😀'
const [expectedEngine, ...asked] = process.argv.slice(2)
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'readfile-utf8-smoke-'))
process.on('exit', () => fs.rmSync(dir, { recursive: true, force: true }))

const texts = {
  empty: Buffer.alloc(0),
  ascii: Buffer.from('const x = 1\n'.repeat(20000)),
  latin1: Buffer.from('café crème ÿ\n'.repeat(20000)),
  mixed: Buffer.from('naïve 中文 😀 text\n'.repeat(20000)),
  bom: Buffer.from('\ufeffwith a BOM'),
  invalid: Buffer.concat([Buffer.from('ok '), Buffer.from([0xc3, 0x28, 0xf0, 0x9f, 0x98, 0xe0, 0x80, 0xff]), Buffer.from(' end')]),
  truncated: Buffer.from([0x61, 0xe4, 0xb8]),
}
const files = Object.entries(texts).map(([name, bytes]) => {
  const file = path.join(dir, `${name}.txt`)
  fs.writeFileSync(file, bytes)
  return file
})
const missing = path.join(dir, 'missing.txt')
const expected = () => files.map((f) => fs.readFileSync(f, 'utf8'))

/** The error's own fields fs sets, for a field-by-field comparison. */
function fields(fn) {
  try {
    fn()
  } catch (err) {
    return { message: err.message, code: err.code, errno: err.errno, syscall: err.syscall, path: err.path }
  }
  assert.fail('expected a throw')
}

async function checkRequire() {
  const lib = require('readfile-utf8')
  assert.equal(lib.engine(), expectedEngine)
  for (const file of files) {
    const want = fs.readFileSync(file, 'utf8')
    assert.equal(lib.readFileUtf8(file), want, file)
    assert.equal(lib.readFileSync(file, 'utf8'), want, file)
    assert.equal(lib.decodeUtf8(fs.readFileSync(file)), want, file)
    assert.equal(await lib.readFileUtf8Async(file), await fs.promises.readFile(file, 'utf8'), file)
  }
  assert.deepEqual(lib.readFilesUtf8(files), expected())
  assert.equal(lib.setMemoryMode('lean'), 'fast', 'fast is the default')
  for (const file of files) assert.equal(lib.readFileUtf8(file), fs.readFileSync(file, 'utf8'), `lean: ${file}`)
  assert.equal(lib.setMemoryMode('fast'), 'lean')
  assert.deepEqual(fields(() => lib.readFileUtf8(missing)), fields(() => fs.readFileSync(missing, 'utf8')))
  assert.deepEqual(fields(() => lib.readFileUtf8(dir)), fields(() => fs.readFileSync(dir, 'utf8')))
}

async function checkImport() {
  const lib = await import('readfile-utf8')
  assert.equal(lib.engine(), expectedEngine)
  assert.equal(lib.readFileUtf8, require('readfile-utf8').readFileUtf8)
  for (const file of files) assert.equal(lib.readFileUtf8(file), fs.readFileSync(file, 'utf8'), file)
}

// The children run from files in the project, so that they resolve packages
// as its own code does (and, under Yarn PnP, through its loader).
const CJS_CHILD = `'use strict'
const fs = require('node:fs')
if (!require('readfile-utf8/register').isRegistered()) throw new Error('fs.readFileSync is not patched')
const fixture = require(${JSON.stringify(FIXTURE)})
if (fixture.text !== ${JSON.stringify(FIXTURE_TEXT)}) throw new Error('the fixture read wrong: ' + fixture.text)
const files = JSON.parse(process.argv[2])
process.stdout.write(JSON.stringify(files.map((f) => fs.readFileSync(f, 'utf8'))))
`
const ESM_CHILD = `import fs, { readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { isRegistered } from 'readfile-utf8/register'
if (!isRegistered() || readFileSync !== fs.readFileSync) throw new Error('node:fs is not patched')
const { text } = await import(${JSON.stringify(`${FIXTURE}/esm.mjs`)})
const fixture = createRequire(import.meta.url)(${JSON.stringify(FIXTURE)})
if (text !== ${JSON.stringify(FIXTURE_TEXT)} || fixture.text !== text) throw new Error('the fixture read wrong: ' + text)
const files = JSON.parse(process.argv[2])
process.stdout.write(JSON.stringify(files.map((f) => readFileSync(f, 'utf8'))))
`

function checkRegister(flag, name, source) {
  const child = path.join(process.cwd(), name)
  fs.writeFileSync(child, source)
  try {
    const r = spawnSync(process.execPath, [flag, 'readfile-utf8/register', child, JSON.stringify(files)], {
      encoding: 'utf8',
      maxBuffer: 64 << 20,
    })
    assert.equal(r.status, 0, r.stderr.trim().split('\n').slice(0, 12).join('\n'))
    assert.deepEqual(JSON.parse(r.stdout), expected())
  } finally {
    fs.rmSync(child, { force: true })
  }
}

async function checkFixturePaths() {
  const lib = require('readfile-utf8')
  const fixtureFiles = ['data.json', 'index.js', 'esm.mjs'].map((f) => require.resolve(`${FIXTURE}/${f}`))
  const want = fixtureFiles.map((f) => fs.readFileSync(f, 'utf8'))
  assert.ok(want[0].includes(FIXTURE_TEXT))
  assert.deepEqual(
    fixtureFiles.map((f) => lib.readFileUtf8(f)),
    want,
  )
  assert.deepEqual(lib.readFilesUtf8(fixtureFiles), want)
  assert.deepEqual(await Promise.all(fixtureFiles.map((f) => lib.readFileUtf8Async(f))), want)
}

const CHECKS = {
  require: checkRequire,
  import: checkImport,
  'register-cjs': () => checkRegister('-r', 'smoke-child.cjs', CJS_CHILD),
  'register-esm': () => checkRegister('--import', 'smoke-child.mjs', ESM_CHILD),
  'fixture-paths': checkFixturePaths,
}

async function main() {
  const names = asked.length > 0 ? asked : ['require', 'import', 'register-cjs', 'register-esm']
  let failed = 0
  for (const name of names) {
    if (!CHECKS[name]) throw new Error(`install-smoke: unknown check ${name}`)
    try {
      await CHECKS[name]()
      console.log(`ok ${name}`)
    } catch (err) {
      failed++
      console.log(`FAIL ${name}: ${String(err?.message ?? err).split('\n')[0].slice(0, 200)}`)
      console.error(`--- ${name} (${process.version}):\n${err?.stack ?? err}`)
    }
  }
  process.exitCode = failed > 0 ? 1 : 0
}

main()
