'use strict'
// `npm test` and `npm run test:all`: the Rust tests (scripts/rust-tests.js) and
// the JS suite (scripts/test-js.js with the arguments given, e.g. `fast slow`)
// side by side. The Rust tests' compile leaves a core idle for much of its
// time (one crate at a time on its critical path), which the JS suite's files
// fill. The JS suite prints as it goes; the Rust tests' output is held and
// printed as one block when they end, then a line for each; the exit status is
// the first failure's.
const path = require('node:path')
const { spawn } = require('node:child_process')

const args = process.argv.slice(2)
if (args.length === 0) {
  console.error('usage: node scripts/test.js <test-js.js arguments, e.g. fast | fast slow>')
  process.exit(2)
}

/** Runs a script with this Node; resolves to its exit status (a signal counts as 1). */
function run(script, scriptArgs, stdio, onOutput) {
  const child = spawn(process.execPath, [path.join(__dirname, script), ...scriptArgs], { stdio, cwd: path.join(__dirname, '..') })
  if (onOutput) {
    child.stdout.on('data', onOutput)
    child.stderr.on('data', onOutput)
  }
  return new Promise((resolve) => {
    child.on('error', (err) => {
      onOutput?.(`${script}: ${err.message}\n`)
      resolve(1)
    })
    child.on('close', (status) => resolve(status ?? 1))
  })
}

async function main() {
  const held = []
  const rust = run('rust-tests.js', [], ['ignore', 'pipe', 'pipe'], (chunk) => held.push(chunk)).then((status) => {
    process.stdout.write(`\n--- the Rust tests (cargo test), exit ${status} ---\n${Buffer.concat(held.map((c) => Buffer.from(c)))}--- end of the Rust tests ---\n\n`)
    return status
  })
  const js = run('test-js.js', args, 'inherit')
  const [rustStatus, jsStatus] = await Promise.all([rust, js])
  console.log(`Rust tests: ${rustStatus === 0 ? 'passed' : `FAILED (exit ${rustStatus}, output above)`}`)
  console.log(`JS suite (${args.join(' ')}): ${jsStatus === 0 ? 'passed' : `FAILED (exit ${jsStatus})`}`)
  process.exit(rustStatus || jsStatus)
}

main()
