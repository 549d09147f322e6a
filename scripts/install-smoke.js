'use strict'
// Run inside a fresh project where readfile-utf8 was installed from its packed
// tarball: checks that it loads through require, import and
// `-r readfile-utf8/register`, with the engine asked for (argv[2]: 'simdutf' for
// the platform package, 'fs' for the fallback), and gives fs's strings and
// errors for text of every kind.
const assert = require('node:assert/strict')
const { spawnSync } = require('node:child_process')
const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')

const expectedEngine = process.argv[2]
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

/** The error's own fields fs sets, for a field-by-field comparison. */
function fields(fn) {
  try {
    fn()
  } catch (err) {
    return { message: err.message, code: err.code, errno: err.errno, syscall: err.syscall, path: err.path }
  }
  assert.fail('expected a throw')
}

function checkRequire() {
  const lib = require('readfile-utf8')
  assert.equal(lib.engine(), expectedEngine)
  for (const file of files) {
    const expected = fs.readFileSync(file, 'utf8')
    assert.equal(lib.readFileUtf8(file), expected, file)
    assert.equal(lib.readFileSync(file, 'utf8'), expected, file)
    assert.equal(lib.decodeUtf8(fs.readFileSync(file)), expected, file)
  }
  assert.equal(lib.setMemoryMode('fast'), 'lean')
  for (const file of files) assert.equal(lib.readFileUtf8(file), fs.readFileSync(file, 'utf8'), `fast: ${file}`)
  assert.equal(lib.setMemoryMode('lean'), 'fast')
  assert.deepEqual(fields(() => lib.readFileUtf8(missing)), fields(() => fs.readFileSync(missing, 'utf8')))
  assert.deepEqual(fields(() => lib.readFileUtf8(dir)), fields(() => fs.readFileSync(dir, 'utf8')))
  return Promise.all(
    files.map(async (file) => assert.equal(await lib.readFileUtf8Async(file), await fs.promises.readFile(file, 'utf8'))),
  )
}

async function checkImport() {
  const lib = await import('readfile-utf8')
  assert.equal(lib.engine(), expectedEngine)
  assert.equal(lib.setMemoryMode('lean'), 'lean')
  for (const file of files) assert.equal(lib.readFileUtf8(file), fs.readFileSync(file, 'utf8'), file)
}

/** `node -r readfile-utf8/register` in a child: fs.readFileSync is ours there. */
function checkRegister() {
  const child = `
    const fs = require('node:fs')
    const { readFileSync } = require('readfile-utf8')
    if (fs.readFileSync !== readFileSync) throw new Error('fs.readFileSync is not patched')
    const files = JSON.parse(process.argv[1])
    process.stdout.write(JSON.stringify(files.map((f) => fs.readFileSync(f, 'utf8'))))
  `
  const r = spawnSync(process.execPath, ['-r', 'readfile-utf8/register', '-e', child, JSON.stringify(files)], {
    encoding: 'utf8',
    maxBuffer: 64 << 20,
  })
  assert.equal(r.status, 0, r.stderr)
  assert.deepEqual(
    JSON.parse(r.stdout),
    files.map((f) => fs.readFileSync(f, 'utf8')),
  )
}

checkRequire()
  .then(checkImport)
  .then(() => {
    checkRegister()
    console.log(`install smoke ok: ${process.version}, engine ${expectedEngine}, ${files.length} files, require + import + register`)
  })
  .catch((err) => {
    console.error(err)
    process.exit(1)
  })
