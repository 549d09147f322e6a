'use strict'
// `npm test` runs the Rust tests with this (`cargo test --release`: unit tests,
// the property tests against encoding_rs on both engines, EINTR). The variables
// that pick the engine are removed: the property tests choose each engine
// themselves, and unit tests that need simdutf would pass vacuously without it.
// `--target <host>`, as napi build passes, puts the tests in the addon build's
// target/<triple>/ folder, so they reuse what it compiled (simdutf's C++, every
// dependency, and the crate's rlib: Cargo.toml keeps the two builds' settings
// the same) instead of building them all again in target/release/; only the
// dev-dependencies and the test executables are compiled here.
// Extra arguments go to cargo test (e.g. `-- eintr`).
const path = require('node:path')
const { spawnSync } = require('node:child_process')

const env = { ...process.env }
delete env.READFILE_UTF8_NO_SIMD
delete env.SIMDUTF_FORCE_IMPLEMENTATION

const cargo = process.env.CARGO ?? 'cargo'
const rustc = spawnSync(process.env.RUSTC ?? 'rustc', ['-vV'], { encoding: 'utf8' })
const host = /^host: (\S+)$/m.exec(rustc.stdout ?? '')?.[1]
const target = host ? ['--target', host] : []
const r = spawnSync(cargo, ['test', '--release', ...target, ...process.argv.slice(2)], {
  stdio: 'inherit',
  env,
  cwd: path.join(__dirname, '..'),
})
if (r.error) {
  console.error(`readfile-utf8: could not run ${cargo} (${r.error.message}); the Rust tests need Rust and cargo`)
  process.exit(1)
}
process.exit(r.status ?? 1)
