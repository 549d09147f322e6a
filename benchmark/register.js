'use strict'
// register: wall time of `require('typescript')` in a fresh process, without and
// with `-r readfile-utf8/register`, median of several processes each.
// Run with any Node: `node benchmark/register.js [--runs N]`. Prints Markdown.
const os = require('node:os')
const path = require('node:path')
const { spawnSync } = require('node:child_process')

const RUNS = Number(process.argv[process.argv.indexOf('--runs') + 1]) || 11
const ROOT = path.join(__dirname, '..')
const REGISTER = path.join(ROOT, 'register.js')
const PACKAGES = ['typescript']

const median = (xs) => [...xs].sort((a, b) => a - b)[xs.length >> 1]

/** ms spent in require(pkg), measured inside a fresh process (startup excluded), and the process wall time. */
function once(pkg, withHook) {
  const script = `const t0 = process.hrtime.bigint(); require(${JSON.stringify(require.resolve(pkg))});
    process.stdout.write(String(Number(process.hrtime.bigint() - t0) / 1e6))`
  const args = [...(withHook ? ['-r', REGISTER] : []), '-e', script]
  const t0 = process.hrtime.bigint()
  const r = spawnSync(process.execPath, args, { encoding: 'utf8' })
  const wall = Number(process.hrtime.bigint() - t0) / 1e6
  if (r.status !== 0) throw new Error(r.stderr)
  return { require: Number(r.stdout), wall }
}

console.log(`Node ${process.version}, ${os.cpus()[0].model}; median of ${RUNS} fresh processes (alternating)`)
console.log()
console.log('| package | require() without hook | with register | speed-up | process wall without | with register |')
console.log('|---|---|---|---|---|---|')
for (const pkg of PACKAGES) {
  once(pkg, false)
  once(pkg, true) // warm the OS page cache
  const without = []
  const withHook = []
  for (let i = 0; i < RUNS; i++) {
    without.push(once(pkg, false))
    withHook.push(once(pkg, true))
  }
  const a = median(without.map((x) => x.require))
  const b = median(withHook.map((x) => x.require))
  const aw = median(without.map((x) => x.wall))
  const bw = median(withHook.map((x) => x.wall))
  console.log(`| ${pkg} | ${a.toFixed(1)} ms | ${b.toFixed(1)} ms | ${(a / b).toFixed(2)}× | ${aw.toFixed(1)} ms | ${bw.toFixed(1)} ms |`)
}
