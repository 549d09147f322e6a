'use strict'
// The addon uses simdutf, which picks AVX-512/AVX2/SSE4.2 at run time and can be
// forced by SIMDUTF_FORCE_IMPLEMENTATION. An empty or unknown value silently
// breaks it; the addon must notice (self-test) and use its pure-Rust path.
// Every engine must give fs's exact result.
const { test } = require('node:test')
const assert = require('node:assert/strict')
const path = require('node:path')
const { spawnSync } = require('node:child_process')

function runUnder(force) {
  const env = { ...process.env }
  if (force === undefined) delete env.SIMDUTF_FORCE_IMPLEMENTATION
  else env.SIMDUTF_FORCE_IMPLEMENTATION = force
  const r = spawnSync(process.execPath, [path.join(__dirname, 'engine-check.js')], { env, encoding: 'utf8' })
  assert.equal(r.status, 0, `SIMDUTF_FORCE_IMPLEMENTATION=${force}: ${r.stderr}`)
  return JSON.parse(r.stdout)
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
    const { engine, checked } = runUnder(force)
    assert.equal(engine, 'fallback')
    assert.ok(checked > 1000)
  })
}

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
