'use strict'
// Under Bun and Deno (scripts/test-runtime.js runs this file there; on Node
// the same bounds are memory.slow.js's): README, "Under both, every string is
// copied into the runtime's heap". Neither frees an external string's buffer
// when it collects the string, so without the copy a loop's strings pile up
// (gigabytes) where the runtime's own fs loop stays flat. The promise is
// measured as a user sees it: a loop of large sync reads, and one of batches,
// each in a fresh process of the runtime, peak within max(1.25 × its fs
// loop's peak, that + 128 MiB).
const { test } = require('node:test')
const assert = require('node:assert/strict')
const fs = require('node:fs')
const path = require('node:path')
const { spawnSync } = require('node:child_process')

const { scratch, defaultPeakBound } = require('../helpers')
const { BASES, bigBuffer } = require('../cases')
const { DENO_RUN } = require('../../benchmark/runtimes')

const ROOT = path.join(__dirname, '..', '..')
const MiB = 1 << 20

// The child: `steps` steps of one reader over the files, the peak RSS after each.
const LOOP = scratch('loop-child.js')
fs.writeFileSync(
  LOOP,
  `const fs = require('node:fs')
const api = require(${JSON.stringify(ROOT)})
const [reader, steps, ...files] = process.argv.slice(2)
const READERS = {
  ours: (i) => api.readFileUtf8(files[i % files.length]).length,
  fs: (i) => fs.readFileSync(files[i % files.length], 'utf8').length,
  'ours-batch': () => api.readFilesUtf8(files).reduce((n, s) => n + s.length, 0),
  'fs-batch': () => files.map((f) => fs.readFileSync(f, 'utf8')).reduce((n, s) => n + s.length, 0),
}
let peak = 0
let chars = 0
for (let i = 0; i < Number(steps); i++) {
  chars += READERS[reader](i)
  peak = Math.max(peak, process.memoryUsage.rss())
}
console.log(JSON.stringify({ peak, chars }))
`,
)

/** This runtime's command for a script (Deno needs its permissions and CommonJS detection). */
const SELF = [process.execPath, ...(process.versions.deno !== undefined ? DENO_RUN : [])]

function loop(reader, steps, files) {
  const r = spawnSync(SELF[0], [...SELF.slice(1), LOOP, reader, String(steps), ...files], { encoding: 'utf8', timeout: 120_000 })
  assert.equal(r.status, 0, `${reader}: ${r.stderr}`)
  return JSON.parse(r.stdout)
}

/** Ours within the bound of the runtime's own loop over the same files. */
function peaksWithin(ours, theirs, steps, files) {
  const fsLoop = loop(theirs, steps, files)
  const ourLoop = loop(ours, steps, files)
  assert.equal(ourLoop.chars, fsLoop.chars, 'the same text read')
  const bound = defaultPeakBound(fsLoop.peak / MiB)
  const shown = (bytes) => `${(bytes / MiB).toFixed(0)} MiB`
  console.log(`# ${ours} ${shown(ourLoop.peak)}, ${theirs} ${shown(fsLoop.peak)}, bound ${bound.toFixed(0)} MiB`)
  assert.ok(ourLoop.peak <= bound * MiB, `${ours} peaked at ${shown(ourLoop.peak)}, over ${bound.toFixed(0)} MiB (${theirs}: ${shown(fsLoop.peak)})`)
}

/** Files of each kind of text, of `size` bytes (plus a little per kind, so they differ). */
function files(name, size) {
  return Object.entries(BASES).map(([kind, base], i) => {
    const p = scratch(`${name}-${kind}.txt`)
    fs.writeFileSync(p, bigBuffer(base, size + i * 4099))
    return p
  })
}

test('a loop of large sync reads peaks near the runtime\'s own fs loop', () => {
  peaksWithin('ours', 'fs', 120, files('large', 4 * MiB))
})

test("a loop of batches of large files peaks near the runtime's own fs loop", () => {
  const list = [...files('batch-a', 300 << 10), ...files('batch-b', 1200 << 10)]
  peaksWithin('ours-batch', 'fs-batch', 100, list)
})
