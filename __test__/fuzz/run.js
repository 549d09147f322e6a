'use strict'
// npm run fuzz [-- --cases N] [--seed S] [--jobs J] [--path P]
//
// Differential fuzzing against Node (see property.js): N cases (default 10^6)
// split over J processes (default: one per core), process i using seed S + i.
// Prints progress, then the cases run, the time and the rate. On a failure it
// prints the seed, fast-check's replay path and the minimal (shrunk) case,
// writes that case's bytes to a file, and exits with status 1.
// Replay one failure: npm run fuzz -- --jobs 1 --seed <seed> --path <path>
const os = require('node:os')
const fs = require('node:fs')
const path = require('node:path')
const { fork } = require('node:child_process')
const { parseArgs } = require('node:util')

const { values: args } = parseArgs({
  options: {
    cases: { type: 'string', default: String(1e6) },
    seed: { type: 'string' },
    jobs: { type: 'string', default: String(os.availableParallelism()) },
    path: { type: 'string' },
    child: { type: 'boolean', default: false },
  },
})

if (args.child) runChild()
else runParent()

function runParent() {
  const cases = Number(args.cases)
  const jobs = Math.max(1, Math.min(Number(args.jobs), cases))
  const seed = args.seed === undefined ? (Date.now() ^ (Math.random() * 0x7fffffff)) | 0 : Number(args.seed)
  console.log(`fuzz: ${cases} cases, ${jobs} process(es), seeds ${seed}..${seed + jobs - 1}, Node ${process.version}`)
  const started = performance.now()
  const done = new Array(jobs).fill(0)
  let finished = 0
  let failed = false
  const timer = setInterval(() => {
    const total = done.reduce((a, b) => a + b, 0)
    const s = (performance.now() - started) / 1000
    console.log(`  ${total} cases in ${s.toFixed(0)} s (${(total / s).toFixed(0)}/s)`)
  }, 15000)
  for (let i = 0; i < jobs; i++) {
    const share = Math.floor(cases / jobs) + (i < cases % jobs ? 1 : 0)
    const childArgs = ['--child', '--cases', String(share), '--seed', String(seed + i)]
    if (args.path !== undefined) childArgs.push('--path', args.path)
    const child = fork(__filename, childArgs, { stdio: 'inherit' })
    child.on('message', (m) => {
      if (typeof m.done === 'number') done[i] = m.done
    })
    child.on('exit', (code, signal) => {
      if (code !== 0) {
        failed = true
        console.error(`fuzz process ${i} (seed ${seed + i}) failed: ${signal ?? `exit ${code}`}`)
      }
      if (++finished < jobs) return
      clearInterval(timer)
      const total = done.reduce((a, b) => a + b, 0)
      const s = (performance.now() - started) / 1000
      console.log(`fuzz: ${total} cases checked in ${s.toFixed(1)} s (${(total / s).toFixed(0)}/s): ${failed ? 'FAILED' : 'all === Node'}`)
      if (!failed && total < cases) {
        console.error(`fuzz: only ${total} of ${cases} cases ran`)
        failed = true
      }
      process.exitCode = failed ? 1 : 0
    })
  }
}

async function runChild() {
  const fc = require('fast-check')
  const { predicate, caseArbitrary, describeBytes } = require('./property')
  // tmpfs when there is one: a million cases write ~30 GB, which need not reach a disk.
  const base = fs.existsSync('/dev/shm') ? '/dev/shm' : os.tmpdir()
  const dir = fs.mkdtempSync(path.join(base, 'readfile-utf8-fuzz-'))
  const file = path.join(dir, 'case.bin')
  const seed = Number(args.seed)
  let count = 0
  const check = predicate(file)
  const counted = fc.asyncProperty(caseArbitrary, (value) => {
    count++
    return check(value)
  })
  const report = setInterval(() => process.send?.({ done: count }), 2000)
  const options = { seed, numRuns: Number(args.cases) }
  if (args.path !== undefined) options.path = args.path
  const details = await fc.check(counted, options)
  clearInterval(report)
  fs.rmSync(dir, { recursive: true, force: true })
  process.send?.({ done: details.failed ? count : details.numRuns })
  if (!details.failed) return
  console.error(fc.defaultReportMessage(details))
  console.error(`error: ${details.errorInstance}`)
  const minimal = details.counterexample?.[0]
  if (minimal?.bytes) {
    const saved = path.join(os.tmpdir(), `readfile-utf8-fuzz-failure-seed${seed}.bin`)
    fs.writeFileSync(saved, minimal.bytes)
    console.error(`minimal case: ${describeBytes(minimal.bytes, 256)}; bytes saved to ${saved}`)
  }
  console.error(`replay: npm run fuzz -- --jobs 1 --seed ${seed} --path ${details.counterexamplePath} --cases 1`)
  process.exitCode = 1
}
