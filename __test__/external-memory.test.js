'use strict'
// The stall rule of sync batches (ARCHITECTURE.md, "Handing a buffer to V8"):
// once V8 has collected none of 64 MiB (its external-memory step) of external
// strings made before a sync batch, that batch's strings are copies, until as
// many bytes of copies were made; then external again, in turns. The batch's
// own strings do not count. process.memoryUsage().external counts V8's
// external strings (not what napi_adjust_external_memory tells V8, which JS
// cannot see). Each test in a fresh process that holds every string, so that
// none is collected; every string is fs's.
const { test } = require('node:test')
const assert = require('node:assert/strict')
const fs = require('node:fs')
const path = require('node:path')
const { spawnSync } = require('node:child_process')
const { scratch } = require('./helpers')

const ROOT = path.join(__dirname, '..')
const MiB = 1 << 20
// V8's external-memory step (src/v8.rs EXTERNAL_MEMORY_STEP).
const STEP = 64 * MiB

// Files of 1 MiB of characters, Latin-1 text (strings of 1 MiB of data).
const files = Array.from({ length: 4 }, (_, i) => {
  const file = scratch(`external-memory-${i}.txt`)
  const line = `${i} déjà vu à Noël\n`
  fs.writeFileSync(file, line.repeat(MiB / line.length) + 'x'.repeat(MiB % line.length))
  return file
})
const length = fs.readFileSync(files[0], 'utf8').length

/** Runs `body` (async, with api, files, kept, external(), same(list)) in a child; returns what it prints. */
function inChild(body, flags = []) {
  const script = `
    const fs = require('node:fs')
    const api = require(${JSON.stringify(ROOT)})
    const files = ${JSON.stringify(files)}
    const expected = new Map(files.map((f) => [f, fs.readFileSync(f, 'utf8')]))
    const kept = []
    const external = () => process.memoryUsage().external
    const same = (list, strings) => strings.every((s, i) => s === expected.get(list[i]))
    const tick = () => new Promise(setImmediate)
    ;(async () => { process.stdout.write(JSON.stringify(await (async () => { ${body} })())) })()`
  const r = spawnSync(process.execPath, [...flags, '-e', script], { encoding: 'utf8', maxBuffer: 1 << 24 })
  assert.equal(r.status, 0, r.stderr)
  return JSON.parse(r.stdout)
}

test("a batch's own strings are no sign of a stalled GC: a batch of more than V8's step of them keeps them all external", () => {
  const list = Array.from({ length: STEP / MiB + 16 }, (_, i) => files[i % files.length])
  const r = inChild(`
    const start = external()
    const batch = api.readFilesUtf8(${JSON.stringify(list)})
    kept.push(batch)
    await tick()
    return { grown: external() - start, same: same(${JSON.stringify(list)}, batch) }`)
  assert.ok(r.same, "fs's strings")
  assert.ok(r.grown >= list.length * length, `${r.grown} bytes external after ${list.length} strings of ${length}`)
})

test("once V8's step of external strings was made with none collected, a sync batch's strings are copies, as many bytes of them, then external again, in turns", (t) => {
  const held = STEP / MiB + 8
  const rounds = 3 * (STEP / MiB)
  const r = inChild(`
    // Single reads: external, all held (V8 collects none).
    for (let i = 0; i < ${held}; i++) kept.push(api.readFileUtf8(files[i % files.length]))
    const growth = []
    for (let round = 0; round < ${rounds}; round++) {
      const before = external()
      const batch = api.readFilesUtf8(files.slice(round % 4, round % 4 + 1))
      kept.push(batch)
      growth.push(external() - before)
      if (!same(files.slice(round % 4, round % 4 + 1), batch)) return { wrong: round }
    }
    return { growth }`)
  assert.equal(r.wrong, undefined, `round ${r.wrong}: not fs's string`)
  // Runs of copies (c) and external strings (e), in order.
  const runs = []
  for (const bytes of r.growth) {
    const kind = bytes >= length ? 'e' : bytes < length / 2 ? 'c' : '?'
    if (runs.at(-1)?.kind === kind) runs.at(-1).n++
    else runs.push({ kind, n: 1 })
  }
  const shown = runs.map(({ kind, n }) => `${n}${kind}`).join(' ')
  t.diagnostic(`runs of batches making copies (c) and external strings (e): ${shown}`)
  // 8 MiB of singles beyond the step: copies until twice the step was made
  // since the last collection (56 more), then a step of external strings, then
  // a step of copies again.
  assert.ok(runs.length >= 3 && runs[0].kind === 'c' && runs[1].kind === 'e' && runs[2].kind === 'c', `runs of batches: ${shown}`)
  const about = (n, expected) => n >= expected - 2 && n <= expected + 2
  assert.ok(about(runs[0].n, STEP / MiB - 8 + 1), `copies first: ${shown}`)
  assert.ok(about(runs[1].n, STEP / MiB), `then external: ${shown}`)
  assert.ok(runs.length > 3 || about(runs[2].n, rounds - runs[0].n - runs[1].n), `then copies: ${shown}`)
})

test("once V8 collects one of our strings the count starts again: the next sync batch's strings are external", () => {
  const r = inChild(
    `
    for (let i = 0; i < ${STEP / MiB + 8}; i++) kept.push(api.readFileUtf8(files[i % files.length]))
    const stalled = external()
    let batch = api.readFilesUtf8(files.slice(0, 1))
    const copied = external() - stalled
    kept.length = 0
    batch = null
    for (let i = 0; i < 3; i++) {
      globalThis.gc()
      await tick()
    }
    const collected = external()
    const after = api.readFilesUtf8(files.slice(0, 1))
    return { freed: stalled - collected, copied, external: external() - collected, same: same(files.slice(0, 1), after) }`,
    ['--expose-gc'],
  )
  assert.ok(r.same, "fs's string")
  assert.ok(r.copied < length, `while V8 collected none: ${r.copied} bytes external (a copy)`)
  assert.ok(r.freed >= STEP, `${r.freed} bytes of external strings collected`)
  assert.ok(r.external >= length, `after a collection: ${r.external} bytes external`)
})
