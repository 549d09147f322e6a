'use strict'
// npm run bench [-- options]: readFileUtf8(p) against fs.readFileSync(p, 'utf8') and
// the raw fs.readFileSync(p) (just reading the bytes), side by side in one process,
// over content classes × file sizes. Run `node benchmark/bench.js --help`.
//
// In one process a reader's speed depends on the heap the others leave: on Node
// 26, fs.readFileSync of 256 KiB of mixed text took 210-215 µs a call alone and
// 85-90 µs beside our external strings (210 µs beside copied ones). `--isolate`
// times each contender in a process of its own (benchmark/contender.js), once
// per round, so that each one's heap holds only its own strings.
//
// CommonJS with only Node 20+ APIs, and the addon loaded as require('..'), so any
// Node binary can run this same file: `/path/to/node-26 benchmark/bench.js --quick`.
const fs = require('node:fs')
const path = require('node:path')
const { parseArgs } = require('node:util')

const { CONTENTS, SIZES, KiB, MiB, ensureFixture, fixtureDir } = require('./fixtures')
const { measureCell, planBatching, inProcessesInTurns, summarize, SAMPLING, hasGc } = require('./measure')
const { CONTENDERS } = require('./contender')
const report = require('./report')

const QUICK_SIZES = [KiB, 256 * KiB, 4 * MiB]
// Measured time per contender per cell. Full: 35 cells × 3 contenders × 0.9 s ≈ 95 s
// of timed calls (plus warm-up, checks and GC), well inside 5 minutes on 2 cores.
const FULL_BUDGET_MS = 900
const QUICK_BUDGET_MS = 240

const HELP = `Usage: npm run bench [-- options]    (or: node benchmark/bench.js [options])

Times readFileUtf8(p), fs.readFileSync(p, 'utf8') and fs.readFileSync(p) (raw
Buffer) interleaved in one process, for each content class × file size, after
checking that readFileUtf8's result === fs's. Progress goes to stderr; tables,
speedup matrices (of medians, of means) and a bar chart to stdout; JSON and Markdown to
benchmark/results/node-<major>[-quick][-subset][-isolated].{json,md}.

Options:
  --quick             sizes 1KiB,256KiB,4MiB and ${QUICK_BUDGET_MS} ms per contender per cell (< 1 min)
  --content <list>    comma-separated content classes (default: all)
                      ${Object.keys(CONTENTS).join(', ')}
  --size <list>       comma-separated sizes, e.g. 64B,16KiB,4MiB (default: all:
                      ${SIZES.map(report.sizeLabel).join(', ')})
  --time <ms>         measured time per contender per cell (default ${FULL_BUDGET_MS}, quick ${QUICK_BUDGET_MS})
  --rounds <n>        interleaved rounds per cell (default 3)
  --isolate           time each contender in a process of its own, once per round
                      (no heap shared with the other contenders)
  --suite <list>      which benchmarks (default: read):
                      read      readFileUtf8 vs fs.readFileSync (this matrix)
                      async     64 concurrent readFileUtf8Async vs fs.promises.readFile,
                                with the main thread's event-loop delay
                      decode    decodeUtf8 vs buffer.toString('utf8') and TextDecoder
                      register  require('typescript') with and without readfile-utf8/register
                      floor     the read step and the string step timed alone, and the caps
                                on the speed-up over fs that they set
                      sustained plain loops of reads, each reader in a process of its own,
                                no gc() between loops (how a tool reading many files runs)
                      batch     readFilesUtf8(Async) over node_modules and a generated tree
                      all       every suite above, in that order
  -h, --help          this text

Fixtures are generated once (seeded PRNG, deterministic) into
  $READFILE_UTF8_CACHE/fixtures, default \${XDG_CACHE_HOME:-~/.cache}/readfile-utf8/fixtures
  (now: ${fixtureDir()})
Contents:
${Object.entries(CONTENTS)
  .map(([k, v]) => `  ${k.padEnd(11)} ${v}`)
  .join('\n')}
`

class UsageError extends Error {}
class MismatchError extends Error {}

function parseOptions(argv) {
  let values
  try {
    ;({ values } = parseArgs({
      args: argv,
      options: {
        quick: { type: 'boolean', default: false },
        content: { type: 'string', multiple: true },
        size: { type: 'string', multiple: true },
        time: { type: 'string' },
        rounds: { type: 'string' },
        isolate: { type: 'boolean', default: false },
        suite: { type: 'string', multiple: true },
        help: { type: 'boolean', short: 'h', default: false },
      },
      strict: true,
      allowPositionals: false,
    }))
  } catch (err) {
    throw new UsageError(err.message)
  }
  const list = report.parseList

  const contents = list(values.content)
  for (const c of contents) {
    if (!(c in CONTENTS)) throw new UsageError(`unknown content '${c}' (known: ${Object.keys(CONTENTS).join(', ')})`)
  }
  let sizes
  try {
    sizes = list(values.size).map(report.parseSize)
  } catch (err) {
    throw new UsageError(err.message)
  }
  const suites = list(values.suite)
  for (const suite of suites) {
    if (!['read', 'all', ...OTHER_SUITES].includes(suite)) {
      throw new UsageError(`unknown suite '${suite}' (known: read, ${OTHER_SUITES.join(', ')}, all)`)
    }
  }
  const positive = (name, text) => {
    const n = Number(text)
    if (!(n > 0) || !Number.isFinite(n)) throw new UsageError(`--${name} needs a positive number, got '${text}'`)
    return n
  }
  return {
    help: values.help,
    quick: values.quick,
    subset: contents.length > 0 || sizes.length > 0,
    contents: contents.length ? Object.keys(CONTENTS).filter((c) => contents.includes(c)) : Object.keys(CONTENTS),
    sizes: [...new Set(sizes.length ? sizes : values.quick ? QUICK_SIZES : SIZES)].sort((a, b) => a - b),
    budgetMs: values.time ? positive('time', values.time) : values.quick ? QUICK_BUDGET_MS : FULL_BUDGET_MS,
    rounds: values.rounds ? Math.round(positive('rounds', values.rounds)) : 3,
    isolate: values.isolate,
    suites: suites.length ? suites : ['read'],
  }
}

/** Progress on stderr: one rewritten line on a terminal, one line per step otherwise. */
function progressLine() {
  const tty = process.stderr.isTTY
  let shown = false
  return {
    show(text) {
      if (tty) {
        process.stderr.write(`\r\x1b[2K${text}`)
        shown = true
      } else {
        process.stderr.write(`${text}\n`)
      }
    },
    clear() {
      if (tty && shown) process.stderr.write('\r\x1b[2K')
      shown = false
    },
  }
}

function duration(ms) {
  const s = Math.round(ms / 1000)
  return s < 60 ? `${s}s` : `${Math.floor(s / 60)}m${String(s % 60).padStart(2, '0')}s`
}

/** Never time a wrong answer: stop with the first difference if the results differ. */
function verify(readFileUtf8, file, content, size) {
  const ours = readFileUtf8(file)
  const ref = fs.readFileSync(file, 'utf8')
  if (ours === ref) return
  let i = 0
  if (typeof ours === 'string') {
    const n = Math.min(ours.length, ref.length)
    while (i < n && ours.charCodeAt(i) === ref.charCodeAt(i)) i++
  }
  const around = (s) => (typeof s === 'string' ? JSON.stringify(s.slice(Math.max(0, i - 12), i + 12)) : String(s))
  throw new MismatchError(
    `MISMATCH for ${content} ${report.sizeLabel(size)} (${file}): readFileUtf8 !== fs.readFileSync(p, 'utf8')\n` +
      `  type ${typeof ours}, length ${ours?.length} vs ${ref.length}; first difference at UTF-16 index ${i}\n` +
      `  readFileUtf8: ${around(ours)}\n  fs:           ${around(ref)}\n` +
      'Stopping: a wrong answer is not benchmarked.',
  )
}

/**
 * measureCell's statistics, each contender timed by benchmark/contender.js in a
 * process of its own, once per round, starting with a different one each round.
 * Whether the cell is timed in batches is decided here, once for all of them,
 * as measureCell does (measure.planBatching).
 */
function measureInProcesses(names, file, { budgetMs, rounds, minSamples, warmupMs }) {
  const batched = planBatching(
    names.map((name) => ({ fn: CONTENDERS[name](file) })),
    warmupMs,
  )
  const args = [budgetMs / rounds, Math.ceil(minSamples / rounds), warmupMs, batched ? 1 : 0].map(String)
  const runs = inProcessesInTurns(names, rounds, (name) => [path.join(__dirname, 'contender.js'), name, file, ...args])
  return Object.fromEntries(
    names.map((n) => [
      n,
      { ...summarize(runs[n].flatMap((run) => run.samples), runs[n].reduce((sum, run) => sum + run.calls, 0)), batched },
    ]),
  )
}

/** The suites beside the read matrix: separate scripts, run with this same Node. */
const OTHER_SUITES = ['async', 'decode', 'register', 'floor', 'sustained', 'batch']

function runSuiteScript(suite) {
  const { spawnSync } = require('node:child_process')
  console.log(`\n=== ${suite} (node benchmark/${suite}.js)\n`)
  const r = spawnSync(process.execPath, [path.join(__dirname, `${suite}.js`)], { stdio: 'inherit' })
  if (r.status !== 0) throw new Error(`benchmark/${suite}.js failed (${r.status ?? r.signal})`)
}

async function main() {
  const options = parseOptions(process.argv.slice(2))
  if (options.help) {
    process.stdout.write(HELP)
    return
  }
  const suites = options.suites.includes('all') ? ['read', ...OTHER_SUITES] : options.suites
  if (suites.includes('read')) await runReadMatrix(options)
  for (const suite of OTHER_SUITES.filter((s) => suites.includes(s))) runSuiteScript(suite)
}

async function runReadMatrix(options) {
  const started = performance.now()
  const addon = require('..')
  const { readFileUtf8 } = addon
  const env = report.environment(addon)
  const progress = progressLine()

  console.log(report.headerLine(env))
  if (env.loadavg1m > 0.5) {
    process.stderr.write(`note: load average ${env.loadavg1m} on ${env.cores} cores; expect wider spreads\n`)
  }
  console.log(
    `${options.quick ? 'quick' : 'full'}${options.subset ? ' (subset)' : ''} run: ${options.contents.length} contents × ${options.sizes.length} sizes, ` +
      `${options.budgetMs} ms per contender per cell in ${options.rounds} interleaved rounds` +
      `${options.isolate ? ', each contender in a process of its own' : ''}` +
      `${hasGc ? '' : ' (no gc() available: GC not settled between loops)'}\n` +
      `${SAMPLING};\n` +
      "times: median per call; p75–p99 in the median's unit; speedup = fs median / readFileUtf8 median;\n" +
      'of means = fs mean / readFileUtf8 mean (it carries GC pauses that fall in a few samples)\n',
  )

  // Fixtures first, so generating 64 MiB files never lands inside a measurement.
  const fixtures = new Map()
  const all = options.contents.flatMap((content) => options.sizes.map((size) => ({ content, size })))
  let generated = 0
  for (const { content, size } of all) {
    const fixture = ensureFixture(content, size, () =>
      progress.show(`generating fixture ${content} ${report.sizeLabel(size)} into ${fixtureDir()}`),
    )
    generated += fixture.generated
    fixtures.set(`${content}/${size}`, fixture)
  }
  progress.clear()
  process.stderr.write(`fixtures: ${all.length} ready in ${fixtureDir()} (${generated} generated now)\n`)

  const results = []
  const cellsStarted = performance.now()
  // Large files get fewer samples (each call is slow) but never fewer than this.
  const minSamples = 3 * options.rounds
  const warmupMs = options.quick ? 10 : 25
  for (const content of options.contents) {
    const cells = []
    for (const size of options.sizes) {
      const done = results.length
      const left = all.length - done
      const eta = done ? `, ~${duration(((performance.now() - cellsStarted) / done) * left)} to go` : ''
      progress.show(`[${done + 1}/${all.length}] ${content} ${report.sizeLabel(size)} — ${left - 1} more after this${eta}`)

      const { file, bytes } = fixtures.get(`${content}/${size}`)
      verify(readFileUtf8, file, content, size)
      const opts = { budgetMs: options.budgetMs, rounds: options.rounds, minSamples, warmupMs }
      const names = Object.keys(CONTENDERS)
      const stats = options.isolate
        ? measureInProcesses(names, file, opts)
        : await measureCell(
            names.map((name) => ({ name, fn: CONTENDERS[name](file) })),
            opts,
          )
      const cell = {
        content,
        size,
        bytes,
        ours: stats.ours,
        fs: stats.fs,
        buffer: stats.buffer,
        speedup: stats.fs.median / stats.ours.median,
        meanSpeedup: stats.fs.mean / stats.ours.mean,
        // bytes per ns is 10^9 bytes per second
        gbps: bytes / stats.ours.median,
        oursOverBuffer: stats.ours.median / stats.buffer.median,
      }
      cells.push(cell)
      results.push(cell)
    }
    progress.clear()
    console.log(report.contentTable(content, CONTENTS[content], cells) + '\n')
  }

  console.log(report.speedupMatrix(results).join('\n') + '\n')
  console.log(report.speedupMatrix(results, 'text', 'meanSpeedup').join('\n') + '\n')
  console.log(report.barChart(results) + '\n')

  const name = `node-${process.versions.node.split('.')[0]}${options.quick ? '-quick' : ''}${options.subset ? '-subset' : ''}${options.isolate ? '-isolated' : ''}`
  const recorded = { ...options, sampling: SAMPLING }
  delete recorded.help
  const written = report.writeResults(path.join(__dirname, 'results'), name, env, recorded, results, CONTENTS)
  console.log(`results: ${written.map((f) => path.relative(process.cwd(), f)).join(', ')}`)
  process.stderr.write(`finished in ${duration(performance.now() - started)}\n`)
}

main().catch((err) => {
  if (err instanceof UsageError) {
    process.stderr.write(`bench: ${err.message}\n(see: node benchmark/bench.js --help)\n`)
    process.exitCode = 2
  } else {
    process.stderr.write(`\n${err instanceof MismatchError ? err.message : err.stack || err}\n`)
    process.exitCode = 1
  }
})
