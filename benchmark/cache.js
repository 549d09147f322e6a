'use strict'
// What the bench keeps on disk, for the lines bench.js prints before and
// after a run: the fixtures it generates and the Bun and Deno binaries some
// suites fetch from the npm registry (scripts/get-runtime.sh), all in the
// cache folder of the repo's scripts, which also holds the pinned Nodes and
// tools of CI. Nothing is written into the repo but RESULTS.md (--save).
const fs = require('node:fs')
const path = require('node:path')

const { cacheDir } = require('./fixtures')
const { fmtMiB } = require('./format')

/** What the bench puts in the cache folder: its subfolder, and what it is. */
const KEPT = {
  fixtures: 'generated text fixtures',
  bun: 'Bun from the npm registry',
  deno: 'Deno from the npm registry',
}

/** Bytes under `dir` (0 if it does not exist). */
function bytesUnder(dir) {
  let total = 0
  let entries
  try {
    entries = fs.readdirSync(dir, { withFileTypes: true })
  } catch {
    return 0
  }
  for (const entry of entries) {
    const file = path.join(dir, entry.name)
    if (entry.isDirectory()) total += bytesUnder(file)
    else if (entry.isFile()) total += fs.statSync(file).size
  }
  return total
}

/** { name: bytes } of each of KEPT's subfolders now. */
function snapshot() {
  return Object.fromEntries(Object.keys(KEPT).map((name) => [name, bytesUnder(path.join(cacheDir(), name))]))
}

/** The line before a run: where things go, how much is there, how to clear it. */
function beforeLine(now) {
  const base = cacheDir()
  const held = Object.entries(now)
    .filter(([, bytes]) => bytes > 0)
    .map(([name, bytes]) => `${name}/ ${fmtMiB(bytes)}`)
  return (
    `cache: ${base} (READFILE_UTF8_CACHE moves it): ${Object.entries(KEPT)
      .map(([name, what]) => `${name}/ ${what}`)
      .join(', ')}, each made once and reused; ` +
    `now ${held.length ? held.join(', ') : 'none of them'}. Clear it with: rm -rf ${Object.keys(KEPT)
      .map((name) => JSON.stringify(path.join(base, name)))
      .join(' ')}`
  )
}

/** The line after a run: what it added to the cache. */
function afterLine(before, after) {
  const added = Object.keys(KEPT)
    .filter((name) => after[name] > before[name])
    .map((name) => `${name}/ +${fmtMiB(after[name] - before[name])}`)
  return `cache: this run ${added.length ? `added ${added.join(', ')}` : 'added nothing'} (${cacheDir()})`
}

module.exports = { snapshot, beforeLine, afterLine }
