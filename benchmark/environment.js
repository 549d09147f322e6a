'use strict'
// What a recorded run was measured with: the build (git commit, uncommitted
// changes, the addon's engine and reader), the machine, and the Node.
const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const { execFileSync } = require('node:child_process')

const ROOT = path.join(__dirname, '..')
const RESULTS = 'benchmark/RESULTS.md'

function git(...args) {
  try {
    return execFileSync('git', ['-C', ROOT, ...args], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim()
  } catch {
    return undefined
  }
}

/** Commit, dirty flag (RESULTS.md, which the bench writes, does not count) and the addon. */
function build() {
  const commit = git('rev-parse', '--short=12', 'HEAD') ?? 'unknown commit'
  const changed = git('status', '--porcelain', '--', '.', `:(exclude)${RESULTS}`)
  const native = require('../lib/native')
  const call = (name) => (typeof native[name] === 'function' ? native[name]() : 'unknown')
  const binary = Object.keys(require.cache).find((f) => f.endsWith('.node'))
  let built = ''
  if (binary) built = `${path.relative(ROOT, binary)}, built ${utc(fs.statSync(binary).mtime)}`
  return {
    commit,
    dirty: changed === undefined ? 'unknown' : changed !== '',
    engine: call('engine'),
    reader: call('reader'),
    binary: built || 'no native binary loaded',
  }
}

/** The first line of /proc/cpuinfo (or os.cpus()) naming the CPU, and the SIMD it offers. */
function cpu() {
  let info = ''
  try {
    info = fs.readFileSync('/proc/cpuinfo', 'latin1')
  } catch {
    // not Linux: os.cpus() names the model
  }
  const model = (/^model name\s*:\s*(.+)$/m.exec(info)?.[1] || os.cpus()[0]?.model || 'unknown CPU').trim()
  const flags = /^flags\s*:\s*(.+)$/m.exec(info)?.[1]?.split(/\s+/) ?? []
  // The x86 levels a UTF-8 validator dispatches on, best first.
  const simd = ['avx512vbmi2', 'avx512bw', 'avx2', 'sse4_2'].filter((f) => flags.includes(f))
  if (/^Features\s*:.*\basimd\b/m.test(info)) simd.push('neon')
  return { model, simd }
}

function osName() {
  let pretty = ''
  try {
    pretty = /^PRETTY_NAME="?([^"\n]*)"?$/m.exec(fs.readFileSync('/etc/os-release', 'utf8'))?.[1] ?? ''
  } catch {
    // no os-release: the kernel names it
  }
  return `${os.type()} ${os.release()} ${process.arch}${pretty ? ` (${pretty})` : ''}`
}

const utc = (date) => `${date.toISOString().slice(0, 16).replace('T', ' ')} UTC`

/** Everything above, at the time of the call. */
function environment() {
  const { model, simd } = cpu()
  return {
    date: utc(new Date()),
    build: build(),
    cpu: model,
    simd: simd.join(' ') || 'none detected',
    cores: os.cpus().length,
    os: osName(),
    ramGiB: (os.totalmem() / 2 ** 30).toFixed(1),
    // Other work on the machine widens the spreads: recorded so that a noisy run shows.
    load: os.loadavg()[0].toFixed(2),
    node: process.version,
    v8: process.versions.v8,
  }
}

/** The environment as Markdown list items. */
function describe(env) {
  const b = env.build
  return [
    `- build: commit ${b.commit}${b.dirty === true ? ' with uncommitted changes' : b.dirty === 'unknown' ? ' (dirty: unknown)' : ''}; ` +
      `addon engine ${b.engine}, reader ${b.reader} (${b.binary})`,
    `- machine: ${env.cpu}, ${env.cores} cores (SIMD: ${env.simd}), ${env.ramGiB} GiB RAM, ${env.os}; load ${env.load} at start`,
    `- Node ${env.node} (V8 ${env.v8})`,
  ]
}

module.exports = { environment, describe, RESULTS }
