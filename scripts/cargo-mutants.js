'use strict'
// npm run mutants:cargo -- CAMPAIGN [--node PATH] [--iterate] [--list] [-- cargo-mutants options]
//
// cargo-mutants over src/, one scoped campaign at a time. Each mutant's tests
// are the Rust tests and the JS test files the campaign names, run against the
// mutated build (tests/js_suite.rs, behind the js-suite feature; profile and
// feature come from .cargo/mutants.toml). A campaign's scope keeps it within
// about an hour on two cores.
//
// cargo-mutants copies the checkout without its ignored files (node_modules,
// target/, the local *.node build) and builds each mutant there; the results
// go to target/cargo-mutants/CAMPAIGN/mutants.out, and a summary of each run
// is appended to mutation/cargo-mutants/CAMPAIGN.md. --iterate tests again
// only the mutants not caught in the last run (after tests were added: the
// score after). --list prints the campaign's mutants without testing any.
// Needs cargo-mutants (cargo install --locked cargo-mutants) and the
// checkout's node_modules (npm ci).
const fs = require('node:fs')
const path = require('node:path')
const { spawnSync } = require('node:child_process')

const ROOT = path.join(__dirname, '..')

/** The Rust tests every campaign runs: the unit tests, EINTR, and the JS suite (tests/js_suite.rs). */
const RUST_TESTS = ['--lib', '--test', 'eintr', '--test', 'js_suite']
/** With the property tests of the converters, for campaigns over transcoding. */
const RUST_TESTS_WITH_PROPS = [...RUST_TESTS, '--test', 'transcode_props']

/**
 * The campaigns: `scope` is cargo-mutants' selection (files, name regexes),
 * `js` the __test__ files that cover that code, `rust` the cargo test targets.
 */
const CAMPAIGNS = {
  plan: {
    about: "plan.rs and pipeline.rs: the one decision of how a string is made, carried out (Bun/Deno's copy of every string among it)",
    scope: ['-f', 'src/plan.rs', '-f', 'src/pipeline.rs'],
    js: ['memory-mode.test.js', 'copies.test.js', 'external-memory.test.js'],
    rust: RUST_TESTS,
  },
  pool: {
    about: 'exports/pool/: async reads on the pool of reader threads, single and batched',
    scope: ['-f', 'src/exports/pool/mod.rs', '-f', 'src/exports/pool/readers.rs'],
    js: ['concurrent-reads.test.js', 'async.test.js', 'batch-flow.test.js', 'signal-listeners.test.js', 'pool-readers.test.js'],
    rust: RUST_TESTS,
  },
  'external-memory': {
    about: "external_memory.rs: what V8 is told of external strings' bytes and when, and the stall rule of sync batches",
    scope: ['-f', 'src/external_memory.rs'],
    js: ['memory-mode.test.js', 'copies.test.js', 'external-memory.test.js', 'worker-exit.test.js'],
    rust: RUST_TESTS,
  },
  'split-reads': {
    about: 'read/syscalls.rs: a file read as two halves with pread, sized reads chunk by chunk, and their known-ASCII prefixes',
    scope: ['-f', 'src/read/syscalls.rs', '-F', '\\b(read_known_kind|read_halves|pread_checking_ascii|read_sized|chunked_read_min)\\b'],
    js: ['faults.test.js', 'special-files.test.js'],
    rust: RUST_TESTS,
  },
  'two-threads': {
    about: "two_threads/: the helper thread that runs a split job's other half, sleeps between tasks and ends when idle",
    scope: ['-f', 'src/two_threads/helper.rs', '-f', 'src/two_threads/mod.rs'],
    js: ['faults.test.js', 'worker-exit.test.js'],
    rust: RUST_TESTS,
  },
  // exports/batch/ in parts, each about an hour: the JS suite's batch tests
  // and the side effects of batches.
  ...batchCampaigns({
    'batch-ring-claim': ['Batch::(may_claim|emitted_now|deposit)', '\\b(result_bytes|ends_a_run)\\b'],
    'batch-ring-take': ['Batch::(extend_ready|take_ready)'],
    'batch-threads': ['Batch::(work|wake_js|stop|end|keep_spares|start_readers|on_path|read_ahead|read_now|len|new)', '\\block\\b'],
    'batch-sync': ['\\b(next_sync|made_now|set_elements|set_element|read_files_open|read_files_next|HandleScope::open|impl Drop for (HandleScope|BatchHandle))\\b'],
    'batch-entries': [
      '\\b(read_files_settle|read_files_cancel|Ahead::from_js|Reading|read_one|read_file|read_value_now|js_value)\\b',
      '\\b(window|pending_max_bytes|spares_max|batch_run|taken_max_bytes|spares_per_claim)\\b',
    ],
  }),
}

/** The exports/batch/ campaigns, one per list of name regexes. */
function batchCampaigns(parts) {
  return Object.fromEntries(
    Object.entries(parts).map(([name, res]) => [
      name,
      {
        about: `exports/batch/: ${res.join(', ')}`,
        scope: ['-f', 'src/exports/batch/*.rs', ...res.flatMap((re) => ['-F', re])],
        js: ['batch.test.js', 'side-effects.test.js'],
        rust: RUST_TESTS,
      },
    ]),
  )
}

function fail(message) {
  console.error(`cargo-mutants.js: ${message}`)
  process.exit(2)
}

function usage() {
  console.log('usage: node scripts/cargo-mutants.js CAMPAIGN [--node PATH] [--iterate] [--list] [-- cargo-mutants options]\n')
  for (const [name, c] of Object.entries(CAMPAIGNS)) console.log(`  ${name.padEnd(18)} ${c.about}\n  ${''.padEnd(18)} JS: ${c.js.join(' ')}`)
}

function parse(argv) {
  const args = { node: process.execPath, iterate: false, list: false, extra: [] }
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]
    if (a === '--') {
      args.extra = argv.slice(i + 1)
      break
    } else if (a === '--node') args.node = argv[++i]
    else if (a === '--iterate') args.iterate = true
    else if (a === '--list') args.list = true
    else if (a === '--help' || a === '-h') args.help = true
    else if (args.campaign === undefined && !a.startsWith('-')) args.campaign = a
    else fail(`unknown argument ${a}`)
  }
  return args
}

/** The lines of one of cargo-mutants' result lists (caught.txt, ...) in `out`. */
function listed(out, name) {
  try {
    return fs.readFileSync(path.join(out, name), 'utf8').split('\n').filter(Boolean)
  } catch (err) {
    if (err.code === 'ENOENT') return []
    throw err
  }
}

/** The mutants an --iterate run leaves out: caught or unviable in the runs before. */
function settledBefore(out) {
  return new Set(['caught.txt', 'previously_caught.txt', 'unviable.txt'].flatMap((f) => listed(out, f)))
}

/** Appends this run's summary to mutation/cargo-mutants/CAMPAIGN.md. */
function report(name, campaign, out, { nodeVersion, version, minutes, settled, status }) {
  const [caught, missed, timeout, unviable] = ['caught.txt', 'missed.txt', 'timeout.txt', 'unviable.txt'].map((f) => listed(out, f))
  const tested = caught.length + missed.length + timeout.length
  const file = path.join(ROOT, 'mutation', 'cargo-mutants', `${name}.md`)
  fs.mkdirSync(path.dirname(file), { recursive: true })
  const head = fs.existsSync(file)
    ? []
    : [
        `# cargo-mutants campaign: ${name}`,
        '',
        campaign.about,
        '',
        `Scope: \`${campaign.scope.join(' ')}\`; JS tests: ${campaign.js.join(', ')}.`,
        `Re-run: \`npm run mutants:cargo -- ${name}\` (\`--iterate\`: only the mutants not caught before).`,
        '',
      ]
  const percent = (n, of) => (of > 0 ? ` (${((n / of) * 100).toFixed(0)} %)` : '')
  const lines = [
    ...head,
    `## Run of ${new Date().toISOString().slice(0, 10)}${settled ? ', --iterate' : ''}`,
    '',
    `${version}, Node ${nodeVersion}, ${minutes.toFixed(0)} min wall time, exit status ${status}.`,
    `Tested ${tested + unviable.length}: caught ${caught.length}, missed ${missed.length}, timeout ${timeout.length}, unviable ${unviable.length}; score${percent(caught.length + timeout.length, tested)}.`,
    ...(settled ? [`Left out, caught or unviable before: ${settled.size}; over all runs, missed ${missed.length} of ${settled.size + tested + unviable.length}.`] : []),
    '',
    ...(missed.length ? ['Missed:', '', ...missed.map((m) => `- \`${m}\``), ''] : []),
    ...(timeout.length ? ['Timed out (counted as caught):', '', ...timeout.map((m) => `- \`${m}\``), ''] : []),
  ]
  fs.appendFileSync(file, `${head.length ? '' : '\n'}${lines.join('\n')}`)
  return file
}

function main() {
  const args = parse(process.argv.slice(2))
  if (args.help || args.campaign === undefined) return usage()
  const campaign = CAMPAIGNS[args.campaign]
  if (campaign === undefined) fail(`no campaign '${args.campaign}' (run without arguments to list them)`)
  const version = spawnSync('cargo', ['mutants', '--version'], { encoding: 'utf8' }).stdout?.trim()
  if (!version) fail('cargo-mutants is not installed: cargo install --locked cargo-mutants')
  const nodeVersion = spawnSync(args.node, ['--version'], { encoding: 'utf8' }).stdout?.trim()
  if (!nodeVersion) fail(`cannot run --node ${args.node}`)
  const modules = path.join(ROOT, 'node_modules')
  if (!fs.existsSync(path.join(modules, '.bin'))) fail(`no ${modules}: run npm ci first`)

  const out = path.join(ROOT, 'target', 'cargo-mutants', args.campaign)
  const cargoArgs = ['mutants', '--output', out, ...campaign.scope, ...campaign.rust.map((a) => `--cargo-test-arg=${a}`), ...(args.iterate ? ['--iterate'] : []), ...(args.list ? ['--list'] : []), ...args.extra]
  const node = path.resolve(args.node)
  const env = {
    ...process.env,
    READFILE_UTF8_JS_SUITE: campaign.js.join('\n'),
    READFILE_UTF8_JS_SUITE_NODE: node,
    READFILE_UTF8_JS_SUITE_NODE_MODULES: modules,
    // One target dir for every campaign: the dependencies are built once.
    CARGO_TARGET_DIR: path.join(ROOT, 'target', 'cargo-mutants', 'build'),
    // Tests that start `node` get this one.
    PATH: `${path.dirname(node)}${path.delimiter}${process.env.PATH}`,
  }
  if (!args.list) console.log(`cargo ${cargoArgs.join(' ')}\n  JS tests on Node ${nodeVersion}: ${campaign.js.join(' ')}`)
  const settled = args.iterate ? settledBefore(path.join(out, 'mutants.out')) : null
  // cargo-mutants makes its output folder but not the folders above it.
  fs.mkdirSync(path.dirname(out), { recursive: true })
  const started = Date.now()
  const r = spawnSync('cargo', cargoArgs, { cwd: ROOT, env, stdio: 'inherit' })
  if (r.error) throw r.error
  if (args.list) return
  if (!fs.existsSync(path.join(out, 'mutants.out', 'outcomes.json'))) fail(`cargo-mutants tested nothing (exit status ${r.status}): no report written`)
  const minutes = (Date.now() - started) / 60000
  const file = report(args.campaign, campaign, path.join(out, 'mutants.out'), { nodeVersion, version, minutes, settled, status: r.status })
  console.log(`summary appended to ${path.relative(ROOT, file)}`)
  // cargo-mutants: 0 all caught, 2 some missed, 3 some timed out, 4 baseline failed.
  process.exitCode = r.status ?? 1
}

main()
