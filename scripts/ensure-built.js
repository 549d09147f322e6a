'use strict'
// `npm test` runs this first: builds the addon (npm run build) when there is no
// binary for this platform yet (e.g. after `npm install --ignore-scripts`) or a
// Rust source is newer than the binary, so the suite never tests a stale build.
const fs = require('node:fs')
const path = require('node:path')
const { spawnSync } = require('node:child_process')
const { findBinary } = require('../lib/binary-name')

const ROOT = path.join(__dirname, '..')
/** What the binary is built from: files, and folders searched for `.rs` files. */
const SOURCE_FILES = ['Cargo.toml', 'Cargo.lock', 'build.rs', 'lib/limits.json']
const SOURCE_DIRS = ['src']

/** The most recently modified source file: { file, mtimeMs }. */
function newestSource() {
  let newest = { file: null, mtimeMs: -Infinity }
  const consider = (file) => {
    const { mtimeMs } = fs.statSync(file)
    if (mtimeMs > newest.mtimeMs) newest = { file, mtimeMs }
  }
  for (const name of SOURCE_FILES) {
    const file = path.join(ROOT, name)
    if (fs.existsSync(file)) consider(file)
  }
  for (const dir of SOURCE_DIRS) {
    for (const entry of fs.readdirSync(path.join(ROOT, dir), { recursive: true, withFileTypes: true })) {
      if (entry.isFile() && entry.name.endsWith('.rs')) consider(path.join(entry.parentPath ?? entry.path, entry.name))
    }
  }
  return newest
}

/** Why the addon must be built now, or null if the binary is up to date. */
function reasonToBuild() {
  const binary = findBinary()
  if (binary === null) return 'no native binary yet'
  const source = newestSource()
  if (source.mtimeMs > fs.statSync(binary).mtimeMs) {
    return `${path.relative(ROOT, source.file)} is newer than ${path.basename(binary)}`
  }
  return null
}

const reason = reasonToBuild()
if (reason !== null) {
  console.log(`readfile-utf8: ${reason}, building it (npm run build)…`)
  const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm'
  const r = spawnSync(npm, ['run', 'build'], { stdio: 'inherit', cwd: ROOT, shell: process.platform === 'win32' })
  if (r.status === 0 && findBinary() === null) {
    console.error('readfile-utf8: the build succeeded but left no binary where lib/binary-name.js looks')
    process.exit(1)
  }
  process.exit(r.status ?? 1)
}
