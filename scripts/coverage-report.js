'use strict'
// The tables of `npm run coverage` (scripts/coverage.js), from the reports it
// leaves in target/coverage/: per file, lines and branches (Rust: regions, on a
// stable rustc) and functions, for lib/ (with the entry files) and src/; the
// totals with and without the gaps scripts/coverage-gaps.json accepts; the
// functions no test reaches. Exits 1 if, the accepted gaps left out, an area
// is under a floor, or if an accepted gap no longer names any code.
//
// Usage: node scripts/coverage-report.js [--rust-branches]
//   --rust-branches: the Rust report has branch counts (a nightly rustc).
const fs = require('node:fs')
const path = require('node:path')
const { parseArgs } = require('node:util')
const { spawnSync } = require('node:child_process')

const ROOT = path.join(__dirname, '..')
const OUT = path.join(ROOT, 'target', 'coverage')
const GAPS_FILE = path.join(__dirname, 'coverage-gaps.json')
/** The issue's floors, in percent, for each area once the accepted gaps are left out. */
const FLOORS = { lines: 95, branches: 90 }

const { values: args } = parseArgs({ options: { 'rust-branches': { type: 'boolean', default: false } } })

/** A tally: how many, how many reached. */
const tally = () => ({ total: 0, hit: 0 })
const add = (t, hit) => {
  t.total++
  if (hit) t.hit++
}
const percent = (t) => (t.total === 0 ? 100 : (100 * t.hit) / t.total)
const shown = (t) => `${percent(t).toFixed(1).padStart(5)} % ${`${t.hit}/${t.total}`.padStart(11)}`

/**
 * What each file offers: `lines` (line → count), `branches` and `functions`
 * ([{ line, ... , hit }]). Branches carry the line they start on, functions
 * their name and line range.
 */

/** V8's coverage through c8 (istanbul's coverage-final.json). */
function jsFiles() {
  const file = path.join(OUT, 'js', 'coverage-final.json')
  const data = JSON.parse(fs.readFileSync(file, 'utf8'))
  const files = new Map()
  for (const [abs, cov] of Object.entries(data)) {
    const lines = new Map()
    for (const [id, loc] of Object.entries(cov.statementMap)) {
      const line = loc.start.line
      lines.set(line, Math.max(lines.get(line) ?? 0, cov.s[id]))
    }
    const branches = []
    for (const [id, branch] of Object.entries(cov.branchMap)) {
      branch.locations.forEach((loc, i) => {
        branches.push({ line: loc.start.line ?? branch.loc.start.line, hit: cov.b[id][i] > 0 })
      })
    }
    const functions = Object.entries(cov.fnMap).map(([id, fn]) => ({
      name: fn.name || '(anonymous)',
      line: fn.loc.start.line,
      end: fn.loc.end.line,
      hit: cov.f[id] > 0,
    }))
    files.set(path.relative(ROOT, abs), { lines, branches, functions })
  }
  return files
}

/**
 * Rust symbols for people (`two_threads::helper::Helper::serve::{closure#0}`),
 * by binutils' c++filt or LLVM's llvm-cxxfilt, which read both of rustc's
 * manglings; the symbols as they are where neither is on PATH.
 */
function demangled(symbols) {
  for (const tool of ['c++filt', 'llvm-cxxfilt']) {
    const r = spawnSync(tool, [], { input: symbols.join('\n'), encoding: 'utf8', maxBuffer: 64 << 20 })
    const lines = r.status === 0 ? r.stdout.split('\n') : []
    if (lines.length >= symbols.length) {
      return lines.slice(0, symbols.length).map((name) => name.replace(/\[[0-9a-f]{16}\]/g, '').replace(/(^|[<&* ])readfile_utf8::/g, '$1'))
    }
  }
  return symbols
}

/** llvm-cov's region kinds: only code regions are counted (as llvm-cov's own summary does). */
const CODE_REGION = 0

/** cargo llvm-cov's reports: lines from lcov, regions (or branches) and functions from the JSON export. */
function rustFiles() {
  const files = new Map()
  const entry = (abs) => {
    const rel = path.relative(ROOT, abs)
    if (!files.has(rel)) files.set(rel, { lines: new Map(), branches: [], functions: [], regions: new Map(), branchOutcomes: new Map() })
    return files.get(rel)
  }
  let current = null
  for (const line of fs.readFileSync(path.join(OUT, 'rust', 'lcov.info'), 'utf8').split('\n')) {
    if (line.startsWith('SF:')) current = entry(line.slice(3))
    else if (line.startsWith('DA:')) {
      const [n, count] = line.slice(3).split(',').map(Number)
      current.lines.set(n, Math.max(current.lines.get(n) ?? 0, count))
    }
  }
  const data = JSON.parse(fs.readFileSync(path.join(OUT, 'rust', 'coverage.json'), 'utf8')).data[0]
  const known = new Set([...files.keys()])
  // Each instantiation of a generic function, and each build's copy of one
  // (the two readers' builds), is a record of its own: merged by place.
  const functions = new Map()
  const names = new Map()
  const records = data.functions.filter((fn) => known.has(path.relative(ROOT, fn.filenames[0])))
  demangled(records.map((fn) => fn.name)).forEach((name, i) => names.set(records[i], name))
  for (const fn of records) {
    const abs = fn.filenames[0]
    const rel = path.relative(ROOT, abs)
    const file = files.get(rel)
    const code = fn.regions.filter((r) => r[7] === CODE_REGION && r[5] === 0)
    if (code.length === 0) continue
    for (const [ls, cs, le, ce, count] of code) {
      const key = `${ls}:${cs}:${le}:${ce}`
      file.regions.set(key, { line: ls, hit: (file.regions.get(key)?.hit ?? false) || count > 0 })
    }
    // A branch (nightly's --branch): its true and its false outcome, each reached or not.
    for (const [ls, cs, le, ce, yes, no] of fn.branches ?? []) {
      const key = `${ls}:${cs}:${le}:${ce}`
      const seen = file.branchOutcomes.get(key)
      file.branchOutcomes.set(key, { line: ls, yes: (seen?.yes ?? false) || yes > 0, no: (seen?.no ?? false) || no > 0 })
    }
    const [line, column] = code.map((r) => [r[0], r[1]]).sort((a, b) => a[0] - b[0] || a[1] - b[1])[0]
    const end = Math.max(...code.map((r) => r[2]))
    const key = `${rel}:${line}:${column}`
    const seen = functions.get(key)
    if (seen) seen.hit ||= fn.count > 0
    else functions.set(key, { file, name: names.get(fn), line, end, hit: fn.count > 0 })
  }
  for (const { file, ...fn } of functions.values()) file.functions.push(fn)
  for (const file of files.values()) {
    file.branches = args['rust-branches']
      ? [...file.branchOutcomes.values()].flatMap(({ line, yes, no }) => [{ line, hit: yes }, { line, hit: no }])
      : [...file.regions.values()]
    delete file.regions
    delete file.branchOutcomes
  }
  return files
}

/**
 * A gap's `function`, as a test of functions' names: the name, or its last
 * parts (`Helper::serve`), with `*` for any characters.
 */
function namePattern(name) {
  const body = name.split('*').map((part) => part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')).join('.*')
  return new RegExp(`(^|::)${body}$`)
}

/** The accepted gaps, each resolved to its file's lines: [{ file, lines: Set, reason, label }]. */
function acceptedGaps(areas) {
  const gaps = JSON.parse(fs.readFileSync(GAPS_FILE, 'utf8')).gaps
  const problems = []
  const resolved = gaps.map((gap) => {
    const label = `${gap.file} ${gap.function ? `fn ${gap.function}` : gap.text ? `'${gap.text}'` : `lines ${gap.lines.join('-')}`}`
    const cov = areas.js.get(gap.file) ?? areas.rust.get(gap.file)
    const lines = new Set()
    if (cov === undefined) problems.push(`${label}: no such file in the reports`)
    else if (gap.function) {
      const named = namePattern(gap.function)
      for (const fn of cov.functions) {
        if (named.test(fn.name)) {
          for (let n = fn.line; n <= fn.end; n++) lines.add(n)
        }
      }
    } else if (gap.text) {
      fs.readFileSync(path.join(ROOT, gap.file), 'utf8')
        .split('\n')
        .forEach((text, i) => text.includes(gap.text) && lines.add(i + 1))
    } else {
      for (let n = gap.lines[0]; n <= gap.lines[1]; n++) lines.add(n)
    }
    if (cov !== undefined && lines.size === 0) problems.push(`${label}: names no code (stale: fix or remove it)`)
    return { file: gap.file, lines, reason: gap.reason, label }
  })
  return { resolved, problems }
}

/** A file's tallies, leaving out `excluded` lines (a Set) — the gaps. */
function tallies(cov, excluded = new Set()) {
  const t = { lines: tally(), branches: tally(), functions: tally() }
  for (const [line, count] of cov.lines) if (!excluded.has(line)) add(t.lines, count > 0)
  for (const b of cov.branches) if (!excluded.has(b.line)) add(t.branches, b.hit)
  for (const fn of cov.functions) if (!excluded.has(fn.line)) add(t.functions, fn.hit)
  return t
}

function sum(list) {
  const total = { lines: tally(), branches: tally(), functions: tally() }
  for (const t of list) {
    for (const k of Object.keys(total)) {
      total[k].total += t[k].total
      total[k].hit += t[k].hit
    }
  }
  return total
}

/** Prints an area's table; returns its totals with and without the gaps. */
function table(title, files, gapLines, branchWord) {
  const names = [...files.keys()].sort()
  const width = Math.max(28, ...names.map((n) => n.length)) + 2
  const head = `${'file'.padEnd(width)}${'lines'.padStart(19)}  ${branchWord.padStart(19)}  ${'functions'.padStart(19)}`
  console.log(`\n${title}\n${head}\n${'-'.repeat(head.length)}`)
  const row = (name, t) =>
    console.log(`${name.padEnd(width)}${shown(t.lines)}  ${shown(t.branches)}  ${shown(t.functions)}`)
  const all = []
  const kept = []
  for (const name of names) {
    const t = tallies(files.get(name))
    row(name, t)
    all.push(t)
    kept.push(tallies(files.get(name), gapLines.get(name)))
  }
  console.log('-'.repeat(head.length))
  const totals = { all: sum(all), kept: sum(kept) }
  row('all', totals.all)
  row('all, accepted gaps left out', totals.kept)
  return totals
}

/** Lines of each file that an accepted gap covers. */
function gapLinesByFile(resolved) {
  const byFile = new Map()
  for (const gap of resolved) {
    const lines = byFile.get(gap.file) ?? new Set()
    for (const n of gap.lines) lines.add(n)
    byFile.set(gap.file, lines)
  }
  return byFile
}

function unreached(title, files, gapLines) {
  const open = []
  const accepted = []
  for (const [name, cov] of [...files].sort(([a], [b]) => a.localeCompare(b))) {
    for (const fn of cov.functions.filter((f) => !f.hit).sort((a, b) => a.line - b.line)) {
      ;(gapLines.get(name)?.has(fn.line) ? accepted : open).push(`  ${name}:${fn.line}  ${fn.name}`)
    }
  }
  console.log(`\n${title}: functions no test reaches (${open.length}, and ${accepted.length} in accepted gaps)`)
  for (const line of open) console.log(line)
  if (accepted.length > 0) console.log(`  in accepted gaps:\n${accepted.map((l) => `  ${l}`).join('\n')}`)
}

function main() {
  const areas = { js: jsFiles(), rust: rustFiles() }
  const { resolved, problems } = acceptedGaps(areas)
  const gapLines = gapLinesByFile(resolved)
  const rustBranchWord = args['rust-branches'] ? 'branches' : 'regions'

  const js = table('JS: V8 coverage of lib/ and the entry files over the fast tier (c8)', areas.js, gapLines, 'branches')
  const rust = table('Rust: cargo llvm-cov of src/ over the JS fast tier and cargo test', areas.rust, gapLines, rustBranchWord)
  if (!args['rust-branches']) {
    console.log(
      'Rust "regions" stand in for branches: a stable rustc has no branch coverage ' +
        '(-Z coverage-options=branch is nightly-only); each arm of a branch, each side of a ' +
        '&& or ||, and each ? is a region of its own.',
    )
  }
  unreached('JS', areas.js, gapLines)
  unreached('Rust', areas.rust, gapLines)

  console.log(`\naccepted gaps (${path.relative(ROOT, GAPS_FILE)}):`)
  for (const gap of resolved) {
    const cov = areas.js.get(gap.file) ?? areas.rust.get(gap.file)
    const counted = cov ? [...gap.lines].filter((n) => cov.lines.has(n)) : []
    const branches = cov ? cov.branches.filter((b) => gap.lines.has(b.line)) : []
    const reached = counted.length + branches.length > 0 && counted.every((n) => cov.lines.get(n) > 0) && branches.every((b) => b.hit)
    console.log(`  ${gap.label}: ${gap.reason}${reached ? ' (all of it is reached now: remove it?)' : ''}`)
  }

  const failures = [...problems]
  for (const [area, totals, word] of [
    ['lib/ and the entry files', js, 'branches'],
    ['src/', rust, rustBranchWord],
  ]) {
    const { lines, branches } = totals.kept
    if (percent(lines) < FLOORS.lines) failures.push(`${area}: lines ${percent(lines).toFixed(1)} % < ${FLOORS.lines} %`)
    if (percent(branches) < FLOORS.branches) failures.push(`${area}: ${word} ${percent(branches).toFixed(1)} % < ${FLOORS.branches} %`)
  }

  console.log('\nreports:')
  console.log(`  JS:   ${path.relative(ROOT, path.join(OUT, 'js', 'index.html'))} (HTML), ${path.relative(ROOT, path.join(OUT, 'js', 'coverage-final.json'))} (JSON)`)
  console.log(`  Rust: ${path.relative(ROOT, path.join(OUT, 'rust', 'html', 'index.html'))} (HTML), ${path.relative(ROOT, path.join(OUT, 'rust', 'coverage.json'))} (JSON), ${path.relative(ROOT, path.join(OUT, 'rust', 'lcov.info'))}`)
  if (failures.length > 0) {
    console.error(`\ncoverage: under the floors (${FLOORS.lines} % lines, ${FLOORS.branches} % branches) with no accepted reason, or a stale gap:`)
    for (const f of failures) console.error(`  ${f}`)
    process.exit(1)
  }
  console.log(`\ncoverage: the floors hold (${FLOORS.lines} % lines, ${FLOORS.branches} % branches, accepted gaps left out)`)
}

main()
