'use strict'
// `npm run build` and the `prepare` script that `npm install` runs in a clone:
// compiles the addon (napi build --platform --release --no-js, plus any
// arguments given). Without Rust, napi's own failure is a stack trace
// about `cargo metadata`; this says what is missing instead, and that installs
// from the registry (prebuilt binaries) never compile anything.
const path = require('node:path')
const { spawn, spawnSync } = require('node:child_process')

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

const args = ['build', '--platform', '--release', '--no-js', ...process.argv.slice(2)]
// napi warns on every build that without napi-derive's type-def feature it
// writes no JS loader or .d.ts: the package has its own (lib/, index.d.ts), and
// the feature is off on purpose (Cargo.toml), so that line is dropped; the
// rest of napi's and cargo's stderr passes through as it comes.
const NOTED = /`type-def` feature is not enabled for `napi-derive`/
const env = process.stderr.isTTY && !process.env.CARGO_TERM_COLOR ? { ...process.env, CARGO_TERM_COLOR: 'always' } : process.env
const child = spawn(process.execPath, [cli, ...args], { stdio: ['inherit', 'inherit', 'pipe'], cwd: ROOT, env })
let pending = ''
child.stderr.setEncoding('utf8')
child.stderr.on('data', (text) => {
  const lines = (pending + text).split(/(?<=[\n\r])/)
  pending = /[\n\r]$/.test(lines.at(-1)) ? '' : lines.pop()
  for (const line of lines) if (!NOTED.test(line)) process.stderr.write(line)
})
child.on('error', (err) => fail(`could not run napi: ${err.message}`))
child.on('close', (status, signal) => {
  if (pending && !NOTED.test(pending)) process.stderr.write(pending)
  if (status !== 0) fail(`napi ${args.join(' ')} failed (${status ?? signal}; see above).`)
})
