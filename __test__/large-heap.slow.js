'use strict'
// A process whose heap is full of live objects, as a compiler's or bundler's
// is: every full GC must mark them all. External strings are freed only by
// full GCs, which V8 starts for every 64 MiB of them, so there large strings
// must be copies, and a loop of reads must bring on no more full GCs than the
// same loop of Node's own calls. And every string is still fs's. The children
// run in the fast memory mode, whose sync calls would otherwise make external
// strings (the lean mode copies where fs does).
const { test } = require('node:test')
const assert = require('node:assert/strict')
const fs = require('node:fs')
const path = require('node:path')
const { spawnSync } = require('node:child_process')

const { scratch, FAST_MODE_ENV } = require('./helpers')
const { BASES, bigBuffer } = require('./cases')
const { runsWhileMissing, lowestOver } = require('./reruns')
const { takesNative } = require('../lib/decode')

/** Live objects the child holds: above every Node's heap_below in src/limits.rs. */
const LIVE_HEAP_MIB = 128
/** Bytes each child reads in its loop: several full GCs' worth of external strings. */
const LOOP_MIB = 384

/** Runs `body` in a fresh Node after filling its heap; returns its JSON output and its full GCs. */
function inLargeHeap(body) {
  const script = `
    const fs = require('node:fs')
    const lib = require(${JSON.stringify(path.join(__dirname, '..'))})
    const objects = new Array(Math.round((${LIVE_HEAP_MIB} * 2 ** 20) / 48))
    for (let i = 0; i < objects.length; i++) objects[i] = { index: i, previous: objects[i - 1] ?? null }
    console.log('--- filled')
    ;(async () => {
      const out = await (async () => { ${body} })()
      console.log('--- result ' + JSON.stringify({ out, live: objects.length }))
    })()`
  const r = spawnSync(process.execPath, ['--trace-gc', '-e', script], { encoding: 'utf8', maxBuffer: 64 << 20, env: FAST_MODE_ENV })
  assert.equal(r.status, 0, r.stderr)
  const after = r.stdout.split('--- filled\n')[1]
  assert.ok(after !== undefined, r.stdout.slice(-2000))
  const fullGcs = after.split('\n').filter((line) => /Mark-Compact|Mark-sweep/.test(line)).length
  const result = JSON.parse(after.split('--- result ')[1].split('\n')[0])
  return { ...result.out, fullGcs }
}

test('in a large heap, every API gives fs\'s string for large text of every class', () => {
  const files = {}
  for (const [kind, base] of Object.entries(BASES)) {
    for (const size of [(64 << 10) + 1, (1 << 20) + 3]) {
      const file = scratch(`large-heap-${kind}-${size}.txt`)
      fs.writeFileSync(file, bigBuffer(base, size))
      files[`${kind} ${size}`] = file
    }
  }
  const invalid = scratch('large-heap-invalid.txt')
  const bytes = bigBuffer(BASES.utf8_mixed, 1 << 20)
  for (let i = 0; i < bytes.length; i += 4099) bytes[i] = 0xff
  fs.writeFileSync(invalid, bytes)
  files['invalid 1 MiB'] = invalid

  const { mismatches, checked } = inLargeHeap(`
    const files = ${JSON.stringify(files)}
    const mismatches = []
    let checked = 0
    const same = (label, got, want) => { checked++; if (got !== want) mismatches.push(label) }
    const list = Object.values(files)
    const batch = lib.readFilesUtf8(list)
    const batchAsync = await lib.readFilesUtf8Async(list)
    for (const [i, [label, file]] of Object.entries(files).entries()) {
      const want = fs.readFileSync(file, 'utf8')
      same(label + ' readFileUtf8', lib.readFileUtf8(file), want)
      same(label + ' readFileUtf8Async', await lib.readFileUtf8Async(file), want)
      same(label + ' readFilesUtf8', batch[i], want)
      same(label + ' readFilesUtf8Async', batchAsync[i], want)
      same(label + ' decodeUtf8', lib.decodeUtf8(fs.readFileSync(file)), want)
    }
    return { mismatches, checked }`)
  assert.deepEqual(mismatches, [])
  assert.equal(checked, Object.keys(files).length * 5)
})

test(`in a large heap, a loop of ${LOOP_MIB} MiB of reads brings on no more full GCs than fs's`, (t) => {
  // Under 1,031,913 characters, which Node 26's fs (and Buffer#toString) would
  // make external strings themselves; Node 20-24 never do.
  const size = 960 << 10
  const files = {
    ascii: Buffer.alloc(size, 'a'),
    latin1: bigBuffer(BASES.latin1, size),
    utf16: bigBuffer(BASES.utf8_mixed, size),
  }
  // A whole number of batches of 64.
  const calls = 64 * Math.round((LOOP_MIB << 20) / size / 64)
  for (const [kind, bytes] of Object.entries(files)) {
    const file = scratch(`large-heap-loop-${kind}.txt`)
    fs.writeFileSync(file, bytes)
    const loop = (call) =>
      inLargeHeap(`
        let chars = 0
        for (let i = 0; i < ${calls}; i++) chars += (await (${call})(${JSON.stringify(file)}, i)).length
        return { chars }`)
    // Each API, and the call of Node's that it stands in for.
    const pairs = {
      readFileUtf8: ['(file) => lib.readFileUtf8(file)', "(file) => fs.readFileSync(file, 'utf8')"],
      readFileUtf8Async: ['(file) => lib.readFileUtf8Async(file)', "(file) => fs.promises.readFile(file, 'utf8')"],
      decodeUtf8: ['(file) => lib.decodeUtf8(fs.readFileSync(file))', '(file) => fs.readFileSync(file).toString()'],
      // Batches of 64 files: 64 of them alive at a time.
      readFilesUtf8: [
        '(file, i) => i % 64 ? "" : lib.readFilesUtf8(Array(64).fill(file)).join("")',
        '(file, i) => i % 64 ? "" : Array.from({ length: 64 }, () => fs.readFileSync(file, "utf8")).join("")',
      ],
    }
    // decodeUtf8 leaves some inputs to Buffer#toString (ASCII under 1 MiB on
    // Node 24+): those strings are Node's own, and only their text is ours to check.
    const ours = (name) => name !== 'decodeUtf8' || takesNative(bytes, 0, bytes.length)
    const expected = fs.readFileSync(file, 'utf8').length * calls
    for (const [name, [call, nodeCall]] of Object.entries(pairs)) {
      // External strings would bring on one more per 64 MiB: 5 here. Node's
      // own loop needs a different count from run to run (see reruns.js).
      const over = (ourGcs, nodeGcs) => ours(name) && ourGcs > nodeGcs + 2
      const fewest = (runs, side) => lowestOver(runs, (pair) => pair[side].fullGcs)
      const runs = runsWhileMissing(
        () => [loop(call), loop(nodeCall)],
        (runs) => over(fewest(runs, 0), fewest(runs, 1)),
      )
      for (const [a, b] of runs) {
        assert.equal(a.chars, expected, `${kind} ${name}: every string whole`)
        assert.equal(b.chars, expected, `${kind} ${name}: Node's every string whole`)
      }
      const [ourGcs, nodeGcs] = [fewest(runs, 0), fewest(runs, 1)]
      t.diagnostic(`${kind} ${name}: ${ourGcs} full GCs after filling the heap, Node's own ${nodeGcs}${runs.length > 1 ? ` (fewest of ${runs.length} runs each)` : ''}`)
      assert.ok(!over(ourGcs, nodeGcs), `${kind} ${name}: ${ourGcs} full GCs, Node's own ${nodeGcs}`)
    }
  }
})

test('the heap is measured only once a string could be external, then once every few calls', () => {
  const small = scratch('large-heap-small.txt')
  fs.writeFileSync(small, 'small\n')
  const large = scratch('large-heap-one-large.txt')
  // External on every Node once read asynchronously (limits::ExternalFrom).
  fs.writeFileSync(large, Buffer.alloc(4 << 20, 'a'))
  const script = `
    const lib = require(${JSON.stringify(path.join(__dirname, '..'))})
    const smallReads = () => {
      for (let i = 0; i < 1000; i++) {
        if (lib.readFileUtf8(${JSON.stringify(small)}) !== 'small\\n') throw new Error('read')
        if (lib.decodeUtf8(Buffer.from('small\\n')) !== 'small\\n') throw new Error('decode')
      }
    }
    smallReads()
    const loadedBefore = process.moduleLoadList.includes('NativeModule v8')
    const v8 = require('node:v8')
    const measure = v8.getHeapSpaceStatistics
    let measured = 0
    v8.getHeapSpaceStatistics = () => {
      measured++
      return measure()
    }
    lib.readFileUtf8Async(${JSON.stringify(large)}).then((text) => {
      smallReads()
      console.log(JSON.stringify({ loadedBefore, measured, chars: text.length }))
    })`
  const r = spawnSync(process.execPath, ['-e', script], { encoding: 'utf8' })
  assert.equal(r.status, 0, r.stderr)
  const { loadedBefore, measured, chars } = JSON.parse(r.stdout)
  assert.equal(chars, 4 << 20)
  assert.equal(loadedBefore, false, 'node:v8 is not loaded by 2000 small calls')
  // Asking V8 costs about as much as a small file's read.
  assert.ok(measured >= 1 && measured <= 2000 / 16, `measured ${measured} times in 2000 calls after a large string`)
})
