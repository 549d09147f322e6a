'use strict'
// Where this platform's addon can be, in napi-rs's layout: a local build
// `readfile-utf8.<platform>.node` in the package root (`npm install` in the
// repo makes one) or, when this file was bundled (esbuild, webpack), beside
// the bundle; and the platform package `readfile-utf8-<platform>` that npm
// installs from optionalDependencies.
const fs = require('node:fs')
const path = require('node:path')

/**
 * Every platform a binary is built and published for. __test__/packages.test.js
 * keeps this list, package.json's optionalDependencies, npm/*, build-all.sh and
 * the release workflow the same.
 */
const PUBLISHED = [
  'linux-x64-gnu',
  'linux-arm64-gnu',
  'linux-x64-musl',
  'linux-arm64-musl',
  'darwin-x64',
  'darwin-arm64',
  'win32-x64-gnu',
]

/** The oldest Node the addon supports (package.json's engines): [major, minor]. */
const OLDEST_NODE = [20, 12]

// Unbundled, this file is lib/binary-name.js; a bundler puts it inside the
// bundle, whose own name __filename then is.
const BUNDLED = path.basename(__filename) !== 'binary-name.js'
/** Where a local build is looked for: the package root, or the bundle's folder. */
const ROOT = BUNDLED ? __dirname : path.join(__dirname, '..')

/** Whether this Linux uses musl: its ldd says so, or Node's report names no glibc. */
function isMusl() {
  try {
    return fs.readFileSync('/usr/bin/ldd', 'latin1').includes('musl')
  } catch {
    const header = process.report?.getReport?.()?.header
    return header !== undefined && !header.glibcVersionRuntime
  }
}

/** This process's platform names, most likely first (Linux: its libc's, then the other). */
function platforms() {
  const { platform, arch } = process
  if (platform === 'linux') {
    const both = [`linux-${arch}-gnu`, `linux-${arch}-musl`]
    return isMusl() ? both.reverse() : both
  }
  if (platform === 'win32') return [`win32-${arch}-gnu`, `win32-${arch}-msvc`]
  return [`${platform}-${arch}`]
}

/** Absolute path of a local build for this platform in `dir` (default: ROOT), or null if there is none. */
function findBinary(dir = ROOT) {
  for (const name of platforms()) {
    const file = path.join(dir, `readfile-utf8.${name}.node`)
    if (fs.existsSync(file)) return file
  }
  return null
}

/** Whether a Node version string ('18.20.8') is older than OLDEST_NODE. */
function olderThanSupported(version) {
  const [major, minor] = String(version).split('.').map(Number)
  return major < OLDEST_NODE[0] || (major === OLDEST_NODE[0] && minor < OLDEST_NODE[1])
}

module.exports = { PUBLISHED, OLDEST_NODE, BUNDLED, ROOT, platforms, findBinary, olderThanSupported }
