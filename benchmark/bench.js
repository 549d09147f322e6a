'use strict'
// npm run bench [-- options]: runs benchmark suites with this Node and prints
// their reports: with no --suite, a short form of what the README claims (TOUR),
// --full the long run (FULL_SUITES); first, the identity check (identity.js) and
// where the cache is (cache.js). With --save, also writes each suite's report
// (with the date, build, machine, Node and options) into benchmark/RESULTS.md, in
// place of that suite's earlier run on this Node line. Each suite is a script of
// its own that prints Markdown to stdout, so it also runs alone:
// `node benchmark/memory.js --quick`.
//
// CommonJS with only Node 20+ APIs, and the addon loaded as require('..'), so any
// Node binary runs it: `/path/to/node benchmark/bench.js --quick`.
const path = require('node:path')
const { spawn } = require('node:child_process')

const { environment, describe, RESULTS } = require('./environment')
const { MiB, sizeLabel, duration } = require('./format')
const { checkIdentity, SIZES: IDENTITY_SIZES } = require('./identity')
const cache = require('./cache')
const { parseList } = require('./options')
const { saveRun, updateReadme } = require('./results-file')

/**
 * Every suite, in the order `all` runs them: its script, arguments it always
 * gets, and one line of help. Register a new suite here. Left out of `all`:
 * `partOf`, a suite whose report another one already contains, `fetches`,
 * one that needs the npm registry, and `builds`, one that compiles a bench build.
 */
const SUITES = {
  read: { script: 'matrix.js', about: "readFileUtf8 vs fs.readFileSync(p, 'utf8'): median, mean, sustained, batched, loaded-heap and gapped speed-ups" },
  memory: { script: 'memory.js', about: 'peak and idle RSS of loops of reads (sync and async), each reader in a fresh process' },
  mixed: { script: 'mixed.js', about: 'a shuffled sequence of every kind and size (fs, toString, ours, lean, Bun; fs, toString and ours under Deno), and the matrix cells one after another vs alone' },
  sustained: { script: 'matrix.js', args: ['--views', 'sustained'], partOf: 'read', about: "the read matrix's plain loops alone" },
  async: { script: 'async.js', about: '64 concurrent readFileUtf8Async vs fs.promises.readFile, with event-loop delay' },
  decode: { script: 'decode.js', about: "decodeUtf8 vs buffer.toString('utf8') and TextDecoder" },
  register: { script: 'register.js', about: "require('typescript') with and without readfile-utf8/register" },
  floor: { script: 'floor.js', about: 'the read step and the string step alone, and the caps on the speed-up they set' },
  batch: { script: 'batch.js', about: "readFilesUtf8(Async) over node_modules and a generated tree, against loops of fs, of ours and of Bun's readFileSync" },
  tree: { script: 'tree.js', about: 'every file under --dir (default node_modules) read once per fresh process: fs, fs.promises, the hook, Bun, ours five ways; first pass vs steady; the read floor' },
  tools: { script: 'tools.js', fetches: true, about: "ESLint, Prettier, Rollup and tsc (pinned, from the npm registry) on three's sources, with and without readfile-utf8/register" },
  bun: { script: 'bun.js', fetches: true, about: "readFileUtf8 in plain loops against fs.readFileSync(p, 'utf8') on this Node and on Bun" },
  calibrate: { script: 'calibrate.js', builds: true, about: "where each tuned value of lib/limits.json lies on this machine, one row each (with a bench build, brought up to date first)" },
}
/** What --full (and --save without --suite) runs, each suite with its own defaults. */
const FULL_SUITES = ['mixed', 'read', 'memory']
/**
 * What `npm run bench` runs with no --suite and no --full, and the arguments
 * each suite then gets before the user's: the mixed sequence (fs, toString,
 * ours, lean: median and mean pass, ratios over fs, RSS) in two processes per
 * reader instead of three, without the history view and without fetching Bun
 * and Deno; the read matrix's median and mean views at three sizes, in its
 * --quick timings.
 */
const TOUR = {
  mixed: ['--views', 'passes', '--rounds', '2', '--no-bun', '--no-deno'],
  read: ['--views', 'median', '--size', '1KiB,64KiB,1MiB', '--quick'],
}

const HELP = `Usage: npm run bench [-- options]    (or: node benchmark/bench.js [options])

Runs benchmark suites with this Node and prints their reports. Writes no file
unless --save is given.

With no --suite: ${Object.entries(TOUR).map(([name, args]) => `${name} ${args.join(' ')}`).join('; ')}
(about a minute on 2 cores), after checking that ours returns fs's string for every kind
and size it reads.

  --full             the long run instead: ${FULL_SUITES.join(', ')} with their own defaults, Bun and Deno
                     included (about 25 minutes on 2 cores)
  --suite <list>     comma-separated suites, each with its own defaults; 'all' runs every one but sustained, tools, bun and calibrate:
${Object.entries(SUITES)
  .map(([name, s]) => `                       ${name.padEnd(10)} ${s.about}`)
  .join('\n')}
  --save             write each suite's report (with the date, build, machine and
                     Node) into ${RESULTS}, replacing that suite's section for
                     this Node line; without --suite, runs what --full runs
  -h, --help         this text

Every other option goes to each suite run. Every suite takes:
  --quick            fewer sizes and shorter timings
  --content <list>   content classes: ascii, latin1, utf8_mixed, cjk, invalid (default: all)
  --size <list>      sizes, e.g. 64B,16KiB,4MiB (each suite has its defaults)
  --memory-mode <m>  lean or fast: readfile-utf8's setMemoryMode for "ours" (default: fast;
                     memory also measures lean beside it)
and its own, listed at the head of its script (e.g. read: --views median,sustained,batched,loaded,gapped,
--time ms, --loop-ms ms, --batch-ms ms, --gap-ms ms; memory: --loop-mib n, --idle-ms ms, --async-reads n;
bun: --bun path, --loop-ms ms, --rounds n; tree: --dir D, --runs n; tools: --pairs n, --tools list).
`

class UsageError extends Error {}

function parseCommandLine(argv) {
  const options = { suites: [], save: false, full: false, help: false, forwarded: [] }
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]
    if (arg === '--suite' || arg.startsWith('--suite=')) {
      const value = arg === '--suite' ? argv[++i] : arg.slice('--suite='.length)
      if (value === undefined) throw new UsageError('--suite needs a value')
      options.suites.push(...parseList(value))
    } else if (arg === '--save') {
      options.save = true
    } else if (arg === '--full') {
      options.full = true
    } else if (arg === '--no-save') {
      // the default since runs are saved only when asked; still accepted
      options.save = false
    } else if (arg === '-h' || arg === '--help') {
      options.help = true
    } else {
      options.forwarded.push(arg)
    }
  }
  // The tour's arguments for each suite (none: the suite's own defaults).
  options.preset = {}
  if (options.suites.length === 0 && (options.full || options.save)) options.suites = FULL_SUITES
  else if (options.suites.length === 0) {
    options.suites = Object.keys(TOUR)
    options.preset = TOUR
  }
  if (options.suites.includes('all')) options.suites = Object.keys(SUITES).filter((s) => !SUITES[s].partOf && !SUITES[s].fetches && !SUITES[s].builds)
  for (const s of options.suites) {
    if (!SUITES[s]) throw new UsageError(`unknown suite '${s}' (known: ${Object.keys(SUITES).join(', ')}, all)`)
  }
  return options
}

/** Runs one suite's script with this Node; its stdout goes to ours and is returned. */
function runSuite(name, forwarded) {
  const { script, args = [] } = SUITES[name]
  const child = spawn(process.execPath, [path.join(__dirname, script), ...args, ...forwarded], {
    stdio: ['ignore', 'pipe', 'inherit'],
  })
  let output = ''
  child.stdout.setEncoding('utf8')
  child.stdout.on('data', (text) => {
    output += text
    process.stdout.write(text)
  })
  return new Promise((resolve, reject) => {
    child.on('error', reject)
    child.on('close', (status, signal) => resolve({ output, status: status ?? signal }))
  })
}

/**
 * The sizes the identity check covers: those of the default suites, and the
 * 64 MiB files when a suite that reads them runs at its own sizes.
 */
function identitySizes(options) {
  const own = !options.forwarded.some((arg) => arg === '--quick' || arg.startsWith('--size'))
  const large = own && options.suites.some((name) => ['read', 'memory', 'sustained'].includes(name) && !options.preset[name])
  return large ? [...IDENTITY_SIZES, 64 * MiB] : IDENTITY_SIZES
}

async function main() {
  const options = parseCommandLine(process.argv.slice(2))
  if (options.help) {
    process.stdout.write(HELP)
    return
  }
  const started = performance.now()
  const env = environment()
  const about = describe(env)
  process.stdout.write(`${about.join('\n')}\n\n`)
  if (Number(env.load) > 0.5 * env.cores) {
    process.stderr.write(`note: load average ${env.load} on ${env.cores} cores; expect wider spreads\n`)
  }
  const cached = cache.snapshot()
  process.stderr.write(`${cache.beforeLine(cached)}\n`)
  const identity = await checkIdentity(identitySizes(options), (kind, size) =>
    process.stderr.write(`bench: generating fixture ${kind} ${sizeLabel(size)}\n`),
  )
  process.stdout.write(`${identity}\n\n`)

  const done = []
  let failed = 0
  for (const [i, name] of options.suites.entries()) {
    const forwarded = [...(options.preset[name] ?? []), ...options.forwarded]
    process.stderr.write(`bench: [${i + 1}/${options.suites.length}] ${name}${forwarded.length ? ` ${forwarded.join(' ')}` : ''}: ${SUITES[name].about}\n`)
    process.stdout.write(`### ${name}\n\n`)
    const suiteStarted = performance.now()
    const { output, status } = await runSuite(name, forwarded)
    const took = duration(performance.now() - suiteStarted)
    if (status !== 0) {
      failed++
      process.stderr.write(`bench: suite ${name} failed (${status}) after ${took}; not saved\n`)
    } else {
      process.stderr.write(`bench: ${name} took ${took}\n`)
      done.push({ name, output, took, forwarded })
    }
    process.stdout.write('\n')
  }

  const total = duration(performance.now() - started)
  const command = ['node benchmark/bench.js', ...process.argv.slice(2)].join(' ')
  if (options.save && done.length > 0) {
    const suites = done.map(({ name, output, took, forwarded }) => ({
      name,
      output,
      about: [
        ...about,
        `- ${identity}`,
        `- run: \`${command}\` (suites ${options.suites.join(', ')}; options ${forwarded.join(' ') || 'none'}); ${name} took ${took} of ${total}`,
      ],
    }))
    const partOf = Object.fromEntries(Object.entries(SUITES).flatMap(([suite, { partOf: whole }]) => (whole ? [[suite, whole]] : [])))
    const file = saveRun({ date: env.date, node: env.node, suites }, Object.keys(SUITES), partOf)
    process.stderr.write(`saved ${done.map((s) => s.name).join(', ')} to ${path.relative(process.cwd(), file)}\n`)
    if (done.some((s) => s.name === 'mixed' || s.name === 'tools') && updateReadme()) process.stderr.write('updated the speed-ups in README.md\n')
  }
  process.stderr.write(`${cache.afterLine(cached, cache.snapshot())}\n`)
  process.stderr.write(`finished in ${total}${options.preset === TOUR ? ' (the long run: npm run bench -- --full)' : ''}\n`)
  if (failed) process.exitCode = 1
}

main().catch((err) => {
  if (err instanceof UsageError) {
    process.stderr.write(`bench: ${err.message}\n(see: node benchmark/bench.js --help)\n`)
    process.exitCode = 2
  } else {
    process.stderr.write(`\n${err.stack || err}\n`)
    process.exitCode = 1
  }
})
