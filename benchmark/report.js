'use strict'
// Presentation: the environment header, per-content tables, a speedup matrix, a
// unicode bar chart for the terminal, and the JSON + Markdown files in results/.
// Plain string padding only, no dependencies, so every Node >= 20 prints the same.
const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')

// --- units ----------------------------------------------------------------------------
const UNITS = [
  ['MiB', 1024 * 1024],
  ['KiB', 1024],
  ['B', 1],
]

/** 65536 -> '64 KiB'; exact multiples get an integer, others one decimal. */
function sizeLabel(bytes) {
  for (const [unit, n] of UNITS) {
    if (bytes >= n) {
      const v = bytes / n
      return `${Number.isInteger(v) ? v : v.toFixed(1)} ${unit}`
    }
  }
  return `${bytes} B`
}

/** '4MiB', '4 MiB', '4m', '4mb', '1k', '64', '64b' -> bytes (binary units). */
function parseSize(text) {
  const m = /^\s*(\d+(?:\.\d+)?)\s*(b|k|kb|kib|m|mb|mib)?\s*$/i.exec(text)
  if (!m) throw new Error(`cannot read size '${text}' (examples: 64B, 16KiB, 4MiB)`)
  const unit = (m[2] || 'b').toLowerCase()[0]
  const bytes = Math.round(Number(m[1]) * (unit === 'm' ? 1024 * 1024 : unit === 'k' ? 1024 : 1))
  if (bytes < 1) throw new Error(`size '${text}' is under one byte`)
  return bytes
}

/**
 * The items of comma-separated option values: 'a,b' or ['a,b', 'c'] (an option
 * given more than once) -> ['a', 'b', 'c']; nothing given -> [].
 */
function parseList(values) {
  return [values ?? []]
    .flat()
    .flatMap((s) => s.split(','))
    .map((s) => s.trim())
    .filter(Boolean)
}

const TIME_UNITS = [
  ['s', 1e9],
  ['ms', 1e6],
  ['µs', 1e3],
  ['ns', 1],
]

function timeUnit(ns) {
  return TIME_UNITS.find(([, n]) => ns >= n) || TIME_UNITS[TIME_UNITS.length - 1]
}

/** Three significant digits, enough for run-to-run noise of a few percent. */
function num(v) {
  return v >= 100 ? v.toFixed(0) : v >= 10 ? v.toFixed(1) : v.toFixed(2)
}

/** ns -> '12.3 µs' */
function fmtTime(ns) {
  const [unit, n] = timeUnit(ns)
  return `${num(ns / n)} ${unit}`
}

/** Spread shown in the unit of the median it belongs to: '12.5–13.9'. */
function fmtSpread(stats) {
  const [, n] = timeUnit(stats.median)
  return `${num(stats.p75 / n)}–${num(stats.p99 / n)}`
}

// --- environment ----------------------------------------------------------------------
function readCpuinfo() {
  try {
    return fs.readFileSync('/proc/cpuinfo', 'latin1')
  } catch {
    return ''
  }
}

/** Node/V8 versions, CPU model, which SIMD the CPU offers and which engine the addon uses. */
function environment(addon) {
  const cpuinfo = readCpuinfo()
  const cpus = os.cpus()
  const model = (/^model name\s*:\s*(.+)$/m.exec(cpuinfo)?.[1] || cpus[0]?.model || 'unknown CPU').trim()
  let simd = []
  const flags = /^flags\s*:\s*(.+)$/m.exec(cpuinfo)?.[1]?.split(/\s+/)
  if (flags) {
    // The x86 levels a UTF-8 validator/transcoder dispatches on, best first.
    simd = ['avx512vbmi2', 'avx512bw', 'avx2', 'sse4_2'].filter((f) => flags.includes(f))
  } else if (/^Features\s*:.*\basimd\b/m.test(cpuinfo)) {
    simd = ['neon']
  }
  let engine = 'unknown'
  try {
    engine = addon.engine()
  } catch {
    // an older build without engine(): still benchmark it
  }
  return {
    node: process.version,
    v8: process.versions.v8,
    platform: `${process.platform} ${process.arch}`,
    cpu: model,
    cores: cpus.length,
    cpuSimd: simd,
    engine,
    // Other work on the machine (a compile, say) widens the spreads: recorded so a
    // noisy result can be recognised as such.
    loadavg1m: Number(os.loadavg()[0].toFixed(2)),
    date: new Date().toISOString(),
  }
}

function headerLine(env) {
  return [
    `Node ${env.node}`,
    `V8 ${env.v8}`,
    `${env.cpu} (${env.cores} cores, ${env.platform})`,
    `CPU SIMD: ${env.cpuSimd.join(' ') || 'none detected'}`,
    `addon engine: ${env.engine}`,
    `load ${env.loadavg1m}`,
  ].join(' | ')
}

// --- tables ---------------------------------------------------------------------------
const COLUMNS = [
  ['size', 'l'],
  ['readFileUtf8', 'r'],
  ['p75–p99', 'r'],
  ["fs 'utf8'", 'r'],
  ['p75–p99', 'r'],
  ['fs Buffer', 'r'],
  ['speedup', 'r'],
  ['of means', 'r'],
  ['ours GB/s', 'r'],
]

/** One row of text cells for a measured content × size. */
function rowCells(cell) {
  return [
    sizeLabel(cell.size),
    fmtTime(cell.ours.median),
    fmtSpread(cell.ours),
    fmtTime(cell.fs.median),
    fmtSpread(cell.fs),
    fmtTime(cell.buffer.median),
    `${cell.speedup.toFixed(2)}×`,
    `${cell.meanSpeedup.toFixed(2)}×`,
    cell.gbps.toFixed(2),
  ]
}

const width = (s) => [...s].length

function pad(s, w, align) {
  const fill = ' '.repeat(Math.max(0, w - width(s)))
  return align === 'r' ? fill + s : s + fill
}

function textTable(columns, rows) {
  const widths = columns.map(([h], i) => Math.max(width(h), ...rows.map((r) => width(r[i]))))
  const line = (cells) => cells.map((c, i) => pad(c, widths[i], columns[i][1])).join('  ')
  return [line(columns.map(([h]) => h)), line(widths.map((w) => '─'.repeat(w))), ...rows.map(line)]
}

function markdownTable(columns, rows) {
  const esc = (s) => s.replace(/\|/g, '\\|')
  return [
    `| ${columns.map(([h]) => esc(h)).join(' | ')} |`,
    `| ${columns.map(([, a]) => (a === 'r' ? '---:' : ':---')).join(' | ')} |`,
    ...rows.map((r) => `| ${r.map(esc).join(' | ')} |`),
  ]
}

/** Terminal table of one content class. */
function contentTable(content, description, cells) {
  return [`${content} — ${description}`, ...textTable(COLUMNS, cells.map(rowCells)).map((l) => `  ${l}`)].join(
    '\n',
  )
}

/**
 * Speedup matrix: contents × sizes, the one-glance summary; of the medians
 * (`key` 'speedup') or of the means ('meanSpeedup').
 */
function speedupMatrix(results, format, key = 'speedup') {
  const sizes = [...new Set(results.map((c) => c.size))].sort((a, b) => a - b)
  const contents = [...new Set(results.map((c) => c.content))]
  const columns = [[key === 'speedup' ? 'speedup' : 'of means', 'l'], ...sizes.map((s) => [sizeLabel(s), 'r'])]
  const rows = contents.map((content) => [
    content,
    ...sizes.map((size) => {
      const cell = results.find((c) => c.content === content && c.size === size)
      return cell ? `${cell[key].toFixed(2)}×` : '–'
    }),
  ])
  return format === 'md' ? markdownTable(columns, rows) : textTable(columns, rows)
}

// --- bar chart ------------------------------------------------------------------------
const EIGHTHS = ['', '▏', '▎', '▍', '▌', '▋', '▊', '▉']

/**
 * Horizontal bars of the speedup (fs median / ours median), to scale across the
 * whole chart; '┊' marks 1× (parity with fs) on bars that stop short of it.
 */
function barChart(results, barWidth = 40) {
  const max = Math.max(1, ...results.map((c) => c.speedup))
  const onePos = Math.round((1 / max) * barWidth)
  const contentWidth = Math.max(...results.map((c) => width(c.content)))
  const sizeWidth = Math.max(...results.map((c) => width(sizeLabel(c.size))))
  const lines = [`speedup of readFileUtf8 over fs.readFileSync(p, 'utf8'); ┊ marks 1×`]
  let last = null
  for (const c of results) {
    if (last !== null && c.content !== last) lines.push('')
    last = c.content
    const eighths = Math.round((c.speedup / max) * barWidth * 8)
    let bar = '█'.repeat(eighths >> 3) + EIGHTHS[eighths & 7]
    if (width(bar) < onePos) bar = bar + ' '.repeat(onePos - width(bar) - 1) + '┊'
    const label = `${pad(c.content, contentWidth, 'l')}  ${pad(sizeLabel(c.size), sizeWidth, 'r')}`
    lines.push(`  ${label} │${pad(bar, barWidth, 'l')} ${c.speedup.toFixed(2)}×`)
  }
  return lines.join('\n')
}

// --- files ----------------------------------------------------------------------------
function markdown(env, options, byContent, results, descriptions) {
  const out = [
    `# readfile-utf8 benchmark — Node ${env.node}`,
    '',
    `- ${headerLine(env)}`,
    `- ${env.date}; ${options.quick ? 'quick run' : 'full run'}, ${options.budgetMs} ms measured per contender per cell in ${options.rounds} interleaved rounds${options.isolate ? ', each contender in a process of its own' : ''}`,
    `- ${options.sampling}`,
    "- times are medians per call; p75–p99 in the median's unit; speedup = fs 'utf8' median / readFileUtf8 median; of means = fs 'utf8' mean / readFileUtf8 mean (the mean carries GC pauses that fall in a few samples, which the median leaves out); GB/s = 10^9 bytes per second",
    '',
    '## Speedup over `fs.readFileSync(p, \'utf8\')`',
    '',
    ...speedupMatrix(results, 'md'),
    '',
    '## Speedup of the means',
    '',
    ...speedupMatrix(results, 'md', 'meanSpeedup'),
  ]
  for (const [content, cells] of byContent) {
    out.push('', `## ${content}`, '', descriptions[content], '', ...markdownTable(COLUMNS, cells.map(rowCells)))
  }
  return out.join('\n') + '\n'
}

/** Writes results/<name>.json and results/<name>.md; returns their paths. */
function writeResults(dir, name, env, options, results, descriptions) {
  fs.mkdirSync(dir, { recursive: true })
  const byContent = groupByContent(results)
  const json = path.join(dir, `${name}.json`)
  const md = path.join(dir, `${name}.md`)
  fs.writeFileSync(json, JSON.stringify({ environment: env, options, unit: 'ns per call', results }, null, 2) + '\n')
  fs.writeFileSync(md, markdown(env, options, byContent, results, descriptions))
  return [json, md]
}

function groupByContent(results) {
  const map = new Map()
  for (const c of results) {
    if (!map.has(c.content)) map.set(c.content, [])
    map.get(c.content).push(c)
  }
  return map
}

module.exports = {
  sizeLabel,
  parseSize,
  parseList,
  fmtTime,
  environment,
  headerLine,
  contentTable,
  speedupMatrix,
  barChart,
  writeResults,
}
