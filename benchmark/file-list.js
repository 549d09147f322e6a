'use strict'
// The list of files a suite reads as a tool would: every regular file under a
// directory, made once and handed to each process that reads it.
const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')

/**
 * Every regular file under `dir`, sorted (by UTF-16 code units of the path).
 * Symlinks are followed as fs follows them: one to a file lists it under the
 * link's path, one to a directory is entered; each directory is walked once
 * (by its real path), so a link back up the tree is no cycle. Sockets, FIFOs
 * and devices are left out, and so are links that lead nowhere.
 */
function regularFiles(dir) {
  const out = []
  const seen = new Set()
  const walk = (d) => {
    const real = fs.realpathSync(d)
    if (seen.has(real)) return
    seen.add(real)
    for (const entry of fs.readdirSync(d, { withFileTypes: true })) {
      const p = path.join(d, entry.name)
      const st = entry.isSymbolicLink() ? fs.statSync(p, { throwIfNoEntry: false }) : entry
      if (st?.isDirectory()) walk(p)
      else if (st?.isFile()) out.push(p)
    }
  }
  walk(path.resolve(dir))
  return out.sort()
}

/** Writes `value` as JSON into a new temporary folder; returns its path and a function that removes it. */
function writeTemp(name, value) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'readfile-utf8-bench-'))
  const file = path.join(dir, name)
  fs.writeFileSync(file, JSON.stringify(value))
  return { file, dir, remove: () => fs.rmSync(dir, { recursive: true, force: true }) }
}

/** `dir` as the report shows it: relative to the repo inside it, `~/...` under $HOME, else as it is. */
function shownPath(dir) {
  const abs = path.resolve(dir)
  const root = path.join(__dirname, '..')
  const rel = path.relative(root, abs)
  if (rel === '') return '.'
  if (!rel.startsWith('..') && !path.isAbsolute(rel)) return rel
  const home = os.homedir()
  return abs.startsWith(home + path.sep) ? `~${abs.slice(home.length)}` : abs
}

module.exports = { regularFiles, writeTemp, shownPath }
