'use strict'
// The names of this platform's addon, in napi-rs's layout: a local build in the
// package root, `readfile-utf8.<platform>.node` (`npm install` in the repo makes
// one), and the platform package `readfile-utf8-<platform>` that npm installs
// from optionalDependencies.
const fs = require('node:fs')
const path = require('node:path')

const ROOT = path.join(__dirname, '..')

/** This process's platform names, most likely first (Linux: glibc, then musl). */
function platforms() {
  const { platform, arch } = process
  if (platform === 'linux') return [`linux-${arch}-gnu`, `linux-${arch}-musl`]
  if (platform === 'win32') return [`win32-${arch}-msvc`, `win32-${arch}-gnu`]
  return [`${platform}-${arch}`]
}

/** Absolute path of a local build for this platform in `dir` (default: the package root), or null if there is none. */
function findBinary(dir = ROOT) {
  for (const name of platforms()) {
    const file = path.join(dir, `readfile-utf8.${name}.node`)
    if (fs.existsSync(file)) return file
  }
  return null
}

module.exports = { platforms, findBinary }
