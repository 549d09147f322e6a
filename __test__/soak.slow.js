'use strict'
// Small, fast versions of `npm run soak` (__test__/soak/soak.js), whose
// thresholds they share: every phase in a fresh process, thresholds asserted.
const { test } = require('node:test')
const assert = require('node:assert/strict')
const path = require('node:path')
const { spawnSync } = require('node:child_process')

const { NO_FD_COUNT, unsupportedOnWindows } = require('./helpers')

const SOAK = path.join(__dirname, 'soak', 'soak.js')

function soak(phase, ...args) {
  const r = spawnSync(process.execPath, [SOAK, '--json', '--phases', phase, ...args], { encoding: 'utf8' })
  assert.equal(r.status === 0 || r.status === 1, true, `soak ${phase} ended with ${r.signal ?? r.status}: ${r.stderr}`)
  const [result] = JSON.parse(r.stdout)
  assert.deepEqual(result.problems, [], `${phase}: ${JSON.stringify(result)}\n${r.stderr}`)
  assert.equal(r.status, 0)
  return result
}

test("2000 sync reads of 1 MiB files of every class: each is fs's string, peak RSS under the engine's limit, no string or buffer kept", () => {
  const r = soak('sync', '--reads', '2000', '--warmup', '2000')
  assert.equal(r.reads, 2000)
  assert.ok(r.peakRssMiB < r.peakRssLimitMiB)
  assert.equal(r.rssAfterGcMiB.length, 8)
  assert.equal(r.rssIdleMiB.length, 2)
})

test("2000 async reads of 1 MiB files at concurrency 64: each is fs's string, peak RSS under the engine's limit, no string or buffer kept", () => {
  const r = soak('async', '--reads', '2000', '--warmup', '2000', '--concurrency', '64')
  assert.equal(r.reads, 2000)
  assert.ok(r.peakRssMiB < r.peakRssLimitMiB)
  assert.equal(r.externalAfterGcMiB.length, 8)
  assert.equal(r.rssIdleMiB.length, 2)
})

test('1000 failing reads (ENOENT, EISDIR, ENOTDIR, EBADF; sync, async, callback) and 2 too-long reads leak no fd', unsupportedOnWindows(NO_FD_COUNT), () => {
  const r = soak('fds', '--failures', '1000', '--too-long', '2')
  assert.equal(r.failures, 1000)
  assert.ok(r.fdsBefore > 0)
  assert.equal(r.fdsAfter, r.fdsBefore)
})

test("a kMaxLength-byte file: fs's ERR_STRING_TOO_LONG, at most one copy of the file in memory, RSS back down after GC", () => {
  const r = soak('toolong', '--too-long', '2')
  assert.equal(r.rounds, 2)
  assert.equal(r.afterGcMiB.length, 2)
  assert.ok(r.peakRssMiB <= r.baselineMiB + r.fileMiB + 128, `peak RSS ${r.peakRssMiB} MiB`)
  for (const rss of r.afterGcMiB) assert.ok(rss < r.baselineMiB + 48, `RSS after GC ${rss} MiB`)
})

test("memory given back: after the same work and 1 s idle, RSS within 32 MiB of fs's (sync, async, decodeUtf8); async peak at concurrency 64 at most fs.promises'; sync and decode peaks within the default's bound over fs's, the lean mode's at most 1.25x", () => {
  // The async peak is compared where the issue sets it, 64 reads in flight: with
  // a few reads at low concurrency both peaks are within noise of each other.
  // soak.js judges the peaks (sync and decode against COPIED_PEAK_RATIO) and
  // soak() asserts that it found no problem.
  const r = soak(
    'giveback',
    ...['--giveback-sizes', '4', '--giveback-classes', 'ascii,cjk,invalid', '--giveback-reads', '24'],
    ...['--giveback-async-reads', '64', '--concurrency', '64'],
  )
  assert.deepEqual(
    r.rows.map((row) => row.work),
    ['sync:4:ascii', 'sync:4:cjk', 'sync:4:invalid', 'async:4:ascii', 'async:4:cjk', 'decode:4:ascii', 'decode:4:cjk'],
  )
  for (const { work, ours, fs } of r.rows) {
    assert.equal(ours.chars, fs.chars)
    assert.ok(ours.idleRssMiB <= fs.idleRssMiB + 32 && ours.peakRssMiB > 0, `${JSON.stringify({ ours, fs })}`)
  }
})
