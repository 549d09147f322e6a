'use strict'
// Units and tables shared by the suites. Tables are Markdown padded to their
// column widths, so that they read well in a terminal (RESULTS.md keeps them
// unpadded: results-file.js).

const KiB = 1024
const MiB = 1024 * KiB

/** 65536 -> '64 KiB'; exact multiples get an integer, others one decimal. */
function sizeLabel(bytes) {
  for (const [unit, n] of [['MiB', MiB], ['KiB', KiB]]) {
    if (bytes >= n) {
      const v = bytes / n
      return `${Number.isInteger(v) ? v : v.toFixed(1)} ${unit}`
    }
  }
  return `${bytes} B`
}

/** '4MiB', '4 MiB', '4m', '1k', '64', '64b' -> bytes (binary units). */
function parseSize(text) {
  const m = /^\s*(\d+(?:\.\d+)?)\s*(b|k|kb|kib|m|mb|mib)?\s*$/i.exec(text)
  if (!m) throw new Error(`cannot read size '${text}' (examples: 64B, 16KiB, 4MiB)`)
  const unit = (m[2] || 'b').toLowerCase()[0]
  const bytes = Math.round(Number(m[1]) * (unit === 'm' ? MiB : unit === 'k' ? KiB : 1))
  if (bytes < 1) throw new Error(`size '${text}' is under one byte`)
  return bytes
}

/** Three significant digits: enough for run-to-run noise of a few percent. */
function num(v) {
  return v >= 100 ? v.toFixed(0) : v >= 10 ? v.toFixed(1) : v.toFixed(2)
}

const TIME_UNITS = [['s', 1e9], ['ms', 1e6], ['µs', 1e3], ['ns', 1]]

/** ns -> '12.3 µs' */
function fmtTime(ns) {
  if (!Number.isFinite(ns)) return '–'
  const [unit, n] = TIME_UNITS.find(([, n]) => ns >= n) || TIME_UNITS[TIME_UNITS.length - 1]
  return `${num(ns / n)} ${unit}`
}

/** bytes -> '123 MiB' */
function fmtMiB(bytes) {
  return Number.isFinite(bytes) ? `${num(bytes / MiB)} MiB` : '–'
}

/** A ratio such as a speed-up: '1.23×'. */
function fmtRatio(x) {
  return Number.isFinite(x) ? `${x.toFixed(2)}×` : '–'
}

const width = (s) => [...s].length

/**
 * A Markdown table, padded. `columns`: [header, 'l' | 'r'] pairs; `rows`: arrays
 * of cell strings.
 */
function table(columns, rows) {
  const cells = rows.map((r) => r.map((c) => String(c).replace(/\|/g, '\\|')))
  const widths = columns.map(([h], i) => Math.max(3, width(h), ...cells.map((r) => width(r[i]))))
  const pad = (s, i) => {
    const fill = ' '.repeat(widths[i] - width(s))
    return columns[i][1] === 'r' ? fill + s : s + fill
  }
  const line = (r) => `| ${r.map(pad).join(' | ')} |`
  const rule = `| ${widths.map((w, i) => (columns[i][1] === 'r' ? '-'.repeat(w - 1) + ':' : ':' + '-'.repeat(w - 1))).join(' | ')} |`
  return [line(columns.map(([h]) => h)), rule, ...cells.map(line)].join('\n')
}

/**
 * Contents × sizes of one value per cell, e.g. a speed-up. `value(content, size)`
 * returns the cell's text.
 */
function matrix(corner, contents, sizes, value) {
  return table(
    [[corner, 'l'], ...sizes.map((s) => [sizeLabel(s), 'r'])],
    contents.map((c) => [c, ...sizes.map((s) => value(c, s))]),
  )
}

/** '12s', '2m05s' */
function duration(ms) {
  const s = Math.round(ms / 1000)
  return s < 60 ? `${s}s` : `${Math.floor(s / 60)}m${String(s % 60).padStart(2, '0')}s`
}

module.exports = { KiB, MiB, sizeLabel, parseSize, fmtTime, fmtMiB, fmtRatio, table, matrix, duration }
