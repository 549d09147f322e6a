'use strict'
// The JS suite: `node scripts/test-js.js [fast] [slow] [file...] [--node-test-option...]`
// runs node --test on the fast tier (__test__/*.test.js), the slow tier
// (__test__/*.slow.js) and/or the files given, with this Node. Options go to
// node --test after ours, so they can override them (e.g. --test-concurrency=1).
//
// --test-timeout: a hang fails with a name instead of stalling the run. Node 26
// applies it to each test; Node 20 and 22 to each file as a whole, so it must
// stay above the slowest file, with room for a loaded machine.
// --test-concurrency: node --test runs one file fewer than the cores at a time,
// so on two cores one file, leaving a core idle while most tests use one. Here
// one more file than the cores: a file waiting on a child process, a sleep or
// a FIFO leaves its core to the others, and two files at a time on two cores
// still left one idle for much of the run. Each file has its own processes and
// scratch folder, as it already has wherever there are more cores.
const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const { spawnSync } = require('node:child_process')

const ROOT = path.join(__dirname, '..')
const TIERS = { fast: '.test.js', slow: '.slow.js' }
const TIMEOUT_MS = 300_000

const files = []
const options = []
for (const arg of process.argv.slice(2)) {
  if (arg.startsWith('-')) options.push(arg)
  else if (Object.hasOwn(TIERS, arg)) {
    const names = fs.readdirSync(path.join(ROOT, '__test__')).filter((f) => f.endsWith(TIERS[arg]))
    files.push(...names.sort().map((f) => path.join('__test__', f)))
  } else files.push(arg)
}
if (files.length === 0) {
  console.error('usage: node scripts/test-js.js [fast] [slow] [file...] [--node-test-option...]')
  process.exit(2)
}

const cores = typeof os.availableParallelism === 'function' ? os.availableParallelism() : os.cpus().length
const concurrency = cores + 1
const r = spawnSync(
  process.execPath,
  ['--test', `--test-timeout=${TIMEOUT_MS}`, `--test-concurrency=${concurrency}`, ...options, ...files],
  { stdio: 'inherit', cwd: ROOT },
)
if (r.error) throw r.error
process.exit(r.status ?? 1)
