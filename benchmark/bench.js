'use strict'
// npm run bench [-- options]: runs benchmark suites with this Node and prints
// their reports; with --save, also writes each suite's report (with the date,
// build, machine, Node and options) into benchmark/RESULTS.md, in place of that
// suite's earlier run on this Node line. Each suite is a script of its own that prints
// Markdown to stdout, so it also runs alone: `node benchmark/memory.js --quick`.
//
// CommonJS with only Node 20+ APIs, and the addon loaded as require('..'), so any
// Node binary runs it: `/path/to/node benchmark/bench.js --quick`.
const path = require('node:path')
const { spawn } = require('node:child_process')

const { environment, describe, RESULTS } = require('./environment')
const { duration } = require('./format')
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
  calibrate: { script: 'calibrate.js', builds: true, about: "where each threshold of src/limits.rs and decodeUtf8's routes lies on this machine (with a bench build, brought up to date first)" },
}
const DEFAULT_SUITES = ['mixed', 'read', 'memory']

const HELP = `Usage: npm run bench [-- options]    (or: node benchmark/bench.js [options])

Runs benchmark suites with this Node and prints their reports. Writes no file
unless --save is given.

  --suite <list>     comma-separated, default ${DEFAULT_SUITES.join(',')}; 'all' runs every one but sustained, tools, bun and calibrate:
${Object.entries(SUITES)
  .map(([name, s]) => `                       ${name.padEnd(10)} ${s.about}`)
  .join('\n')}
  --save             write each suite's report (with the date, build, machine and
                     Node) into ${RESULTS}, replacing that suite's section for
                     this Node line
  -h, --help         this text

Every other option goes to each suite run. Every suite takes:
  --quick            fewer sizes and shorter timings (the default suites in about two minutes)
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
  const options = { suites: [], save: false, help: false, forwarded: [] }
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]
    if (arg === '--suite' || arg.startsWith('--suite=')) {
      const value = arg === '--suite' ? argv[++i] : arg.slice('--suite='.length)
      if (value === undefined) throw new UsageError('--suite needs a value')
      options.suites.push(...parseList(value))
    } else if (arg === '--save') {
      options.save = true
    } else if (arg === '--no-save') {
      // the default since runs are saved only when asked; still accepted
      options.save = false
    } else if (arg === '-h' || arg === '--help') {
      options.help = true
    } else {
      options.forwarded.push(arg)
    }
  }
  if (options.suites.length === 0) options.suites = DEFAULT_SUITES
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

  const done = []
  let failed = 0
  for (const name of options.suites) {
    process.stdout.write(`### ${name}\n\n`)
    const suiteStarted = performance.now()
    const { output, status } = await runSuite(name, options.forwarded)
    const took = duration(performance.now() - suiteStarted)
    if (status !== 0) {
      failed++
      process.stderr.write(`bench: suite ${name} failed (${status}); not saved\n`)
    } else {
      done.push({ name, output, took })
    }
    process.stdout.write('\n')
  }

  const total = duration(performance.now() - started)
  const command = ['node benchmark/bench.js', ...process.argv.slice(2)].join(' ')
  if (options.save && done.length > 0) {
    const suites = done.map(({ name, output, took }) => ({
      name,
      output,
      about: [
        ...about,
        `- run: \`${command}\` (suites ${options.suites.join(', ')}; options ${options.forwarded.join(' ') || 'none'}); ${name} took ${took} of ${total}`,
      ],
    }))
    const file = saveRun({ date: env.date, node: env.node, suites }, Object.keys(SUITES))
    process.stderr.write(`saved ${done.map((s) => s.name).join(', ')} to ${path.relative(process.cwd(), file)}\n`)
    if (done.some((s) => s.name === 'mixed') && updateReadme()) process.stderr.write('updated the speed-ups in README.md\n')
  }
  process.stderr.write(`finished in ${total}\n`)
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
