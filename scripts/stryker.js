'use strict'
// npm run mutate:js -- <campaign|all> [--survivors] [--partial] [--tests a.test.js,...] [--grep RE] [--concurrency N] [--list]
//
// StrykerJS over lib/ and index.js, one campaign at a time: each names the
// files it mutates and the __test__ files that cover them, so that a campaign
// runs in a reasonable time on two cores. Stryker copies the checkout into a
// sandbox (.stryker-tmp/) and runs `node scripts/test-js.js <tests>` there once
// per mutant, the mutant chosen by an environment variable that every child
// process the tests start inherits; the addon is the checkout's own build
// (readfile-utf8.<platform>.node, copied into the sandbox), so no mutant needs
// a Rust build. Campaigns are not part of CI.
//
// Writes mutation/stryker-<campaign>.json: the counts, the score and every
// mutant not killed (location, mutator, replacement). --survivors runs only the
// mutants that report lists as survived or not covered (their ranges), and
// updates it: the run after a test was added for them. --partial writes the
// report of a run that was stopped, from the results it had (each is appended
// to .stryker-tmp/<campaign>.jsonl as it comes).
const fs = require('node:fs')
const path = require('node:path')
const { parseArgs } = require('node:util')
const { findBinary } = require('../lib/binary-name')

const ROOT = path.join(__dirname, '..')
const REPORTS = path.join(ROOT, 'mutation')

/**
 * The campaigns: files mutated, and the test files (in __test__/) run for each
 * mutant; `skip`, where given, the beginnings of the names of the tests of
 * those files left out: the long differential sweeps over code that quicker
 * tests reach too, and tests of timing that a loaded machine fails.
 */
const CAMPAIGNS = {
  native: { mutate: ['lib/native.js'], tests: ['loader.test.js', 'routing-by-runtime.test.js'] },
  register: { mutate: ['lib/register.js', 'lib/answers.js'], tests: ['register.test.js', 'layers.test.js', 'hook-orders.test.js'] },
  // lib/batch.js in three: the batches themselves (the entries answered here,
  // the native handles, the signal), the helpers they call (what the native
  // side is given, what it may read ahead), and the validation of arguments.
  'batch-flow': {
    mutate: ['lib/batch.js:175-290'],
    tests: ['batch.test.js', 'side-effects.test.js', 'signal-listeners.test.js', 'batch-options.test.js'],
    skip: [
      'every file under node_modules', 'the generated tree', "errors: 'return'", 'any list that passes', '10^5', 'huge files',
      'async: node_modules', "async: errors: 'return'", 'async: the main thread', 'index.d.ts', 'worker threads terminated',
      'a sync batch runs concurrency',
    ],
  },
  'batch-helpers': {
    mutate: ['lib/batch.js:100-174'],
    tests: ['batch.test.js', 'side-effects.test.js'],
    skip: [
      'every file under node_modules', 'the generated tree', "errors: 'return'", 'any list that passes', '10^5', 'huge files',
      'async: node_modules', "async: errors: 'return'", 'async: the main thread', 'index.d.ts', 'worker threads terminated',
      'a sync batch runs concurrency',
    ],
  },
  'batch-options': {
    mutate: ['lib/batch.js:1-99'],
    tests: ['batch.test.js'],
    skip: [
      'every file under node_modules', 'the generated tree', "errors: 'return'", 'any list that passes', '10^5', 'huge files',
      'async: node_modules', "async: errors: 'return'", 'async: the main thread', 'index.d.ts', 'worker threads terminated',
      'a FIFO', 'several async batches', 'path forms', 'the first failing path',
    ],
  },
  async: {
    mutate: ['lib/async.js'],
    tests: ['async.test.js', 'limits.test.js', 'signal-listeners.test.js'],
    // Not the timings (of the main thread, of how soon an abort rejects), which a loaded machine fails.
    skip: ['64 concurrent reads', 'large async reads leave', 'one real /dev/zero read', 'an aborted signal rejects'],
  },
  pool: {
    mutate: ['lib/pool.js'],
    tests: ['pool-readers.test.js', 'concurrent-reads.test.js', 'batch-flow.test.js', 'signal-listeners.test.js', 'async.test.js'],
    skip: ['64 concurrent reads', 'large async reads leave', 'one real /dev/zero read', 'an aborted signal rejects'],
  },
  'fd-async': { mutate: ['lib/fd-async.js'], tests: ['fd-async.test.js', 'async.test.js'], skip: ['64 concurrent reads', 'large async reads leave'] },
  heap: { mutate: ['lib/heap.js', 'index.js', 'lib/no-native.js'], tests: ['memory-mode.test.js', 'loader.test.js'] },
  sync: {
    mutate: ['lib/sync.js', 'lib/paths.js', 'lib/errors.js'],
    tests: ['api.test.js', 'errors.test.js', 'special-files.test.js'],
  },
  options: { mutate: ['lib/options.js'], tests: ['flags.test.js', 'errors.test.js', 'api.test.js'] },
  decode: { mutate: ['lib/decode.js'], tests: ['decode.test.js', 'decode-routes.test.js'] },
  loader: { mutate: ['lib/binary-name.js'], tests: ['loader.test.js', 'packages.test.js'] },
}

const { values: args, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    survivors: { type: 'boolean', default: false },
    partial: { type: 'boolean', default: false },
    tests: { type: 'string' },
    grep: { type: 'string' },
    concurrency: { type: 'string', default: '2' },
    list: { type: 'boolean', default: false },
    help: { type: 'boolean', short: 'h', default: false },
  },
})

function usage(status) {
  console.log('usage: npm run mutate:js -- <campaign|all> [--survivors] [--partial] [--concurrency N] [--list]')
  console.log(`campaigns: ${Object.keys(CAMPAIGNS).join(', ')}`)
  process.exit(status)
}

const reportPath = (name) => path.join(REPORTS, `stryker-${name}.json`)
/** Where a running campaign appends each result (scripts/stryker-partial.mjs). */
const partialPath = (name) => path.join(ROOT, '.stryker-tmp', `${name}${args.survivors ? '-survivors' : ''}.jsonl`)

const column0 = (at) => {
  const [line, column] = at.split(':').map(Number)
  return `${line}:${column - 1}`
}

/** `mutate` entries for the mutants a report lists as not killed (a range each). */
function survivorRanges(name) {
  const report = JSON.parse(fs.readFileSync(reportPath(name), 'utf8'))
  return report.notKilled
    .filter((m) => m.status === 'Survived' || m.status === 'NoCoverage')
    // The report's columns count from 1, a range's from 0. Mutants inside a
    // survivor's span that were killed before run too, and are ignored.
    .map((m) => `${m.file}:${column0(m.from)}-${column0(m.to)}`)
}

/**
 * --test-name-pattern for every test but those `skip` names (Node 20 has no
 * --test-skip-pattern). A test runs when its name or an ancestor's matches:
 * the pattern must not match the root ('<root>') nor a file's test (its path).
 */
function skipping(skip) {
  if (skip === undefined) return ''
  // Escaped for the RegExp; a quote (the shell's) matches as any character.
  const escaped = skip.map((name) => name.replace(/[.*+?^${}()|[\]\\]/g, '\\$&').replace(/'/g, '.'))
  return ` '--test-name-pattern=^(?!(<root>|/|__test__/|${escaped.join('|')}))'`
}

function optionsFor(name, mutate) {
  // --tests (and --grep, a --test-name-pattern) narrow a run to the tests
  // written for its survivors: what they kill, the suite kills.
  const c = { ...CAMPAIGNS[name], ...(args.tests ? { tests: args.tests.split(','), skip: undefined } : {}) }
  const tests = c.tests.map((t) => path.join('__test__', t))
  for (const t of tests) if (!fs.existsSync(path.join(ROOT, t))) throw new Error(`campaign ${name}: no ${t}`)
  return {
    mutate,
    testRunner: 'command',
    // One test file at a time per mutant; Stryker runs `concurrency` mutants at once.
    commandRunner: {
      command: `node scripts/test-js.js ${tests.join(' ')} --test-concurrency=1${args.grep ? ` '--test-name-pattern=${args.grep}'` : skipping(c.skip)}`,
    },
    coverageAnalysis: 'off',
    concurrency: Number(args.concurrency),
    // A mutant that makes a read wait forever (a FIFO, a promise never settled) is a timeout.
    timeoutMS: 20_000,
    timeoutFactor: 1.25,
    dryRunTimeoutMinutes: 30,
    // What the tests need is the sources, node_modules (linked) and the addon
    // (gitignored, but copied: Stryker does not read .gitignore); not the
    // cargo target dir nor the bench's builds.
    ignorePatterns: ['/target', '/benchmark/bench-build', '/mutation', '/npm/*/*.node', '/.stryker-tmp'],
    tempDirName: '.stryker-tmp',
    cleanTempDir: true,
    reporters: ['progress-append-only', 'clear-text', 'partial'],
    clearTextReporter: { allowColor: false, logTests: false, reportScoreTable: true },
    plugins: [path.join(__dirname, 'stryker-partial.mjs')],
    logLevel: 'info',
    fileLogLevel: 'off',
  }
}

const LINE = (loc) => `${loc.line}:${loc.column}`

/** A mutant not killed, as the report lists it. */
function entry(r) {
  return {
    file: path.relative(ROOT, r.fileName),
    from: LINE(r.location.start),
    to: LINE(r.location.end),
    mutator: r.mutatorName,
    replacement: (r.replacement ?? '').replace(/\s+/g, ' ').slice(0, 160),
    status: r.status,
  }
}
const keyOf = (m) => `${m.file}:${m.from}-${m.to}:${m.mutator}:${m.replacement}`

/**
 * The report of a run. With `previous` (a --survivors run, whose ranges may
 * hold mutants killed before), only the mutants `previous` lists as survived
 * or not covered take their new status.
 */
function summarize(name, results, seconds, previous) {
  let counts = countsOf(results)
  let notKilled = results.filter((r) => r.status !== 'Killed').map(entry)
  if (previous !== undefined) {
    const now = new Map(results.map((r) => [keyOf(entry(r)), r.status]))
    counts = { ...previous.counts }
    notKilled = []
    for (const m of previous.notKilled) {
      const status = m.status === 'Survived' || m.status === 'NoCoverage' ? (now.get(keyOf(m)) ?? m.status) : m.status
      counts[m.status]--
      counts[status]++
      if (status !== 'Killed') notKilled.push({ ...m, status })
    }
  }
  const detected = counts.Killed + counts.Timeout
  const valid = detected + counts.Survived + counts.NoCoverage
  const score = (c) => Math.round((1000 * (c.Killed + c.Timeout)) / (c.Killed + c.Timeout + c.Survived + c.NoCoverage)) / 10
  return {
    campaign: name,
    files: CAMPAIGNS[name].mutate,
    tests: CAMPAIGNS[name].tests,
    node: process.version,
    counts,
    score: valid ? score(counts) : null,
    firstRun: previous?.firstRun ?? { counts, score: valid ? score(counts) : null, seconds: Math.round(seconds), tests: CAMPAIGNS[name].tests },
    lastRun: { mutants: results.length, seconds: Math.round(seconds), survivorsOnly: previous !== undefined, tests: args.tests?.split(',') ?? CAMPAIGNS[name].tests, grep: args.grep },
    notKilled,
  }
}

function countsOf(results) {
  const counts = { total: results.length, Killed: 0, Survived: 0, Timeout: 0, NoCoverage: 0, RuntimeError: 0, CompileError: 0, Ignored: 0 }
  for (const r of results) counts[r.status] = (counts[r.status] ?? 0) + 1
  return counts
}

async function run(name) {
  if (findBinary() === null) throw new Error('no local build of the addon: run npm ci (or npm run build) first')
  const previous = args.survivors ? JSON.parse(fs.readFileSync(reportPath(name), 'utf8')) : undefined
  const mutate = args.survivors ? survivorRanges(name) : CAMPAIGNS[name].mutate
  if (mutate.length === 0) {
    console.log(`${name}: no survivors to run again`)
    return
  }
  let results
  const started = Date.now()
  if (args.partial) {
    // A run that did not end: what it tested, from its results file.
    const lines = fs.readFileSync(partialPath(name), 'utf8').split('\n').filter(Boolean)
    results = lines.map((line) => JSON.parse(line))
  } else {
    const { Stryker } = await import('@stryker-mutator/core')
    fs.mkdirSync(path.dirname(partialPath(name)), { recursive: true })
    fs.writeFileSync(partialPath(name), '')
    process.env.READFILE_UTF8_STRYKER_PARTIAL = partialPath(name)
    results = await new Stryker(optionsFor(name, mutate)).runMutationTest()
    fs.rmSync(partialPath(name), { force: true })
  }
  const summary = summarize(name, results, (Date.now() - started) / 1000, previous)
  if (args.partial) summary.partial = `only ${results.length} mutants were tested: the run was stopped`
  fs.mkdirSync(REPORTS, { recursive: true })
  fs.writeFileSync(reportPath(name), `${JSON.stringify(summary, null, 2)}\n`)
  const c = summary.counts
  console.log(
    `${name}: ${c.total} mutants, ${c.Killed} killed, ${c.Survived} survived, ${c.Timeout} timed out, ` +
      `${c.NoCoverage} not covered; score ${summary.score} % (${path.relative(ROOT, reportPath(name))})`,
  )
}

async function main() {
  if (args.help) usage(0)
  if (args.list) {
    for (const [name, c] of Object.entries(CAMPAIGNS)) console.log(`${name.padEnd(10)} ${c.mutate.join(' ')}  <-  ${c.tests.join(' ')}`)
    return
  }
  const [name] = positionals
  if (name === undefined) usage(2)
  const names = name === 'all' ? Object.keys(CAMPAIGNS) : [name]
  for (const n of names) {
    if (!Object.hasOwn(CAMPAIGNS, n)) usage(2)
    await run(n)
  }
}

main().catch((err) => {
  console.error(err)
  process.exit(1)
})
