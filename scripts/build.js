'use strict'
// `npm run build` and the `prepare` script that `npm install` runs in a clone:
// compiles the addon (napi build --platform --release --no-js --dts native.d.ts,
// plus any arguments given). Without Rust, napi's own failure is a stack trace
// about `cargo metadata`; this says what is missing instead, and that installs
// from the registry (prebuilt binaries) never compile anything.
const path = require('node:path')
const { spawnSync } = require('node:child_process')

const ROOT = path.join(__dirname, '..')
const NEEDS =
  'Building readfile-utf8 from source (npm install in a clone of its repository) needs\n' +
  '  - Rust with cargo: https://rustup.rs\n' +
  '  - a C and C++ compiler (gcc/g++ or clang; on Windows, Visual Studio Build Tools), for simdutf and the link.\n' +
  '`npm install readfile-utf8` from the registry never needs either: it installs a prebuilt binary.'

function fail(why) {
  console.error(`\nreadfile-utf8: ${why}\n${NEEDS}\n`)
  process.exit(1)
}

const cargo = spawnSync('cargo', ['--version'], { encoding: 'utf8', shell: process.platform === 'win32' })
if (cargo.error || cargo.status !== 0) {
  if (cargo.error?.code === 'ENOENT') fail('cargo is not on PATH.')
  fail(`\`cargo --version\` failed: ${cargo.error?.message ?? (cargo.stderr || '').trim().split('\n')[0]}`)
}

let cli
try {
  const manifest = require.resolve('@napi-rs/cli/package.json', { paths: [ROOT] })
  cli = path.join(path.dirname(manifest), require(manifest).bin.napi)
} catch {
  fail('@napi-rs/cli is not installed; run `npm install` (with dev dependencies) first.')
}

const args = ['build', '--platform', '--release', '--no-js', '--dts', 'native.d.ts', ...process.argv.slice(2)]
const r = spawnSync(process.execPath, [cli, ...args], { stdio: 'inherit', cwd: ROOT })
if (r.status !== 0) fail(`napi ${args.join(' ')} failed (see above).`)
