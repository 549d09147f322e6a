'use strict'
// The addon uses simdutf, which picks AVX-512/AVX2/SSE4.2 at run time and can be
// forced by SIMDUTF_FORCE_IMPLEMENTATION. An empty or unknown value silently
// breaks it; the addon must notice (self-test) and use its pure-Rust path.
// Every engine must give fs's exact result.
const { test } = require('node:test')
const assert = require('node:assert/strict')
const path = require('node:path')
const { spawnSync } = require('node:child_process')

const { SCRATCH } = require('./helpers')

function envWith(vars) {
  const env = { ...process.env }
  delete env.SIMDUTF_FORCE_IMPLEMENTATION
  delete env.READFILE_UTF8_NO_SIMD
  return { ...env, ...vars }
}

function runUnder(force, extra = {}) {
  const vars = { READFILE_UTF8_TEST_SCRATCH: SCRATCH, ...extra }
  const env = envWith(force === undefined ? vars : { SIMDUTF_FORCE_IMPLEMENTATION: force, ...vars })
  const r = spawnSync(process.execPath, [path.join(__dirname, 'engine-check.js')], { env, encoding: 'utf8' })
  assert.equal(r.status, 0, `SIMDUTF_FORCE_IMPLEMENTATION=${force}: ${r.stderr}`)
  return JSON.parse(r.stdout)
}

/** Newer Nodes use simdutf themselves, and a broken value stops Node at startup. */
function nodeStartsWith(force) {
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
  assert.ok(checked > 1000)
})

for (const force of ['', 'no-such-implementation']) {
  test(`SIMDUTF_FORCE_IMPLEMENTATION=${JSON.stringify(force)} falls back to the Rust path and matches fs`, () => {
    if (nodeStartsWith(force)) {
      const { engine, checked } = runUnder(force)
      assert.equal(engine, 'fallback')
      assert.ok(checked > 1000)
    } else {
      // This Node cannot run with that value at all (it breaks Node's own simdutf),
      // so no user of ours can meet it: check that Node refuses, as expected.
      assert.ok(Number(process.versions.node.split('.')[0]) >= 22, `Node ${process.version} refused to start`)
    }
  })
}

test('READFILE_UTF8_NO_SIMD=1 selects the pure-Rust path, which matches fs', () => {
  const { engine, checked } = runUnder(undefined, { READFILE_UTF8_NO_SIMD: '1' })
  assert.equal(engine, 'fallback')
  assert.ok(checked > 1000)
})

// simdutf's kernel names: icelake = AVX-512, haswell = AVX2, westmere = SSE4.2.
for (const [force, flag] of [['fallback', ''], ['westmere', 'sse4_2'], ['haswell', 'avx2'], ['icelake', 'avx512_vbmi2']]) {
  test(`SIMDUTF_FORCE_IMPLEMENTATION=${force} (when the CPU has it) matches fs`, () => {
    const supported = flag === '' || new RegExp(`\\b${flag}\\b`).test(cpuFlags)
    const { engine, checked } = runUnder(force)
    // A kernel the CPU lacks makes simdutf fail its self-test: then we must fall back.
    assert.equal(engine, supported ? 'simdutf' : 'fallback')
    assert.ok(checked > 1000)
  })
}
