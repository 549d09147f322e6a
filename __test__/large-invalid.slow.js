'use strict'
// Large text with invalid sequences (src/limits.rs, V8_DECODES_INVALID_FROM):
// from 32 MiB on, a sync read or decodeUtf8 leaves text invalid within its
// first 64 KiB to V8's own decoder, as fs does, and decodes the rest itself.
// Either way the string is fs's, and a loop of such reads peaks as fs's does.
const { test } = require('node:test')
const assert = require('node:assert/strict')
const fs = require('node:fs')
const path = require('node:path')
const { spawnSync } = require('node:child_process')

const { readFileUtf8, decodeUtf8 } = require('..')
const { scratch, assertSameAsFs } = require('./helpers')
const { bigBuffer } = require('./cases')
const { runsWhileMissing, lowestOver } = require('./reruns')

const MiB = 1 << 20
const V8_FROM = 32 * MiB
const EARLY = 64 * 1024
const UNIT = 'mixed é 中 😀 text\n'
/** `size` bytes of UNIT repeated (a character may be cut at the end). */
const text = (size) => bigBuffer(UNIT, size)

/** Inputs of `size` bytes: invalid at the start, just before or only past the 64 KiB mark, or all through. */
function* invalidCases(size) {
  const at = (bytes, offset, odd) => {
    const b = text(size)
    Buffer.from(odd).copy(b, offset)
    return b
  }
  yield ['stray FF at 0', at(size, 0, [0xff])]
  yield ['a surrogate (ED A0 80) at 10', at(size, 10, [0xed, 0xa0, 0x80])]
  yield ['lone 80 just before the 64 KiB mark', at(size, EARLY - 1, [0x80])]
  // Valid up to far past the mark (a character cut by it is not an error).
  const late = at(size, EARLY - 2, Buffer.from('😀'))
  late[size - 1] = 0xff
  yield ['a character across the 64 KiB mark, FF only at the end', late]
  const sprinkled = text(size)
  for (let i = 1000; i < size; i += 4099) sprinkled[i] = 0xff
  yield ['FF every 4099 bytes', sprinkled]
}

test('either side of 32 MiB, invalid early or only late: readFileUtf8 is fs, decodeUtf8 is Buffer#toString', () => {
  const file = scratch('large-invalid.txt')
  let checked = 0
  for (const size of [V8_FROM - 1, V8_FROM]) {
    for (const [label, bytes] of invalidCases(size)) {
      assertSameAsFs(readFileUtf8, file, bytes, `${size} bytes, ${label}`)
      assert.ok(decodeUtf8(bytes) === bytes.toString('utf8'), `decodeUtf8, ${size} bytes, ${label}`)
      assert.ok(decodeUtf8(bytes, 1, size - 1) === bytes.toString('utf8', 1, size - 1), `decodeUtf8 1..-1, ${size} bytes, ${label}`)
      checked++
    }
  }
  assert.equal(checked, 10)
})

test('a loop of 64 MiB reads and decodes of invalid text peaks at most 1.25x fs\'s and Buffer#toString\'s', (t) => {
  const file = scratch('large-invalid-64.txt')
  const bytes = text(64 * MiB)
  for (let i = 1000; i < bytes.length; i += 4099) bytes[i] = 0xff
  fs.writeFileSync(file, bytes)
  const root = JSON.stringify(path.join(__dirname, '..'))
  // Each loop: what it decodes from (the file's bytes, for the decoders) and its call.
  const theBytes = `fs.readFileSync(${JSON.stringify(file)})`
  const loops = {
    ours: ['null', `api.readFileUtf8(${JSON.stringify(file)})`],
    fs: ['null', `fs.readFileSync(${JSON.stringify(file)}, 'utf8')`],
    'ours decode': [theBytes, 'api.decodeUtf8(buf)'],
    'Buffer#toString': [theBytes, "buf.toString('utf8')"],
  }
  const lengths = new Set()
  /** One loop's peak RSS in MiB, in a fresh process, so that the peak is this loop's alone. */
  const peakOf = (who) => {
    const [input, call] = loops[who]
    const script = `
      const fs = require('node:fs')
      const api = require(${root})
      const buf = ${input}
      // Some objects, as any program holds: on Node 24 and 26, whether a
      // loop's previous 64 MiB string is collected before its next is made
      // turns on such allocations, for Buffer#toString's strings as for ours.
      const held = Array.from({ length: 1000 }, (_, i) => ({ i }))
      let length = 0
      for (let i = 0; i < 6; i++) length += ${call}.length
      process.stdout.write(JSON.stringify({ length, maxRssKiB: process.resourceUsage().maxRSS }))`
    const r = spawnSync(process.execPath, ['-e', script], { encoding: 'utf8' })
    assert.equal(r.status, 0, r.stderr)
    const { length, maxRssKiB } = JSON.parse(r.stdout)
    lengths.add(length)
    return maxRssKiB / 1024
  }
  // That collection, which decides a loop's peak, happens in some runs and not
  // others (see reruns.js).
  const peak = {}
  const runCounts = []
  for (const [a, b] of [['ours', 'fs'], ['ours decode', 'Buffer#toString']]) {
    const lowest = (runs, who) => lowestOver(runs, (run) => run[who])
    const runs = runsWhileMissing(
      () => ({ [a]: peakOf(a), [b]: peakOf(b) }),
      (runs) => lowest(runs, a) > 1.25 * lowest(runs, b),
    )
    for (const who of [a, b]) peak[who] = lowest(runs, who)
    runCounts.push(`${runs.length} run(s) of ${a} and ${b}`)
  }
  assert.equal(lengths.size, 1, 'every loop made strings of the same length')
  t.diagnostic(`${Object.entries(peak).map(([who, mib]) => `${who} ${mib.toFixed(0)} MiB`).join(', ')} (lowest of ${runCounts.join(', ')})`)
  assert.ok(peak.ours <= 1.25 * peak.fs, `sync: ours ${peak.ours.toFixed(0)} MiB, fs ${peak.fs.toFixed(0)} MiB`)
  assert.ok(peak['ours decode'] <= 1.25 * peak['Buffer#toString'], `decodeUtf8: ours ${peak['ours decode'].toFixed(0)} MiB, toString ${peak['Buffer#toString'].toFixed(0)} MiB`)
})
