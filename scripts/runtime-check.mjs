// The package under another runtime that loads Node-API addons, Deno or Bun:
//
//   deno run -A scripts/runtime-check.mjs
//   bun scripts/runtime-check.mjs
//
// loads this checkout's build (its engine must be simdutf) and checks, with the
// runtime's own node:fs as the oracle: strings === fs's for text of every kind
// and size, from readFileUtf8, readFileUtf8Async, readFilesUtf8 and
// decodeUtf8; fs's errors field by field; and that a loop of large sync reads,
// and one of batches, peak within max(1.25 × fs's loop, fs's + 128 MiB), each
// loop in a fresh process of the runtime. Prints TAP-style `# pass N` /
// `# fail N` (CI adds them up); exits 1 if any failed.
import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import fs from 'node:fs'
import { createRequire } from 'node:module'
import path from 'node:path'
import process from 'node:process'

const require = createRequire(import.meta.url)
const ROOT = path.join(path.dirname(new URL(import.meta.url).pathname), '..')
const r = require(ROOT)
const { scratch, thrown, defaultPeakBound } = require(path.join(ROOT, '__test__', 'helpers.js'))
const { BASES, bigBuffer } = require(path.join(ROOT, '__test__', 'cases.js'))
const { DENO_RUN } = require(path.join(ROOT, 'benchmark', 'runtimes.js'))
const MiB = 1 << 20

/** How this runtime runs this script again, in a process of its own. */
const SELF = [process.execPath, ...(process.versions.deno ? DENO_RUN : []), new URL(import.meta.url).pathname]

/** What one step of a loop reads: one file, or all of them at once (a batch, its strings all kept until it returns). */
const READERS = {
  ours: (files, i) => r.readFileUtf8(files[i % files.length]).length,
  fs: (files, i) => fs.readFileSync(files[i % files.length], 'utf8').length,
  'ours-batch': (files) => r.readFilesUtf8(files).reduce((n, s) => n + s.length, 0),
  'fs-batch': (files) => files.map((file) => fs.readFileSync(file, 'utf8')).reduce((n, s) => n + s.length, 0),
}

/** `steps` steps of `reader` over `files`, in this process: the peak RSS in bytes, and the characters read. */
function loopPeak(reader, files, steps) {
  let peak = 0
  let chars = 0
  for (let i = 0; i < steps; i++) {
    chars += READERS[reader](files, i)
    peak = Math.max(peak, process.memoryUsage.rss())
  }
  return { peak, chars }
}

if (process.argv[2] === 'loop') {
  const [reader, steps, ...files] = process.argv.slice(3)
  console.log(JSON.stringify(loopPeak(reader, files, Number(steps))))
  process.exit(0)
}

const RUNTIME = process.versions.deno ? `Deno ${process.versions.deno}` : process.versions.bun ? `Bun ${process.versions.bun}` : `Node ${process.version}`
console.log(`# ${RUNTIME}`)

let pass = 0
let fail = 0
async function check(name, fn) {
  try {
    await fn()
    pass++
    console.log(`ok ${pass + fail} ${name}`)
  } catch (err) {
    fail++
    console.log(`not ok ${pass + fail} ${name}`)
    console.error(err)
  }
}

/** `size` bytes of a kind of text: the test suites' repeated texts, and invalid: mixed text with a stray byte every ~4 KiB and a cut character at the end. */
function text(kind, size) {
  if (kind !== 'invalid') return bigBuffer(BASES[kind], size)
  const buf = bigBuffer(BASES.utf8_mixed, size)
  for (let at = 4000; at < size; at += 4096) buf[at] = 0xff
  if (size >= 2) buf.set([0xe4, 0xb8].slice(0, Math.min(2, size)), size - Math.min(2, size))
  return buf
}

const KINDS = [...Object.keys(BASES), 'invalid']
const SIZES = [0, 1, 63, 1024, 16 * 1024, 300 * 1024, 1536 * 1024, 5 * MiB]
const files = []
for (const kind of KINDS) {
  for (const size of SIZES) {
    const file = scratch(`${kind}-${size}.txt`)
    fs.writeFileSync(file, text(kind, size))
    files.push({ kind, size, file })
  }
}

await check('the addon loads with the simdutf engine', () => assert.equal(r.engine(), 'simdutf'))

await check(`readFileUtf8 === fs.readFileSync(p, 'utf8'): ${files.length} files`, () => {
  for (const { kind, size, file } of files) {
    assert.ok(r.readFileUtf8(file) === fs.readFileSync(file, 'utf8'), `${kind} ${size}`)
  }
})

await check('readFileUtf8 in both memory modes and with a Buffer path, === fs', () => {
  const was = r.setMemoryMode('lean')
  try {
    for (const { kind, size, file } of files) assert.ok(r.readFileUtf8(Buffer.from(file)) === fs.readFileSync(file, 'utf8'), `${kind} ${size}`)
  } finally {
    r.setMemoryMode(was)
  }
})

await check('readFileUtf8Async === fs.promises.readFile(p, "utf8")', async () => {
  const ours = await Promise.all(files.map(({ file }) => r.readFileUtf8Async(file)))
  const theirs = await Promise.all(files.map(({ file }) => fs.promises.readFile(file, 'utf8')))
  ours.forEach((s, i) => assert.ok(s === theirs[i], `${files[i].kind} ${files[i].size}`))
})

await check('readFilesUtf8 over every file === fs', () => {
  const ours = r.readFilesUtf8(files.map(({ file }) => file))
  ours.forEach((s, i) => assert.ok(s === fs.readFileSync(files[i].file, 'utf8'), `${files[i].kind} ${files[i].size}`))
})

await check("decodeUtf8 === buffer.toString('utf8')", () => {
  for (const { kind, size, file } of files) {
    const bytes = fs.readFileSync(file)
    assert.ok(r.decodeUtf8(bytes) === bytes.toString('utf8'), `${kind} ${size}`)
  }
})

await check("errors are fs's, field by field (ENOENT, EISDIR)", () => {
  for (const target of [scratch('missing.txt'), path.dirname(scratch('missing.txt'))]) {
    const ours = thrown(() => r.readFileUtf8(target))
    const theirs = thrown(() => fs.readFileSync(target, 'utf8'))
    for (const field of ['name', 'message', 'code', 'errno', 'syscall', 'path']) {
      assert.equal(ours[field], theirs[field], `${target}: ${field}`)
    }
  }
})

const large = files.filter(({ size }) => size === 5 * MiB).map(({ file }) => file)
// A batch as memory.slow.js reads them on Node: many files of about a MiB.
const batch = files.filter(({ size }) => size >= 300 * 1024 && size < 5 * MiB).map(({ file }) => file)
const mib = (bytes) => `${(bytes / MiB).toFixed(0)} MiB`
/** Runs the loops of `ours` and of `theirs` (READERS), `steps` steps each, each in a fresh process; asserts ours peaked within the bound. */
function peaksWithin(ours, theirs, steps, over) {
  const run = (reader) => {
    const child = spawnSync(SELF[0], [...SELF.slice(1), 'loop', reader, String(steps), ...over], { encoding: 'utf8' })
    assert.equal(child.status, 0, child.stderr)
    return JSON.parse(child.stdout)
  }
  const fsLoop = run(theirs)
  const ourLoop = run(ours)
  assert.equal(ourLoop.chars, fsLoop.chars)
  const bound = defaultPeakBound(fsLoop.peak / MiB) * MiB
  console.log(`# peak RSS: ${ours} ${mib(ourLoop.peak)}, ${theirs} ${mib(fsLoop.peak)}, bound ${mib(bound)}`)
  assert.ok(ourLoop.peak <= bound, `${ours} peaked at ${mib(ourLoop.peak)}, over ${mib(bound)}`)
}

await check('a loop of large sync reads peaks within max(1.25 × fs, fs + 128 MiB)', () => peaksWithin('ours', 'fs', 300, large))

await check("a loop of batches of large files peaks within max(1.25 × fs's, fs's + 128 MiB)", () =>
  peaksWithin('ours-batch', 'fs-batch', 100, batch),
)

console.log(`# pass ${pass}`)
console.log(`# fail ${fail}`)
process.exit(fail === 0 ? 0 : 1)
