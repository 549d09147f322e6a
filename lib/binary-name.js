'use strict'
// Where `napi build --platform` puts the addon: `readfile-utf8.<platform>-<arch>[-abi].node`
// in the package root. We build from source on install, so only this machine's
// names are candidates.
const fs = require('node:fs')
const path = require('node:path')

const ROOT = path.join(__dirname, '..')

function candidates() {
  const { platform, arch } = process
  if (platform === 'linux') return [`linux-${arch}-gnu`, `linux-${arch}-musl`, `linux-${arch}`]
  if (platform === 'win32') return [`win32-${arch}-msvc`, `win32-${arch}-gnu`]
  if (platform === 'darwin') return [`darwin-${arch}`, 'darwin-universal']
  return [`${platform}-${arch}`]
}

/** Absolute path of the built addon, or null if none is there. */
function findBinary() {
  for (const triple of candidates()) {
    const file = path.join(ROOT, `readfile-utf8.${triple}.node`)
    if (fs.existsSync(file)) return file
  }
  return null
}

module.exports = { findBinary }
