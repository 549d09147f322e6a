'use strict'
// The release's platform list (scripts/release.js check): package.json's
// optionalDependencies, npm/*, lib/binary-name.js, scripts/build-all.sh,
// napi.targets and the workflow's build and test matrices must name the same
// platforms. A platform listed but not built would fail every Yarn install
// (YN0035), one built but not listed would never be installed.
const { test } = require('node:test')
const assert = require('node:assert/strict')
const fs = require('node:fs')
const path = require('node:path')
const { spawnSync } = require('node:child_process')

const { scratch } = require('./helpers')
const { problems } = require('../scripts/release')

const ROOT = path.join(__dirname, '..')
const FILES = ['package.json', 'LICENSE', 'lib/binary-name.js', 'scripts/release.js', 'scripts/build-all.sh', '.github/workflows/ci.yml', 'npm']

/** `node scripts/release.js check` in a copy of the files it reads, after `edit(dir)`. */
function checkCopy(name, edit) {
  const dir = scratch(`packages-${name}`)
  for (const f of FILES) fs.cpSync(path.join(ROOT, f), path.join(dir, f), { recursive: true, filter: (src) => !src.endsWith('.node') })
  edit(dir)
  return spawnSync(process.execPath, ['scripts/release.js', 'check'], { cwd: dir, encoding: 'utf8' })
}

const editJson = (file, change) => fs.writeFileSync(file, JSON.stringify(change(JSON.parse(fs.readFileSync(file, 'utf8')))))

test('every list of platforms names the same ones, and every platform package says so', () => {
  assert.deepEqual(problems(), [])
})

test('the check fails when optionalDependencies names a package the pipeline does not build', () => {
  const r = checkCopy('extra-dependency', (dir) =>
    editJson(path.join(dir, 'package.json'), (pkg) => ({
      ...pkg,
      optionalDependencies: { ...pkg.optionalDependencies, 'readfile-utf8-freebsd-x64': pkg.version },
    })),
  )
  assert.equal(r.status, 1, r.stdout)
  assert.match(r.stderr, /package.json optionalDependencies names \[.*freebsd-x64.*\], not \[/)
})

test('the check fails when the pipeline builds or tests a platform no dependency names, or skips one', () => {
  const workflow = (dir) => path.join(dir, '.github/workflows/ci.yml')
  const dropped = checkCopy('dropped-build', (dir) =>
    fs.writeFileSync(workflow(dir), fs.readFileSync(workflow(dir), 'utf8').replace(/platform: \[([^\]]*), win32-x64-gnu\]/, 'platform: [$1]')),
  )
  assert.equal(dropped.status, 1, dropped.stdout)
  assert.match(dropped.stderr, /ci\.yml build matrix names \[/)
  const noRunner = checkCopy('no-runner', (dir) =>
    fs.writeFileSync(workflow(dir), fs.readFileSync(workflow(dir), 'utf8').replace(/- platform: darwin-x64\n\s+runner: \S+\n/, '')),
  )
  assert.equal(noRunner.status, 1, noRunner.stdout)
  assert.match(noRunner.stderr, /ci\.yml test runners names \[/)
})

test('the check fails when a platform package says another os, cpu, libc or version', () => {
  const r = checkCopy('wrong-fields', (dir) =>
    editJson(path.join(dir, 'npm/linux-x64-musl/package.json'), (pkg) => ({ ...pkg, libc: ['glibc'], version: '0.0.1' })),
  )
  assert.equal(r.status, 1, r.stdout)
  assert.match(r.stderr, /npm\/linux-x64-musl\/package.json: version is "0.0.1"/)
  assert.match(r.stderr, /npm\/linux-x64-musl\/package.json: libc is \["glibc"\], not \["musl"\]/)
})
