'use strict'
// The one table of limits (./limits.json), as the JS layer uses it: each
// tuned value and fact resolved for this Node line, sizes in bytes. build.rs
// makes the addon's constants of the same file, so the two never drift apart.
const table = require('./limits.json')

const UNITS = { B: 1, KiB: 2 ** 10, MiB: 2 ** 20, GiB: 2 ** 30, ms: 1 }

/** A table value as a number: sizes in bytes, times in ms, 'never' as Infinity, a fact's name as its value. */
function number(value) {
  if (typeof value === 'number') return value
  if (value === 'never') return Infinity
  if (Object.hasOwn(table.facts, value)) return number(table.facts[value].value)
  const [n, unit] = value.split(' ')
  if (!Object.hasOwn(UNITS, unit) || !/^\d+$/.test(n)) throw new Error(`lib/limits.json: '${value}' is no size or time`)
  return Number(n) * UNITS[unit]
}

/**
 * The line of `byNode` that Node `major` takes: the nearest listed, the newer
 * of two as near (an odd line leads to the next even one and has its changes
 * already), as the addon's `ByNode` does.
 */
function nearestLine(byNode, major) {
  return Object.keys(byNode)
    .map(Number)
    .sort((a, b) => Math.abs(a - major) - Math.abs(b - major) || b - a)[0]
}

/** An entry's value on Node line `major`. */
function valueOn(entry, major) {
  return entry.byNode ? number(entry.byNode[nearestLine(entry.byNode, major)]) : number(entry.value)
}

const major = Number(process.versions.node.split('.')[0])
const resolve = (section) => Object.fromEntries(Object.entries(section).map(([name, entry]) => [name, valueOn(entry, major)]))

module.exports = { ...resolve(table.tuned), facts: resolve(table.facts), table, valueOn, nearestLine }
