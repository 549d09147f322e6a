'use strict'
// tools: real tools from the npm registry, each at a pinned version, on a real
// corpus (a pinned package's sources), with and without
// `--import readfile-utf8/register`. `npm run bench -- --suite tools`, or
//
//   node benchmark/tools.js [--pairs n] [--tools eslint,prettier,rollup,tsc] [--quick]
//
// The tools and the corpus are installed by scripts/get-tool.sh into the
// bench's cache folder (never into this repo's dependencies); the corpus is
// copied into a temporary folder with each tool's config, and every run works
// there. Per tool:
//   1. two probe runs (tools-probe.js), without and with the hook: which fs
//      functions the tool calls, how it reads (sync or async, strings or
//      Buffers it decodes itself), and the time with a read in flight;
//   2. --pairs rounds of: a plain run, a run with the hook (the pair: their
//      ratio, pair by pair), and a run whose reads cost nothing
//      (tools-free-reads.js serves from memory every file the probe saw read
//      whole, read before the tool starts): the difference to the plain run
//      is what reading costs the tool, its share of the wall time;
//   3. where it reads Buffers, the same files' Buffers through
//      buffer.toString('utf8'), TextDecoder and decodeUtf8, one pass in a
//      fresh process each.
// Wall time: from spawning the tool's process to its exit, on this Node; CPU
// time: that process's, all threads, from bash's `times`.
const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const { execFileSync, spawnSync } = require('node:child_process')
const { pathToFileURL } = require('node:url')

const { regularFiles, writeTemp } = require('./file-list')
const { fmtMiB, fmtRatio, table } = require('./format')
const { suiteOptions, parseList } = require('./options')
const { median } = require('./timing')

const ROOT = path.join(__dirname, '..')
const opts = suiteOptions('tools.js', { pairs: { type: 'string' }, tools: { type: 'string' } })
const PAIRS = Math.round(opts.number('pairs', 7, 2))

/**
 * The corpus: three.js's sources. Many small ES modules (most under 10 KiB,
 * some shader chunks of a few hundred bytes) in a deep tree, with no
 * dependency, so that every tool below reads all of them with no plugin:
 * ESLint and Prettier as they are, Rollup from the package's three entries.
 */
const CORPUS = { pkg: 'three', version: '0.187.0', dir: 'src' }

/** Each tool: its package at an exact version, its bin, the arguments (run in the work folder), the exit codes that mean it ran. */
const TOOLS = {
  eslint: {
    pkg: 'eslint',
    version: '10.15.0',
    bin: 'bin/eslint.js',
    args: ['src'],
    exits: [0, 1],
    about: 'ESLint, flat config (`eslint.config.mjs`) with one rule: `no-debugger`',
  },
  prettier: {
    pkg: 'prettier',
    version: '3.10.1',
    bin: 'bin/prettier.cjs',
    args: ['--check', 'src'],
    exits: [0, 1],
    about: 'Prettier `--check` (default options)',
  },
  rollup: {
    pkg: 'rollup',
    version: '4.68.8',
    bin: 'dist/bin/rollup',
    args: ['-i', 'src/Three.js', '-i', 'src/Three.WebGPU.js', '-i', 'src/Three.TSL.js', '-d', 'out', '-f', 'es', '--silent'],
    exits: [0],
    about: "Rollup, a build of three's entries `Three.js`, `Three.WebGPU.js` and `Three.TSL.js`, no plugins",
  },
  tsc: {
    pkg: 'typescript',
    version: '5.9.3',
    bin: 'bin/tsc',
    args: ['-p', '.', '--listFilesOnly'],
    exits: [0],
    about: 'TypeScript `tsc -p . --listFilesOnly` (`allowJs`): builds the program, so reads and parses every file and its libs, no type check',
  },
}

/** The files each tool finds in the work folder beside the corpus. */
const CONFIGS = {
  'eslint.config.mjs': "export default [{ files: ['**/*.js'], rules: { 'no-debugger': 'error' } }]\n",
  // Found first on Prettier's way up from each file: the same options on every machine.
  '.prettierrc.json': '{}\n',
  'tsconfig.json': `${JSON.stringify({
    compilerOptions: { allowJs: true, noEmit: true, skipLibCheck: true, target: 'es2022', module: 'esnext', moduleResolution: 'bundler', types: [] },
    include: ['src'],
  })}\n`,
}

const url = (file) => pathToFileURL(path.join(__dirname, file)).href
const HOOK = ['--import', pathToFileURL(path.join(ROOT, 'register.mjs')).href]

/** The package's folder, installed by scripts/get-tool.sh (cached after the first time). */
function install({ pkg, version }) {
  process.stderr.write(`tools: ${pkg}@${version}\n`)
  return execFileSync('bash', [path.join(ROOT, 'scripts', 'get-tool.sh'), pkg, version], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] }).trim()
}

// Runs its arguments (fd 3 closed for them), then writes bash's `times` to fd 3:
// the user and system CPU time of the shell's children, that is of the tool.
const WITH_TIMES = '"$@" 3>&-; status=$?; times >&3; exit $status'

/**
 * Runs `tool` once in `work` with `nodeArgs` before its bin and `env` added:
 * its wall ms, and the CPU ms of its process (all threads, user + system).
 */
function run(tool, work, nodeArgs, env = {}) {
  const t0 = process.hrtime.bigint()
  const r = spawnSync('bash', ['-c', WITH_TIMES, 'bash', process.execPath, ...nodeArgs, tool.binPath, ...tool.args], {
    cwd: work,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe', 'pipe'],
    maxBuffer: 1 << 28,
  })
  const ms = Number(process.hrtime.bigint() - t0) / 1e6
  if (!tool.exits.includes(r.status)) {
    const said = `${r.stderr}${r.stdout}`.trim().split('\n').slice(-15).join('\n')
    throw new Error(`${tool.name} ${nodeArgs.join(' ')} exited with ${r.status ?? r.signal}:\n${said}`)
  }
  // `times`: the shell's own user and system time, then its children's, as 0m1.234s.
  const children = /(\d+)m([\d.]+)s\s+(\d+)m([\d.]+)s\s*$/.exec(String(r.output[3]))
  if (!children) throw new Error(`${tool.name}: no CPU times from bash (${String(r.output[3]).trim()})`)
  const [, um, us, sm, ss] = children.map(Number)
  return { ms, cpu: (um * 60 + us + sm * 60 + ss) * 1000 }
}

/** One run under tools-probe.js (after the hook when `hook`): what it saw. */
function probe(tool, work, hook) {
  const out = path.join(work, '.probe.json')
  run(tool, work, [...(hook ? HOOK : []), '--import', url('tools-probe.js')], {
    READFILE_UTF8_BENCH_PROBE: out,
    READFILE_UTF8_BENCH_CORPUS: path.join(work, CORPUS.dir) + path.sep,
  })
  const seen = JSON.parse(fs.readFileSync(out, 'utf8'))
  fs.rmSync(out)
  return seen
}

/** One run whose reads are free: its wall and CPU ms less the preload's own time (it reads on one thread). */
function freeRun(tool, work, list) {
  const msFile = path.join(work, '.free-reads-ms')
  const { ms, cpu } = run(tool, work, ['--import', url('tools-free-reads.js')], {
    READFILE_UTF8_BENCH_FREE_READS: list,
    READFILE_UTF8_BENCH_FREE_READS_MS: msFile,
  })
  const preload = Number(fs.readFileSync(msFile, 'utf8'))
  fs.rmSync(msFile)
  return { ms: ms - preload, cpu: cpu - preload }
}

// One decoder's pass over the Buffers of a list of files, in a fresh process.
const DECODE_CHILD = `
const fs = require('node:fs')
const addon = require(${JSON.stringify(ROOT)})
const files = JSON.parse(fs.readFileSync(process.argv[2], 'utf8'))
const buffers = files.map((f) => fs.readFileSync(f))
const decoder = new TextDecoder('utf-8', { ignoreBOM: true })
const decode = {
  toString: (b) => b.toString('utf8'),
  TextDecoder: (b) => decoder.decode(b),
  decodeUtf8: (b) => addon.decodeUtf8(b),
}[process.argv[1]]
const t0 = performance.now()
const out = buffers.map(decode)
const ms = performance.now() - t0
if (out.length !== files.length) throw new Error('wrong length')
process.stdout.write(JSON.stringify({ ms }))
`
const DECODERS = ['toString', 'TextDecoder', 'decodeUtf8']

/** ms of one pass of each decoder over the files' Buffers, median of PAIRS fresh processes; checked against toString first. */
function decodeTimes(files) {
  const { decodeUtf8 } = require('..')
  const decoder = new TextDecoder('utf-8', { ignoreBOM: true })
  for (const f of files) {
    const b = fs.readFileSync(f)
    const s = b.toString('utf8')
    if (decodeUtf8(b) !== s || decoder.decode(b) !== s) throw new Error(`decoders differ on ${f}`)
  }
  const { file, remove } = writeTemp('buffers.json', files)
  try {
    const times = Object.fromEntries(DECODERS.map((d) => [d, []]))
    for (let i = 0; i < PAIRS; i++) {
      for (let k = 0; k < DECODERS.length; k++) {
        const d = DECODERS[(k + i) % DECODERS.length]
        const r = spawnSync(process.execPath, ['-e', DECODE_CHILD, d, file], { encoding: 'utf8' })
        if (r.status !== 0) throw new Error(`decode child (${d}) failed: ${r.stderr}`)
        times[d].push(JSON.parse(r.stdout).ms)
      }
    }
    return Object.fromEntries(DECODERS.map((d) => [d, median(times[d])]))
  } finally {
    remove()
  }
}

function measure(tool, work) {
  process.stderr.write(`tools: ${tool.name}: probe runs\n`)
  const seen = probe(tool, work, false)
  const seenHooked = probe(tool, work, true)
  const bufferFiles = seen.wholeReads.filter((r) => r.encoding === 'buffer').map((r) => r.path)
  const decode = bufferFiles.length ? decodeTimes(bufferFiles) : null
  const { file: list, remove } = writeTemp('reads.json', seen.wholeReads)
  try {
    const plain = []
    const hooked = []
    const free = []
    for (let i = 0; i < PAIRS; i++) {
      process.stderr.write(`tools: ${tool.name}: round ${i + 1}/${PAIRS}\n`)
      plain.push(run(tool, work, []))
      hooked.push(run(tool, work, HOOK))
      free.push(freeRun(tool, work, list))
    }
    return { tool, seen, seenHooked, plain, hooked, free, bufferFiles, decode }
  } finally {
    remove()
  }
}

const ms = (v) => (v >= 100 ? v.toFixed(0) : v.toFixed(1))
const files = (n) => `${n} file${n === 1 ? '' : 's'}`
const pct = (x) => `${(100 * x).toFixed(0)}%`

/** 'n × fs.promises.readFile utf8 (x MiB)' for each read key of `where`. */
function readsOf(seen, where) {
  const rows = Object.entries(seen.calls)
    .map(([key, c]) => ({ key: key.split('\t'), ...c }))
    .filter(({ key }) => key[2] === where && key[1] !== '')
  if (rows.length === 0) return 'none'
  return rows.map(({ key, calls, bytes }) => `${calls} × \`${key[0]}\` ${key[1] === 'buffer' ? '(Buffer)' : key[1]}, ${fmtMiB(bytes)}`).join('; ')
}

/** The fs functions other than reads that the tool calls, most called first. */
function otherCalls(seen) {
  const by = new Map()
  for (const [key, c] of Object.entries(seen.calls)) {
    const [fn, encoding] = key.split('\t')
    if (encoding === '') by.set(fn, (by.get(fn) ?? 0) + c.calls)
  }
  return [...by].sort((a, b) => b[1] - a[1]).map(([fn, n]) => `\`${fn}\` ×${n}`).join(', ') || 'none'
}

const sameCalls = (a, b) => JSON.stringify(Object.entries(a.calls).map(([k, c]) => [k, c.calls]).sort()) === JSON.stringify(Object.entries(b.calls).map(([k, c]) => [k, c.calls]).sort())

function report(corpus, results) {
  const cores = typeof os.availableParallelism === 'function' ? os.availableParallelism() : os.cpus().length
  const out = [
    `#### tools: real tools on ${CORPUS.pkg} ${CORPUS.version}'s \`${CORPUS.dir}/\`, with and without \`--import readfile-utf8/register\``,
    '',
    `Corpus: ${corpus.files} files, ${fmtMiB(corpus.bytes)}. Node ${process.version}; ${os.cpus()[0]?.model ?? 'CPU'}, ${cores} cores available, load ${os.loadavg()[0].toFixed(2)} at the end. ` +
      `Tools (from the npm registry, exact versions; their dependencies as npm resolved them): ${results.map(({ tool }) => `${tool.pkg} ${tool.version}`).join(', ')}.`,
    '',
    ...results.map(({ tool }) => `- ${tool.name}: ${tool.about}: \`${tool.name} ${tool.args.join(' ')}\``),
    '',
    `Wall time: from spawning the tool's process to its exit, median of ${PAIRS} rounds; each round runs the tool plain, then with the hook ` +
      '(the pair; speed-up: the median of the pairs\' ratios, plain over hooked), then with its reads free: every file that a probe run saw it read whole ' +
      '(by `fs.readFileSync`, `fs.readFile` or `fs.promises.readFile`) is read before the tool starts, and those calls are answered from memory ' +
      "(the preload's own time taken off). Reading's share: (plain − free) / plain, round by round, then the median: what any reader could " +
      "save. The hook's part: how much of that the hook saves, (plain − hooked) / (plain − free), from the medians. " +
      "CPU: the tool's process, all its threads, user + system (bash's `times` of its child), median of the rounds: on a busy machine " +
      'the wall time also holds waits for a core, and a process that often blocks on reads is woken ahead of one that never does.',
    '',
    table(
      [
        ['tool', 'l'],
        ['plain ms', 'r'],
        ['with the hook ms', 'r'],
        ['speed-up', 'r'],
        ['reads free ms', 'r'],
        ["reading's share", 'r'],
        ["the hook's part of it", 'r'],
        ['CPU ms: plain, hook, free', 'r'],
      ],
      results.map(({ tool, plain, hooked, free }) => {
        const wall = (runs) => runs.map((r) => r.ms)
        const [p, h, f] = [plain, hooked, free].map((runs) => median(wall(runs)))
        const ratios = plain.map((a, i) => a.ms / hooked[i].ms)
        const shares = plain.map((a, i) => (a.ms - free[i].ms) / a.ms)
        const cpu = [plain, hooked, free].map((runs) => ms(median(runs.map((r) => r.cpu)))).join(', ')
        return [tool.name, ms(p), ms(h), fmtRatio(median(ratios)), ms(f), pct(median(shares)), p > f ? pct((p - h) / (p - f)) : '—', cpu]
      }),
    ),
    '',
    'What each tool reads, from a probe run without the hook (tools-probe.js, a preload that wraps every function of `fs` and `fs.promises` and ' +
      "counts the tool's calls, not those fs makes inside them): reads of the corpus, and of other files (configs, package.json files, and the " +
      "tool's own modules where Node's loaders read them through these functions: CommonJS's `require` with `fs.readFileSync(p, 'utf8')`). " +
      '"in flight": the union of the intervals during which a read was under way (a sync read: its call; ' +
      "an async one: from its call to its result, so it holds whatever the main thread did meanwhile), and its sync part; peak: the most async reads in flight at once.",
    '',
    table(
      [['tool', 'l'], ['corpus reads', 'l'], ['other reads', 'l'], ['in flight ms (sync)', 'r'], ['peak', 'r'], ['with the hook: in flight ms (sync)', 'r']],
      results.map(({ tool, seen, seenHooked }) => [
        tool.name,
        readsOf(seen, 'corpus'),
        readsOf(seen, 'other'),
        `${ms(seen.readMs)} (${ms(seen.syncReadMs)})`,
        String(seen.peakAsync),
        `${ms(seenHooked.readMs)} (${ms(seenHooked.syncReadMs)})${sameCalls(seen, seenHooked) ? '' : '; other calls than without'}`,
      ]),
    ),
    '',
    'The other fs functions each tool calls (counts, from the same run):',
    '',
    ...results.map(({ tool, seen }) => `- ${tool.name}: ${otherCalls(seen)}`),
    '',
  ]
  const decoders = results.filter((r) => r.decode)
  if (decoders.length) {
    out.push(
      "Buffers the tools read without an encoding and decode themselves (the register hook serves only UTF-8 requests, so these reads go to fs): " +
        'which files, how the tool decoded them in the probe run (`buffer.toString` or `TextDecoder.decode` called on the Buffer a read returned, ' +
        'with the time those calls took), and the same files\' Buffers through each decoder: one pass over all of them in a fresh process, ' +
        `median of ${PAIRS} processes (each decoder's strings checked against \`buffer.toString('utf8')\`'s first; ` +
        "`TextDecoder` with `ignoreBOM: true`, so that it keeps a BOM as the others do).",
      '',
      table(
        [['tool', 'l'], ['Buffers read', 'l'], ['decoded by the tool', 'l'], ['`toString` ms', 'r'], ['`TextDecoder` ms', 'r'], ['`decodeUtf8` ms', 'r'], ['`decodeUtf8` vs `toString`', 'r']],
        decoders.map(({ tool, seen, bufferFiles, decode }) => {
          const inCorpus = bufferFiles.filter((f) => f.startsWith(corpus.dir)).length
          const by = Object.entries(seen.decoding.by).map(([how, n]) => `${n} × \`${how}\``).join(', ') || 'none seen'
          const own = bufferFiles.filter((f) => !f.startsWith(corpus.dir)).map((f) => `\`${corpus.shown(f)}\``)
          return [
            tool.name,
            `${files(bufferFiles.length)}, ${fmtMiB(corpus.sizeOf(bufferFiles))}: ${inCorpus} of the corpus` +
              (own.length ? `, ${own.length} other${own.length === 1 ? "" : "s"} (${own.slice(0, 2).join(', ')}${own.length > 2 ? ', …' : ''})` : ''),
            `${by}, ${ms(seen.decoding.ms)} ms`,
            ms(decode.toString),
            ms(decode.TextDecoder),
            ms(decode.decodeUtf8),
            fmtRatio(decode.toString / decode.decodeUtf8),
          ]
        }),
      ),
      '',
    )
  }
  return `${out.join('\n')}\n`
}

function main() {
  const names = parseList(opts.values.tools)
  for (const n of names) if (!TOOLS[n]) throw new Error(`unknown tool '${n}' (known: ${Object.keys(TOOLS).join(', ')})`)
  const chosen = (names.length ? names : Object.keys(TOOLS)).map((name) => ({ name, ...TOOLS[name] }))
  for (const tool of chosen) tool.binPath = path.join(install(tool), tool.bin)
  const source = path.join(install(CORPUS), CORPUS.dir)
  const work = fs.mkdtempSync(path.join(os.tmpdir(), 'readfile-utf8-tools-'))
  try {
    fs.cpSync(source, path.join(work, CORPUS.dir), { recursive: true })
    for (const [name, text] of Object.entries(CONFIGS)) fs.writeFileSync(path.join(work, name), text)
    const files = regularFiles(path.join(work, CORPUS.dir))
    const sizeOf = (list) => list.reduce((sum, f) => sum + fs.statSync(f).size, 0)
    // A file as the report names it: in the work folder, or in a package (no path of this machine).
    const shown = (f) => (f.startsWith(work + path.sep) ? path.relative(work, f) : f.split(`node_modules${path.sep}`).pop())
    const corpus = { dir: path.join(work, CORPUS.dir) + path.sep, files: files.length, bytes: sizeOf(files), sizeOf, shown }
    const results = chosen.map((tool) => measure(tool, work))
    process.stdout.write(report(corpus, results))
  } finally {
    fs.rmSync(work, { recursive: true, force: true })
  }
}

try {
  main()
} catch (err) {
  process.stderr.write(`${err.stack || err}\n`)
  process.exitCode = 1
}
