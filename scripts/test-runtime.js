'use strict'
// The JS suite under another runtime: `node scripts/test-runtime.js bun|deno [file...] [--list]`
// runs, with the runtime's own test runner (`bun test`, `deno test`, each of
// which runs node:test files as they are), the fast-tier files that apply to
// that runtime, and __test__/runtimes/ (what only those runtimes promise).
// Each file has a process of its own, two at a time. The runtime is
// scripts/get-runtime.sh's pin, or $BUN / $DENO. Before anything, the addon
// must load there (not the fs fallback, under which every differential test
// would pass too). Prints `# pass N` / `# fail N` (CI adds them up) and exits
// 1 on any failure, or on a file that ran no test.
//
// What applies (README): under Bun single reads and decodeUtf8 are Bun's own
// fs and Buffer, batches ours; under Deno every function is ours. Bun's and
// Deno's own fs differ from Node's in places (errors of bad arguments and
// fds, the AbortError's shape, ENOMEM for huge files, which modules their
// loaders read through fs): a test that asserts Node's own behaviour there
// does not apply. `--list` prints each file's status and reason.
const os = require('node:os')
const path = require('node:path')
const { spawn } = require('node:child_process')
const { findBun, findDeno, DENO_RUN } = require('../benchmark/runtimes')

const ROOT = path.join(__dirname, '..')

/** Why a fast-tier file does not run under both runtimes (or only under one). */
const BOTH_NOT = {
  'api.test.js': "the addon's raw entry points and index.d.ts under tsc: nothing of the runtime's",
  'packages.test.js': 'the release lists agree: files, not the runtime',
  'errors.test.js': "asserts Node's errors (ERR_OUT_OF_RANGE / ERR_FS_FILE_TOO_LARGE, kMaxLength files), which Bun's and Deno's fs do not throw",
  'fd-async.test.js': "FileHandle.readFile's errors for fds, which Bun's and Deno's fs.promises do not give",
  'limits.test.js': 'endless inputs: Bun and Deno run out of memory (ENOMEM, V8 OOM) where Node throws ERR_STRING_TOO_LONG',
  'memory-mode.test.js': "V8's external-memory counter (process.memoryUsage().external) and the lean mode's rule: Node's; under both runtimes every string is copied",
  'register.test.js': "Bun's and Deno's module loaders do not read modules through fs.readFileSync",
  'workers.test.js': 'Workers terminated mid-read: under Bun the process ends with one fd more open (not traced yet: ours or Bun\'s), under Deno it hangs',
  'async.test.js': "argument errors, fds and AbortSignal against Node's fs.promises (its AbortError class), which the runtimes' fs.promises do not match",
  'idle-memory.test.js': 'every string is copied under both: no buffer of ours outlives a string (what the test is about)',
  'async-decode-differential.test.js': "under Bun async reads and decodeUtf8 are Bun's own (fs against itself); under Deno its cost (a minute) buys little over differential.test.js and runtime-routing.test.js",
}

/** Per runtime: the fast-tier files that run (with tests left out, by name prefix, Bun only) and why the others do not. */
const SUITES = {
  bun: {
    run: {
      'batch-flow.test.js': {},
      'batch.test.js': {
        'index.d.ts types the batch functions': 'tsc on index.d.ts: nothing of the runtime',
        'worker threads terminated mid-batch': "after Workers terminated mid-batch one fd more is open (not traced yet: ours or Bun's)",
        "async: errors: 'return' holds fs.promises' errors": "compares stacks, and Bun's fs.promises errors sometimes have none (seen under load, not reproduced alone)",
      },
      'layers.test.js': {
        'the reference itself': "Bun's require() does not read modules through fs.readFileSync, so a layer cannot serve them",
      },
      'lifecycles.test.js': {},
      'loader.test.js': {},
      'loader-choice.test.js': {},
      'runtime-routing.test.js': {},
      'side-effects.test.js': {},
      'special-files.test.js': {
        'our own fds are closed on every path': "counts the process's fds, among which Bun's own come and go (it saw fewer after)",
      },
      'worker-exit.test.js': {},
    },
    not: {
      ...BOTH_NOT,
      'decode.test.js': "decodeUtf8 is Bun's Buffer#toString there: Bun against itself",
      'decode-routes.test.js': "decodeUtf8's routes are not taken under Bun (Buffer#toString answers)",
      'differential.test.js': "single reads are Bun's own fs: Bun against itself",
      'faults.test.js': "single reads are Bun's own fs: Bun against itself",
      'flags.test.js': "reads fs's flag table through Node's --expose-internals, which Bun lacks (batches' flags: side-effects.test.js)",
      'lifetimes.test.js': "under Bun single reads never reach the addon's helper thread or pool (Bun's fs reads them)",
      'windows-paths.test.js': "the errors an async batch takes from Bun's fs.promises have no stack there (Bun's own ones do): the test compares stacks",
      'external-pages.test.js': "every string is copied under Bun: no external string holds a buffer of ours",
    },
  },
  deno: {
    run: {
      'batch-flow.test.js': {},
      'decode.test.js': {},
      'decode-routes.test.js': {},
      'differential.test.js': {},
      'flags.test.js': {},
      'lifecycles.test.js': {},
      'lifetimes.test.js': {},
      'runtime-routing.test.js': {},
      'side-effects.test.js': {},
      'special-files.test.js': {},
      'windows-paths.test.js': {},
    },
    not: {
      ...BOTH_NOT,
      'batch.test.js': "Deno's fs.promises rejects an aborted read with the signal's reason, not an AbortError; and Deno's Workers, terminated mid-batch, leave its reader threads running",
      'faults.test.js': "a file changing under Deno's fs: its reads see other lengths than Node's (the test's premise)",
      'layers.test.js': "Deno's require() does not read modules through fs.readFileSync",
      'external-pages.test.js': 'every string is copied under Deno: no external string holds a buffer of ours',
      'loader.test.js': "its children run node -e scripts with dynamic import(), which Deno's eval does not take",
      'loader-choice.test.js': "Deno runs no -r preload script, which these cases use to pretend a libc or an arch",
      'worker-exit.test.js': "its child reads its arguments after -e from process.argv, which Deno's -e passes otherwise (the child then writes into the cwd)",
    },
  },
}

const RUNTIME_ONLY = ['runtimes/loop-peaks.test.js']

const args = process.argv.slice(2)
const name = args.shift()
if (!Object.hasOwn(SUITES, name)) {
  console.error('usage: node scripts/test-runtime.js bun|deno [file...] [--list]')
  process.exit(2)
}
const suite = SUITES[name]

if (args.includes('--list')) {
  for (const [file, left] of Object.entries(suite.run)) {
    console.log(`run   ${file}`)
    for (const [test, why] of Object.entries(left)) console.log(`        but "${test}…": ${why}`)
  }
  for (const file of RUNTIME_ONLY) console.log(`run   ${file}`)
  for (const [file, why] of Object.entries(suite.not)) console.log(`skip  ${file}: ${why}`)
  process.exit(0)
}

/** The files to run: those given (as __test__/x.test.js or x.test.js), or the runtime's list. */
const files = (args.length > 0 ? args : [...Object.keys(suite.run), ...RUNTIME_ONLY]).map((f) =>
  path.relative(path.join(ROOT, '__test__'), path.resolve(ROOT, f.startsWith('__test__') ? f : path.join('__test__', f))),
)

const { bin, version } = (name === 'bun' ? findBun : findDeno)({ suite: 'test-runtime', required: true })
const label = `${name === 'bun' ? 'Bun' : 'Deno'} ${version}`
const runArgs = name === 'deno' ? DENO_RUN : []

/** Runs `argv` with the runtime; resolves { status, out }. */
function runtime(argv, timeoutMs) {
  return new Promise((resolve) => {
    // No stdin: a read that reaches fd 0 by mistake gets '' at once (a mismatch), never waits.
    const child = spawn(bin, argv, { cwd: ROOT, env: { ...process.env, NO_COLOR: '1' }, stdio: ['ignore', 'pipe', 'pipe'] })
    let out = ''
    child.stdout.on('data', (d) => (out += d))
    child.stderr.on('data', (d) => (out += d))
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs)
    child.on('close', (status, signal) => {
      clearTimeout(timer)
      resolve({ status: signal ? `killed by ${signal}` : status, out })
    })
  })
}

/** The runtime's command for one test file, and its counts from the output. */
function testCommand(file) {
  const full = path.join('__test__', file)
  if (name === 'bun') {
    const left = Object.keys(suite.run[file] ?? {})
    const filter = left.length > 0 ? ['--test-name-pattern', `^(?!(${left.map(escape).join('|')}))`] : []
    return ['test', '--timeout', '300000', ...filter, `./${full}`]
  }
  return ['test', '--allow-all', '--unstable-detect-cjs', full]
}

const escape = (s) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')

function counts(out) {
  const plain = out.replace(/\x1b\[[0-9;]*m/g, '') // eslint-disable-line no-control-regex
  if (name === 'bun') {
    const pass = plain.match(/^\s*(\d+) pass$/m)
    const fail = plain.match(/^\s*(\d+) fail$/m)
    return { pass: Number(pass?.[1] ?? 0), fail: Number(fail?.[1] ?? 0) }
  }
  const line = plain.match(/(?:ok|FAILED) \| (\d+) passed(?: \(\d+ steps?\))? \| (\d+) failed/)
  return { pass: Number(line?.[1] ?? 0), fail: Number(line?.[2] ?? 0) }
}

async function main() {
  console.log(`# ${label} (${bin})`)
  // The addon loads there: its engine, not fs.
  const probe = await runtime([...runArgs, path.join(__dirname, 'print-engine.js')], 60_000)
  const engine = probe.out.trim().split('\n').pop()
  if (probe.status !== 0 || engine === 'fs' || !engine) {
    console.log(`not ok 0 the addon loads under ${label}: ${engine}\n${probe.out}`)
    console.log('# pass 0\n# fail 1')
    process.exit(1)
  }
  console.log(`# the addon loads under ${label}: engine ${engine}`)

  const started = Date.now()
  const results = new Array(files.length)
  let next = 0
  const concurrency = Math.max(2, (typeof os.availableParallelism === 'function' ? os.availableParallelism() : os.cpus().length) - 1)
  async function worker() {
    while (next < files.length) {
      const i = next++
      const t = Date.now()
      const r = await runtime(testCommand(files[i]), 600_000)
      results[i] = { file: files[i], ...r, ...counts(r.out), seconds: (Date.now() - t) / 1000 }
      const { pass, fail, status, seconds } = results[i]
      const ok = status === 0 && fail === 0 && pass > 0
      if (!ok) console.log(r.out)
      console.log(`${ok ? 'ok' : 'not ok'} ${i + 1} ${files[i]}: ${pass} passed, ${fail} failed (${seconds.toFixed(0)} s${status === 0 ? '' : `, exit ${status}`})`)
    }
  }
  await Promise.all(Array.from({ length: concurrency }, worker))
  const pass = results.reduce((n, r) => n + r.pass, 0)
  const fail = results.reduce((n, r) => n + r.fail + (r.status !== 0 && r.fail === 0 ? 1 : 0) + (r.pass === 0 && r.status === 0 ? 1 : 0), 0)
  console.log(`# ${label}: ${files.length} files in ${((Date.now() - started) / 1000).toFixed(0)} s`)
  console.log(`# pass ${pass}`)
  console.log(`# fail ${fail}`)
  process.exit(fail === 0 ? 0 : 1)
}

main()
