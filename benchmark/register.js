'use strict'
// register: wall time of `require('typescript')` in a fresh process, without and
// with `-r readfile-utf8/register`, median of several processes each.
// Run with any Node: `node benchmark/register.js [--quick] [--runs N]`. Prints Markdown.
// (--content and --size are accepted, as by every suite, and mean nothing here.)
const path = require('node:path')
const { spawnSync } = require('node:child_process')

const { table, fmtRatio } = require('./format')
const { suiteOptions } = require('./options')
const { median } = require('./timing')

const opts = suiteOptions('register.js', { runs: { type: 'string' } })
const RUNS = Math.round(opts.number('runs', 11, 5))
const REGISTER = path.join(__dirname, '..', 'register.js')
const PACKAGES = ['typescript']

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

const rows = []
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
  const ms = (x) => `${x.toFixed(1)} ms`
  rows.push([pkg, ms(a), ms(b), fmtRatio(a / b), ms(aw), ms(bw)])
}
console.log(`#### register: \`require()\` with and without readfile-utf8/register\n\nMedian of ${RUNS} fresh processes each, alternating.\n`)
const columns = [['package', 'l'], ...['require() without hook', 'with register', 'speed-up', 'process wall without', 'with register'].map((h) => [h, 'r'])]
console.log(table(columns, rows))
