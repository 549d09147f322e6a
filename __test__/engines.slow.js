'use strict'
// The addon uses simdutf, which picks AVX-512/AVX2/SSE4.2 at run time and can be
// forced by SIMDUTF_FORCE_IMPLEMENTATION. An empty or unknown value silently
// breaks it; the addon must notice (self-test) and use its pure-Rust path.
// Every engine must give fs's exact result.
const { test } = require('node:test')
const assert = require('node:assert/strict')
const path = require('node:path')
const { spawnSync } = require('node:child_process')

const { SCRATCH, unsupportedOnWindows } = require('./helpers')

function envWith(vars) {
  const env = { ...process.env }
  delete env.SIMDUTF_FORCE_IMPLEMENTATION
  delete env.READFILE_UTF8_NO_SIMD
  return { ...env, ...vars }
}

/** Runs engine-check.js with SIMDUTF_FORCE_IMPLEMENTATION=`force` (undefined: unset) and `extra` variables. */
function runUnder(force, extra = {}, args = []) {
  const vars = { READFILE_UTF8_TEST_SCRATCH: SCRATCH, ...extra }
  const env = envWith(force === undefined ? vars : { SIMDUTF_FORCE_IMPLEMENTATION: force, ...vars })
  const r = spawnSync(process.execPath, [path.join(__dirname, 'engine-check.js'), ...args], { env, encoding: 'utf8' })
  assert.equal(r.status, 0, `SIMDUTF_FORCE_IMPLEMENTATION=${force} ${JSON.stringify(extra)}: signal ${r.signal}, ${r.stderr}`)
  return JSON.parse(r.stdout)
}

/** A floor under engine-check.js's count of checked cases: a run that checked next to nothing fails. */
const MIN_CHECKED = 20000

/**
 * Whether this Node can be the oracle with SIMDUTF_FORCE_IMPLEMENTATION=`force`
 * set at start. Node 22+ uses simdutf for its own UTF-8 work: Node 24+ refuses
 * to start with a broken value, and Node 22 starts but, once its code is
 * optimized, Buffer.from(string) gives empty buffers (fs and Buffer are then
 * no oracle).
 */
function nodeIsSoundWith(force) {
  if (Number(process.versions.node.split('.')[0]) >= 22) return false
  return spawnSync(process.execPath, ['-e', '0'], { env: envWith({ SIMDUTF_FORCE_IMPLEMENTATION: force }) }).status === 0
}

const cpuFlags = (() => {
  try {
    return require('node:fs').readFileSync('/proc/cpuinfo', 'utf8')
  } catch {
    return ''
  }
})()

test('default engine is simdutf and matches fs', () => {
  const { engine, checked } = runUnder(undefined)
  assert.equal(engine, 'simdutf')
  assert.ok(checked > MIN_CHECKED)
})

// Windows' C runtime reads the environment once, at start: a variable set
// later (process.env) never reaches the addon's simdutf there.
const LATE_SET_SEEN = process.platform !== 'win32'
const NODE_MAJOR = Number(process.versions.node.split('.')[0])

/**
 * Asserts that with SIMDUTF_FORCE_IMPLEMENTATION=`force` the addon falls back to
 * the Rust path, which matches fs, every way this platform and Node allow the
 * variable to be set: after Node started (its own simdutf already set up,
 * the addon's not yet), and at start where this Node runs soundly with it.
 */
function assertFallsBackEveryWay(force, noWay) {
  let ways = 0
  if (LATE_SET_SEEN) {
    const late = runUnder(undefined, { READFILE_UTF8_TEST_FORCE_LATE: force })
    assert.equal(late.engine, 'fallback')
    assert.ok(late.checked > MIN_CHECKED)
    ways++
  }
  if (nodeIsSoundWith(force)) {
    const atStart = runUnder(force)
    assert.equal(atStart.engine, 'fallback')
    assert.ok(atStart.checked > MIN_CHECKED)
    ways++
  }
  assert.ok(ways > 0, noWay)
}

for (const force of ['', 'no-such-implementation']) {
  const options =
    LATE_SET_SEEN || NODE_MAJOR < 22
      ? {}
      : unsupportedOnWindows("the C runtime sees no variable set after start, and at start it breaks this Node's own simdutf")
  test(`SIMDUTF_FORCE_IMPLEMENTATION=${JSON.stringify(force)} breaks simdutf: the addon falls back to the Rust path, which matches fs`, options, () => {
    assertFallsBackEveryWay(force, 'neither way of setting the variable could be checked on this Node')
  })
}

test('READFILE_UTF8_NO_SIMD=1 selects the pure-Rust path, which matches fs (every class and odd sequence of the large files)', () => {
  const { engine, checked } = runUnder(undefined, { READFILE_UTF8_NO_SIMD: '1' }, ['--full'])
  assert.equal(engine, 'fallback')
  assert.ok(checked > MIN_CHECKED)
})

// simdutf's kernel names and the CPU flags (as /proc/cpuinfo spells them) each
// needs. simdutf runs a forced kernel without asking the CPU: where one is
// missing, the addon must not run it (SIGILL) but fall back.
const HASWELL = ['avx2', 'bmi1', 'bmi2']
const ICELAKE = [...HASWELL, 'avx512bw', 'avx512cd', 'avx512vl', 'avx512_vbmi2', 'avx512_vpopcntdq']
for (const [force, flags] of [['fallback', []], ['westmere', ['sse4_2']], ['haswell', HASWELL], ['icelake', ICELAKE]]) {
  test(`SIMDUTF_FORCE_IMPLEMENTATION=${force} (when the CPU has it) matches fs`, () => {
    const supported = flags.every((flag) => new RegExp(`\\b${flag}\\b`).test(cpuFlags))
    if (supported) {
      const { engine, checked } = runUnder(force)
      assert.equal(engine, 'simdutf')
      assert.ok(checked > MIN_CHECKED)
      return
    }
    // Node's own simdutf dies of the same kernel if the variable is set at its
    // start: nodeIsSoundWith rules that way out where it does.
    assertFallsBackEveryWay(force, `a CPU without ${force}'s features, and no way to set the variable that this Node survives`)
  })
}
