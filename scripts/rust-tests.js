'use strict'
// `npm test` runs the Rust tests with this (`cargo test --release`: unit tests,
// the property tests against encoding_rs on both engines, EINTR). The variables
// that pick the engine are removed: the property tests choose each engine
// themselves, and unit tests that need simdutf would pass vacuously without it.
const path = require('node:path')
const { spawnSync } = require('node:child_process')

const env = { ...process.env }
delete env.READFILE_UTF8_NO_SIMD
delete env.SIMDUTF_FORCE_IMPLEMENTATION

const cargo = process.env.CARGO ?? 'cargo'
const r = spawnSync(cargo, ['test', '--release'], { stdio: 'inherit', env, cwd: path.join(__dirname, '..') })
if (r.error) {
  console.error(`readfile-utf8: could not run ${cargo} (${r.error.message}); the Rust tests need Rust and cargo`)
  process.exit(1)
}
process.exit(r.status ?? 1)
