'use strict'
// npm run coverage [-- --report-only]
//
// What the tests reach, in both languages, over one run of each suite:
// - JS: V8's coverage of lib/ and the entry files over the fast tier, of
//   every process the suite starts (NODE_V8_COVERAGE, as c8 sets it), in
//   c8's reports;
// - Rust: `cargo llvm-cov` of src/ over the same JS run, with the addon built
//   with coverage instrumentation (READFILE_UTF8_NATIVE_LIBRARY_PATH names it;
//   each process writes its own profile), and over `cargo test` (unit tests,
//   tests/*.rs) in both readers' builds, merged into one report.
// Then scripts/coverage-report.js prints the per-file tables and the functions
// no test reaches, with and without the gaps scripts/coverage-gaps.json
// accepts, and exits non-zero if a floor breaks without an accepted reason.
// Everything it writes is under target/coverage/ (the HTML and JSON reports
// too); --report-only makes the reports and tables again from the last run's
// data (of both suites), without building or running anything.
//
// Installs what it lacks: rustup's llvm-tools-preview and cargo-llvm-cov (from
// crates.io). c8 is a devDependency (npm install).
const fs = require('node:fs')
const path = require('node:path')
const { spawnSync } = require('node:child_process')
const { parseArgs } = require('node:util')
const { pathToFileURL } = require('node:url')

const ROOT = path.join(__dirname, '..')
const OUT = path.join(ROOT, 'target', 'coverage')
/** cargo-llvm-cov's build folder: apart from the addon's own, which it would otherwise rebuild. */
const CARGO_TARGET = path.join(OUT, 'cargo')
const ADDON = path.join(OUT, 'readfile-utf8.node')
const V8_DIR = path.join(OUT, 'v8')
/** node --test's timeout for each file of the suite under coverage. */
const JS_FILE_TIMEOUT_MS = 1_200_000
const CARGO_LLVM_COV = { crate: 'cargo-llvm-cov', version: '^0.9' }
/** What V8's coverage is taken of: the files the package ships. */
const JS_FILES = ['lib/**', 'index.js', 'index.mjs', 'register.js', 'register.mjs']
/** Files of the Rust report that are not the crate's sources. */
const RUST_IGNORED = String.raw`(^|/)(tests|benchmark)/|(^|/)build\.rs$|/\.cargo/|/rustc/`

const { values: args } = parseArgs({
  options: {
    'report-only': { type: 'boolean', default: false },
  },
})

const started = Date.now()
const seconds = (since) => `${Math.round((Date.now() - since) / 1000)} s`

function step(title) {
  console.log(`\n=== [${seconds(started)}] coverage: ${title}`)
}

/** Runs a command with inherited output; returns its exit status (throws if it cannot start). */
function run(command, argv, options = {}) {
  const r = spawnSync(command, argv, { stdio: 'inherit', cwd: ROOT, ...options })
  if (r.error) throw new Error(`coverage: could not run ${command}: ${r.error.message}`)
  return r.status ?? 1
}

function must(command, argv, options) {
  const status = run(command, argv, options)
  if (status !== 0) {
    console.error(`coverage: \`${command} ${argv.join(' ')}\` failed (exit ${status})`)
    process.exit(1)
  }
}

function output(command, argv, options = {}) {
  return spawnSync(command, argv, { cwd: ROOT, encoding: 'utf8', ...options })
}

/** c8's CLI from node_modules, or a stop that says to install the dev dependencies. */
function c8Cli() {
  try {
    return require.resolve('c8/bin/c8.js', { paths: [ROOT] })
  } catch {
    console.error('coverage: c8 is not installed; run `npm install` (it is a devDependency).')
    process.exit(1)
  }
}

/** Installs llvm-tools-preview and cargo-llvm-cov where they are missing. */
function ensureRustTools() {
  const installed = output('rustup', ['component', 'list', '--installed'])
  if (installed.error) {
    console.error('coverage: rustup is not on PATH; the Rust coverage needs rustup\'s llvm-tools-preview component and cargo-llvm-cov.')
    process.exit(1)
  }
  if (!/^llvm-tools/m.test(installed.stdout)) must('rustup', ['component', 'add', 'llvm-tools-preview'])
  if (output('cargo', ['llvm-cov', '--version']).status !== 0) {
    must('cargo', ['install', '--locked', CARGO_LLVM_COV.crate, '--version', CARGO_LLVM_COV.version])
  }
}

/**
 * Whether this rustc can count branches: `-Z coverage-options=branch` is
 * accepted by nightly compilers only. Stable's reports count regions (each
 * arm of a branch is a region of its own) in the branches' place.
 */
function rustcCountsBranches() {
  const version = output('rustc', ['-vV']).stdout ?? ''
  return /^release: .*-nightly/m.test(version)
}

/** The environment cargo-llvm-cov builds and runs with (`show-env`), over ours. */
function llvmCovEnv(branches) {
  const base = { ...process.env, CARGO_TARGET_DIR: CARGO_TARGET }
  const r = output('cargo', ['llvm-cov', 'show-env', '--sh', ...(branches ? ['--branch'] : [])], { env: base })
  if (r.status !== 0) {
    console.error(`coverage: cargo llvm-cov show-env failed:\n${r.stderr}`)
    process.exit(1)
  }
  const env = { ...base }
  // `export KEY=value` or `export KEY='value'` (a ' inside written '\\'').
  for (const [, key, quoted, plain] of r.stdout.matchAll(/^export ([A-Za-z_][A-Za-z0-9_]*)=(?:'((?:[^']|'\\'')*)'|(\S*))$/gm)) {
    env[key] = quoted === undefined ? plain : quoted.replaceAll(`'\\''`, `'`)
  }
  if (!env.RUSTC_WRAPPER || !env.LLVM_PROFILE_FILE) {
    console.error(`coverage: cargo llvm-cov show-env printed no RUSTC_WRAPPER or LLVM_PROFILE_FILE:\n${r.stdout}`)
    process.exit(1)
  }
  // As scripts/rust-tests.js: the property tests pick each engine themselves.
  delete env.READFILE_UTF8_NO_SIMD
  delete env.SIMDUTF_FORCE_IMPLEMENTATION
  return env
}

/** The instrumented addon, built from the same sources and profile as `npm run build`. */
function buildAddon(env) {
  must('cargo', ['build', '--release', '--lib'], { env })
  const lib = path.join(CARGO_TARGET, 'release', process.platform === 'darwin' ? 'libreadfile_utf8.dylib' : 'libreadfile_utf8.so')
  fs.copyFileSync(lib, ADDON)
}

/**
 * The JS fast tier on the instrumented addon, with V8's coverage of every
 * process it starts written to target/coverage/v8 (NODE_V8_COVERAGE, as c8
 * sets it). Returns whether it passed. Under coverage a run is slower: each
 * file gets more time than test-js.js's own timeout gives it.
 */
function runJsSuite(env) {
  fs.rmSync(V8_DIR, { recursive: true, force: true })
  const suiteEnv = { ...env, NODE_V8_COVERAGE: V8_DIR, READFILE_UTF8_NATIVE_LIBRARY_PATH: ADDON }
  // Not the cargo wrapper's variables: a test that built Rust would build it instrumented.
  for (const key of Object.keys(suiteEnv)) {
    if (key === 'RUSTC_WRAPPER' || key.startsWith('__CARGO_LLVM_COV') || key.startsWith('CARGO_LLVM_COV')) delete suiteEnv[key]
  }
  delete suiteEnv.CARGO_TARGET_DIR
  const argv = ['scripts/test-js.js', 'fast', `--test-timeout=${JS_FILE_TIMEOUT_MS}`]
  return run(process.execPath, argv, { env: suiteEnv }) === 0
}

/**
 * Some tests run a copy of the package, laid out as an install would be, in a
 * scratch folder (the loader's cases, an unprivileged user's): V8 reports
 * those files under the copy's path, which c8 leaves out. A copy's coverage
 * is moved to the shipped file it copies: a file whose path ends in a
 * shipped file's, in a folder that this process also loaded lib/native.js
 * from, and whose script V8 saw is as long as the shipped file.
 */
function moveCopiesToShippedFiles() {
  const rootUrl = `${pathToFileURL(ROOT).href}/`
  const lengths = new Map()
  const shippedLength = (rel) => {
    if (!lengths.has(rel)) {
      const file = path.join(ROOT, rel)
      lengths.set(rel, fs.existsSync(file) ? fs.readFileSync(file, 'utf8').length : -1)
    }
    return lengths.get(rel)
  }
  let moved = 0
  for (const name of fs.readdirSync(V8_DIR).filter((n) => n.endsWith('.json'))) {
    const file = path.join(V8_DIR, name)
    const data = JSON.parse(fs.readFileSync(file, 'utf8'))
    const copies = new Set(
      data.result.map((s) => /^(file:\/\/.*\/)lib\/native\.js$/.exec(s.url)?.[1]).filter((dir) => dir && dir !== rootUrl),
    )
    if (copies.size === 0) continue
    for (const script of data.result) {
      const dir = [...copies].find((d) => script.url.startsWith(d))
      if (dir === undefined) continue
      const rel = decodeURIComponent(script.url.slice(dir.length))
      const length = Math.max(...script.functions.flatMap((fn) => fn.ranges.map((r) => r.endOffset)))
      if (!isShipped(rel) || shippedLength(rel) !== length) continue
      script.url = rootUrl + rel
      moved++
    }
    fs.writeFileSync(file, JSON.stringify(data))
  }
  return moved
}

/** Whether a path relative to the package root is one of the JS files V8's coverage is taken of. */
function isShipped(rel) {
  return JS_FILES.some((glob) => (glob.endsWith('/**') ? rel.startsWith(glob.slice(0, -2)) : rel === glob))
}

/** c8's reports (HTML, istanbul JSON) of the V8 coverage the suite left. */
function jsReports() {
  const dir = path.join(OUT, 'js')
  fs.rmSync(dir, { recursive: true, force: true })
  const argv = [
    c8Cli(),
    'report',
    '--temp-directory', V8_DIR,
    '--reports-dir', dir,
    '--reporter=html', '--reporter=json', '--reporter=json-summary',
    '--all',
    ...JS_FILES.flatMap((glob) => ['--include', glob]),
  ]
  must(process.execPath, argv)
}

/** `cargo test` of both readers' builds (as npm test and CI run them). Returns whether they passed. */
function runRustTests(env) {
  const plain = run('cargo', ['test', '--release'], { env }) === 0
  // The reader of macOS and Windows, which Linux builds only with this feature.
  const portable = run('cargo', ['test', '--release', '--features', 'portable-read', '--lib', '--test', 'eintr'], { env }) === 0
  return plain && portable
}

/** The merged Rust reports: HTML, JSON (functions and regions), lcov (lines). */
function rustReports(env, branches) {
  const common = ['llvm-cov', 'report', '--release', '--ignore-filename-regex', RUST_IGNORED, ...(branches ? ['--branch'] : [])]
  const dir = path.join(OUT, 'rust')
  fs.rmSync(dir, { recursive: true, force: true })
  fs.mkdirSync(dir, { recursive: true })
  must('cargo', [...common, '--json', '--output-path', path.join(dir, 'coverage.json')], { env })
  must('cargo', [...common, '--lcov', '--output-path', path.join(dir, 'lcov.info')], { env })
  must('cargo', [...common, '--html', '--output-dir', dir], { env })
}

function main() {
  fs.mkdirSync(OUT, { recursive: true })
  c8Cli()
  step('tools (rustup llvm-tools-preview, cargo-llvm-cov)')
  ensureRustTools()
  const branches = rustcCountsBranches()
  const env = llvmCovEnv(branches)

  let passed = true
  if (!args['report-only']) {
    step('cargo llvm-cov clean (old profiles and instrumented builds of this crate)')
    must('cargo', ['llvm-cov', 'clean', '--workspace'], { env })
    step('the addon, built with coverage instrumentation')
    buildAddon(env)
    step("cargo test, instrumented (unit tests and tests/*.rs; the portable reader's unit tests and eintr)")
    passed = runRustTests(env) && passed
    step('the JS fast tier, on the instrumented addon, with V8 coverage')
    passed = runJsSuite(env) && passed
  }
  step('reports')
  const profiles = fs.readdirSync(CARGO_TARGET).filter((n) => n.endsWith('.profraw')).length
  if (profiles === 0) {
    console.error(`coverage: no LLVM profiles in ${path.relative(ROOT, CARGO_TARGET)}: the instrumented builds wrote none`)
    process.exit(1)
  }
  console.log(`coverage: ${profiles} LLVM profiles`)
  console.log(`coverage: ${moveCopiesToShippedFiles()} scripts of copies of the package counted as the shipped files`)
  jsReports()
  rustReports(env, branches)
  const status = run(process.execPath, [path.join(__dirname, 'coverage-report.js'), ...(branches ? ['--rust-branches'] : [])])
  console.log(`\ncoverage: done in ${seconds(started)}`)
  if (!passed) console.error('coverage: some tests failed (see above): the figures are of a failing run')
  process.exit(passed ? status : 1)
}

main()
