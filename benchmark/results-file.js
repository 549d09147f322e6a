'use strict'
// benchmark/RESULTS.md: the latest saved run of each suite on each Node line
// (major version), one section each. `bench.js --save` replaces the sections of
// the suites it ran on this Node line and leaves the others; older runs stay in
// git history only, so the file stays small enough to read. A suite that is a
// part of another (sustained, of read) keeps its section only while it is newer
// than the whole suite's on that line. Tables are written unpadded: the
// padding that lines them up in a terminal was a quarter of the file.
const fs = require('node:fs')
const path = require('node:path')

const FILE = path.join(__dirname, 'RESULTS.md')
const MARKER = '<!-- bench.js --save keeps one section per suite and Node line below this line -->'
const HEAD = `# Benchmark results

Written by \`npm run bench -- --save\` (\`node benchmark/bench.js --save\`): the
latest saved run of each suite on each Node line, with the build, the machine
and the exact Node it ran on. A saved run replaces the sections of the suites
it ran on its Node line; earlier runs, and the runs written up by hand before
the bench wrote this file, are in git history (\`git log -p -- benchmark/RESULTS.md\`).
Timings on a shared machine spread from run to run: compare ratios within one
table rather than across sections.

${MARKER}
`

/** `## <suite> · Node <major>` starts a section; the rest of its heading is free text. */
const SECTION = /^## (\S+) · Node (\d+)\b.*$/gm

/** The sections below the marker: [{ suite, major, text }] in file order. */
function readSections(text) {
  const at = text.indexOf(MARKER)
  const body = at === -1 ? '' : text.slice(at + MARKER.length)
  const starts = [...body.matchAll(SECTION)]
  return starts.map((m, i) => ({
    suite: m[1],
    major: Number(m[2]),
    text: body.slice(m.index, i + 1 < starts.length ? starts[i + 1].index : body.length).trim(),
  }))
}

/** A section's date, from its heading ('## read · Node 20 · 2026-12-05 20:40 UTC · v20.20.2'). */
const sectionDate = (section) => /· (\d{4}-\d\d-\d\d \d\d:\d\d) UTC/.exec(section.text.split('\n')[0])?.[1] ?? ''

/** A Markdown table row without the padding: '|  a | b  |' → '| a | b |', '| :--- | ---: |' → '| :- | -: |'. */
function compactRow(line) {
  const cells = line
    .trim()
    .replace(/^\||\|$/g, '')
    .split(/(?<!\\)\|/)
    .map((cell) => cell.trim())
    .map((cell) => (/^:?-+:?$/.test(cell) ? `${cell.startsWith(':') ? ':' : ''}-${cell.length > 1 && cell.endsWith(':') ? ':' : ''}` : cell))
  return `| ${cells.join(' | ')} |`
}

const compactTables = (text) =>
  text
    .split('\n')
    .map((line) => (line.startsWith('|') ? compactRow(line) : line))
    .join('\n')

/**
 * Writes each of `suites` ([{ name, output, about }]) as the section of its
 * suite on this run's Node line, replacing the one there; `about` is a Markdown
 * list (build, machine, Node, command), `date` and `node` (process.version)
 * name the run. Sections are ordered by `order` (suite names), then Node line;
 * `partOf` ({ suite: whole suite }) names the suites whose report another's
 * contains.
 */
function saveRun({ date, node, suites }, order = [], partOf = {}) {
  const major = Number(/^v?(\d+)/.exec(node)[1])
  const previous = fs.existsSync(FILE) ? readSections(fs.readFileSync(FILE, 'utf8')) : []
  const fresh = suites.map(({ name, output, about }) => ({
    suite: name,
    major,
    text: [`## ${name} · Node ${major} · ${date} · ${node}`, '', ...about, '', output.trim()].join('\n'),
  }))
  const key = (s) => `${s.suite}\0${s.major}`
  const replaced = new Set(fresh.map(key))
  const kept = [...previous.filter((s) => !replaced.has(key(s))), ...fresh]
  const newerWhole = (s) => kept.some((w) => w.suite === partOf[s.suite] && w.major === s.major && sectionDate(w) > sectionDate(s))
  const sections = kept.filter((s) => !newerWhole(s)).map((s) => ({ ...s, text: compactTables(s.text) }))
  const rank = (suite) => (order.includes(suite) ? order.indexOf(suite) : order.length)
  sections.sort((a, b) => rank(a.suite) - rank(b.suite) || a.suite.localeCompare(b.suite) || a.major - b.major)
  fs.writeFileSync(FILE, `${HEAD}\n${sections.map((s) => s.text).join('\n\n')}\n`)
  return FILE
}

const README = path.join(__dirname, '..', 'README.md')
const README_START = '<!-- speed-ups: written by `npm run bench -- --save` from the mixed suite in benchmark/RESULTS.md -->'
const README_END = '<!-- /speed-ups -->'

/**
 * The README's table of speed-ups per Node line, from the mixed suite's
 * sections of RESULTS.md: figures come from saved runs, never typed by hand.
 * Leaves the README as it is if it has no such block.
 */
function updateReadme() {
  if (!fs.existsSync(README) || !fs.existsSync(FILE)) return false
  const readme = fs.readFileSync(README, 'utf8')
  const start = readme.indexOf(README_START)
  const end = readme.indexOf(README_END)
  if (start === -1 || end < start) return false
  const sections = readSections(fs.readFileSync(FILE, 'utf8'))
  const mixed = sections
    .filter((s) => s.suite === 'mixed')
    .sort((a, b) => a.major - b.major)
  const rows = mixed
    .map((s) => {
      const node = /· (v[\d.]+)/.exec(s.text.split('\n')[0])?.[1] ?? `${s.major}`
      const says = /Ours \(default\) is ([\d.]+)× fs \(median\), ([\d.]+)× \(mean\); ([\d.]+)× toString \(median\)[^;]*(?:; ([\d.]+)× Bun \(median\))?/.exec(s.text)
      if (!says) return null
      const bun = /\| Bun ([\d.]+) readFileSync/.exec(s.text)
      return `| Node ${node} | ${says[1]}× (${says[2]}× mean) | ${says[3]}× | ${says[4] ? `${says[4]}× (Bun ${bun?.[1] ?? ''})` : '—'} |`
    })
    .filter(Boolean)
  // Deno's row: from the newest run that measured Deno, whichever Node ran the suite.
  const underDeno = mixed
    .map((s) => ({ date: /· (\d{4}-\d\d-\d\d \d\d:\d\d) UTC/.exec(s.text)?.[1] ?? '', says: /Under Deno ([\d.]+), ours is ([\d.]+)× its fs \(median\), ([\d.]+)× \(mean\); ([\d.]+)× its toString/.exec(s.text) }))
    .filter(({ says }) => says)
    .sort((a, b) => a.date.localeCompare(b.date))
    .pop()?.says
  if (underDeno) rows.push(`| Deno ${underDeno[1]} | ${underDeno[2]}× (${underDeno[3]}× mean) | ${underDeno[4]}× | — |`)
  const table = [
    '| runtime | ours vs `fs.readFileSync(p, \'utf8\')` | vs `fs.readFileSync(p).toString()` | vs Bun\'s `readFileSync` |',
    '| :--- | ---: | ---: | ---: |',
    ...rows,
  ].join('\n')
  let next = `${readme.slice(0, start + README_START.length)}\n${table}\n${readme.slice(end)}`
  next = withToolsBlock(next, sections)
  fs.writeFileSync(README, next)
  return true
}

const TOOLS_START = '<!-- tools: written by `npm run bench -- --save` from the tools suite in benchmark/RESULTS.md -->'
const TOOLS_END = '<!-- /tools -->'

/**
 * `readme` with its tools block (if it has one) made from the tools suite's
 * sections: per tool and Node line, the whole run's speed-up with the hook
 * and reading's share of the plain run.
 */
function withToolsBlock(readme, sections) {
  const start = readme.indexOf(TOOLS_START)
  const end = readme.indexOf(TOOLS_END)
  if (start === -1 || end < start) return readme
  const runs = sections.filter((s) => s.suite === 'tools').sort((a, b) => a.major - b.major)
  if (runs.length === 0) return readme
  const byTool = new Map()
  for (const run of runs) {
    const head = run.text.split('\n').findIndex((l) => l.startsWith('| tool ') && l.includes('speed-up'))
    if (head === -1) continue
    for (const line of run.text.split('\n').slice(head + 2)) {
      if (!line.startsWith('|')) break
      const cells = line.split('|').slice(1, -1).map((c) => c.trim())
      if (!byTool.has(cells[0])) byTool.set(cells[0], new Map())
      byTool.get(cells[0]).set(run.major, `${cells[3]} (reading ${cells[5]})`)
    }
  }
  const majors = runs.map((r) => r.major)
  const rows = [...byTool].map(([tool, cells]) => `| ${tool} | ${majors.map((m) => cells.get(m) ?? '—').join(' | ')} |`)
  const table = [`| tool | ${majors.map((m) => `Node ${m}`).join(' | ')} |`, `| :--- | ${majors.map(() => '---:').join(' | ')} |`, ...rows].join('\n')
  return `${readme.slice(0, start + TOOLS_START.length)}\n${table}\n${readme.slice(end)}`
}

module.exports = { saveRun, readSections, updateReadme, FILE }
