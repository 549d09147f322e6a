'use strict'
// README: "Idle, our buffers go back to the system within a second", and a
// string is === fs's. Under the default fast mode a large sync read's string
// is external over a buffer of ours, often one reused from the pool and
// larger than the text: it must hold only the pages of its own text (those
// past it go back to the system at once), and its text must stay right after
// the rest of that buffer is given back (src/buffers release_unused).
const { test } = require('node:test')
const assert = require('node:assert/strict')
const fs = require('node:fs')
const path = require('node:path')
const { spawnSync } = require('node:child_process')

const { scratch, unsupportedOnWindows } = require('./helpers')
const { BASES, bigBuffer } = require('./cases')

const ROOT = path.join(__dirname, '..')
const MiB = 1 << 20

test("an external string over a reused larger buffer holds its own pages only, and its text stays fs's", unsupportedOnWindows('our buffers are mapped and partly given back on Linux only'), () => {
  // Eight large ASCII files read, kept, then dropped: their buffers go back
  // to the pool, resident. Eight smaller ones then reuse them as external
  // strings (fast mode): the pages of each buffer past its text go back.
  const large = Array.from({ length: 8 }, (_, i) => {
    const p = scratch(`reuse-large-${i}.txt`)
    fs.writeFileSync(p, bigBuffer(BASES.ascii, 7 * MiB + i * 4096))
    return p
  })
  const smaller = Array.from({ length: 8 }, (_, i) => {
    const p = scratch(`reuse-small-${i}.txt`)
    fs.writeFileSync(p, bigBuffer(BASES.ascii, 4 * MiB + 1 + i * 777))
    return p
  })
  const r = spawnSync(
    process.execPath,
    [
      '--expose-gc',
      '-e',
      `const fs = require('node:fs')
    const api = require(${JSON.stringify(ROOT)})
    api.setMemoryMode('fast')
    const large = ${JSON.stringify(large)}, smaller = ${JSON.stringify(smaller)}
    const rss = () => process.memoryUsage.rss()
    const settle = async () => { for (let i = 0; i < 4; i++) { globalThis.gc(); await new Promise((resolve) => setTimeout(resolve, 20)) } }
    ;(async () => {
      let held = large.map((p) => api.readFileUtf8(p))
      held = null
      await settle()
      const before = rss()
      const kept = smaller.map((p) => api.readFileUtf8(p))
      const shrank = before - rss()
      const expected = smaller.map((p) => fs.readFileSync(p, 'utf8'))
      // More reads of other sizes in between: the kept strings' text is unchanged.
      for (const p of large.slice(0, 2)) api.readFileUtf8(p)
      const same = kept.every((s, i) => s === expected[i])
      console.log(JSON.stringify({ shrank, same }))
    })()`,
    ],
    { encoding: 'utf8', timeout: 60_000 },
  )
  assert.equal(r.status, 0, r.stderr)
  const out = JSON.parse(r.stdout)
  assert.equal(out.same, true, "every kept string is still fs's")
  // The pages of each reused buffer past its string's text, given back.
  const unused = large.reduce((n, p, i) => n + fs.statSync(p).size - fs.statSync(smaller[i]).size, 0)
  assert.ok(out.shrank >= unused / 2, `RSS went down by ${(out.shrank / MiB).toFixed(1)} MiB as the pool's buffers were reused; their unused pages are ${(unused / MiB).toFixed(1)} MiB`)
})
