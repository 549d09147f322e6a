'use strict'
// `npm test` runs this first: build the addon if no binary for this platform exists
// (e.g. after `npm install --ignore-scripts`). A present binary is left alone.
const { spawnSync } = require('node:child_process')
const { findBinary } = require('../lib/binary-name')

if (findBinary() === null) {
  console.log('readfile-utf8: no native binary yet, building it (npm run build)…')
  const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm'
  const r = spawnSync(npm, ['run', 'build'], { stdio: 'inherit', cwd: `${__dirname}/..` })
  process.exit(r.status ?? 1)
}
