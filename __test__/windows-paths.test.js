'use strict'
// Windows' path rules, differentially: every entry point against fs on the
// same Node, for names that Win32 normalisation would change (trailing dots
// and spaces, device names, alternate data streams), every prefix form
// (\\?\, \\.\, UNC, drive-relative), paths over MAX_PATH, non-ASCII names and
// directories. fs opens a string path as path.toNamespacedPath makes it, so
// `plain.txt.` is not `plain.txt` there; the native reader must open the same
// file, or fail where fs fails. On Linux the same names are ordinary file
// names (a backslash, a colon, a trailing dot are just characters), compared
// with fs all the same.
const { test } = require('node:test')
const assert = require('node:assert/strict')
const fs = require('node:fs')
const path = require('node:path')
const { pathToFileURL } = require('node:url')

const api = require('..')
const { scratch, errorFields } = require('./helpers')

const WINDOWS = process.platform === 'win32'
const ROOT = scratch('windows-paths')
const LONG_DIR = path.join(ROOT, ...Array.from({ length: 6 }, (_, i) => `${i}${'d'.repeat(48)}`))
/** A path with no file, for the forms that need an absolute path to a missing one. */
const MISSING = path.join(ROOT, 'missing.txt')

/** Files (relative to ROOT) and their contents; names with trailing dots or spaces are literal. */
const FILES = {
  'plain.txt': 'plain é 中 😀\n',
  'dotted.txt.': 'a name that ends with a dot\n',
  'spaced.txt ': 'a name that ends with a space\n',
  'both. .': 'dot, space, dot\n',
  'é中😀 ünïcödé.txt': 'non-ASCII name\n',
  'NUL.txt': 'a device name with an extension is a file\n',
  [path.join('sub', 'inner.txt')]: 'in a folder\n',
  [path.join('sub.', 'inner.txt')]: 'in a folder whose name ends with a dot\n',
  [path.relative(ROOT, path.join(LONG_DIR, 'long.txt'))]: 'past MAX_PATH\n',
}

function makeFixtures() {
  fs.mkdirSync(ROOT, { recursive: true })
  for (const [name, text] of Object.entries(FILES)) {
    const file = path.join(ROOT, name)
    fs.mkdirSync(path.dirname(file), { recursive: true })
    fs.writeFileSync(file, text)
  }
  // An alternate data stream where the file system has them (NTFS); a plain
  // name with a colon elsewhere. Where neither can be made, both must fail alike.
  try {
    fs.writeFileSync(path.join(ROOT, 'plain.txt:stream'), 'in a stream\n')
  } catch {}
}

/** [label, path] pairs to read: relative ones are read with ROOT as the working directory. */
function probes() {
  const abs = (name) => path.join(ROOT, name)
  const list = []
  const add = (label, p) => list.push([label, p])
  for (const name of Object.keys(FILES)) add(`file ${JSON.stringify(name)}`, abs(name))
  for (const suffix of ['.', ' ', '. .', '..', ' .', '...', '\\', '/', '\\.', '/.', ':', '::$DATA', ':stream', ':stream:$DATA', ':nope']) {
    add(`plain.txt + ${JSON.stringify(suffix)}`, abs(`plain.txt${suffix}`))
  }
  for (const name of ['dotted.txt', 'dotted.txt..', 'spaced.txt', 'spaced.txt  ', 'both', 'both.', 'both. ']) {
    add(`normalised twin ${JSON.stringify(name)}`, abs(name))
  }
  // Device names: bare (relative), in a folder, with an extension, in any case.
  // Not CON, CONIN$ or a port that may exist: where fs opens the device, a read waits for input.
  for (const name of ['NUL', 'nul', 'NUL.', 'NUL ', 'NUL.txt', 'NUL.txt.', 'AUX', 'COM9', 'LPT9']) {
    add(`device name ${name} in a folder`, abs(name))
    add(`device name ${name} (relative)`, name)
  }
  add('folder + NUL, forward slashes', `${ROOT.replaceAll('\\', '/')}/NUL`)
  // Folders: fs fails (EISDIR), with or without a trailing separator or dot.
  for (const name of ['sub', 'sub.', 'sub\\', 'sub/', 'sub.\\inner.txt', 'sub\\.', 'sub\\..\\plain.txt', 'sub/../plain.txt', 'sub ./inner.txt']) {
    add(`folder form ${JSON.stringify(name)}`, abs(name))
  }
  add('the fixture folder', ROOT)
  add('relative plain.txt', 'plain.txt')
  add('relative plain.txt.', 'plain.txt.')
  add('relative .\\plain.txt', '.\\plain.txt')
  add('relative sub\\..\\dotted.txt.', 'sub\\..\\dotted.txt.')
  add('relative ..\\windows-paths\\plain.txt ', `..${path.sep}windows-paths${path.sep}plain.txt `)
  // Long paths, over MAX_PATH (260).
  const long = path.join(LONG_DIR, 'long.txt')
  add('long path', long)
  add('long path + "."', `${long}.`)
  add('long path + " "', `${long} `)
  add('long folder', LONG_DIR)
  add('missing file', MISSING)
  add('missing file + "."', `${MISSING}.`)
  if (WINDOWS) {
    const drive = ROOT.slice(0, 2) // 'C:'
    const noDrive = ROOT.slice(2) // '\…'
    add('\\\\?\\ + path', `\\\\?\\${abs('plain.txt')}`)
    add('\\\\?\\ + path + "." (verbatim: no such file)', `\\\\?\\${abs('plain.txt')}.`)
    add('\\\\?\\ + dotted.txt.', `\\\\?\\${abs('dotted.txt.')}`)
    add('\\\\?\\ + forward slashes', `\\\\?\\${abs('plain.txt').replaceAll('\\', '/')}`)
    add('\\\\?\\ + sub\\..\\plain.txt', `\\\\?\\${abs('sub')}\\..\\plain.txt`)
    add('//?/ + path', `//?/${abs('plain.txt')}`)
    add('\\\\.\\ + path', `\\\\.\\${abs('plain.txt')}`)
    add('\\\\.\\ + path + "."', `\\\\.\\${abs('plain.txt')}.`)
    add('\\\\.\\NUL', '\\\\.\\NUL')
    add('\\\\?\\ + long path', `\\\\?\\${long}`)
    add('\\\\?\\UNC\\localhost\\…', `\\\\?\\UNC\\localhost\\${drive[0]}$${noDrive}\\plain.txt`)
    add('UNC \\\\localhost\\X$\\…', `\\\\localhost\\${drive[0]}$${noDrive}\\plain.txt`)
    add('UNC \\\\localhost\\X$\\… + "."', `\\\\localhost\\${drive[0]}$${noDrive}\\plain.txt.`)
    add('UNC //localhost/X$/…', `//localhost/${drive[0]}$${noDrive.replaceAll('\\', '/')}/plain.txt`)
    add('drive-relative X:plain.txt', `${drive}plain.txt`)
    add('drive-relative X:plain.txt.', `${drive}plain.txt.`)
    add('drive-relative X:sub\\inner.txt', `${drive}sub\\inner.txt`)
    add('rooted \\…\\plain.txt (current drive)', `${noDrive}\\plain.txt`)
    add('rooted \\…\\plain.txt.', `${noDrive}\\plain.txt.`)
    add('mixed separators', `${drive}${noDrive.replaceAll('\\', '/')}\\plain.txt`)
    add('lower-case drive', `${drive.toLowerCase()}${noDrive}\\plain.txt.`)
    add('case-insensitive name', abs('PLAIN.TXT'))
  }
  return list
}

/** What a call gave: its string, or its error's observable fields. */
function outcome(value) {
  return value instanceof Error ? { error: errorFields(value) } : { string: value }
}
const settle = (promise) => promise.then(outcome, outcome)
function sync(read) {
  try {
    return outcome(read())
  } catch (err) {
    return outcome(err)
  }
}
const viaCallback = (readFile, p) =>
  new Promise((resolve) => readFile(p, 'utf8', (err, text) => resolve(outcome(err ?? text))))

/**
 * The path forms a probe is given in: the string, its Buffer, and a file: URL
 * for absolute ones. No Buffer of a device name but NUL: fs opens a Buffer
 * path as given on Windows, so `…\\AUX` is the device, whose read waits for input.
 */
function forms(p) {
  const device = /(^|[\\/])(AUX|COM\d|LPT\d)$/i.test(p)
  const out = device ? [['string', p]] : [['string', p], ['Buffer', Buffer.from(p)]]
  if (path.isAbsolute(p) && !/^[\\/][\\/]/.test(p)) out.push(['file: URL', pathToFileURL(p)])
  return out
}

test('every entry point opens what fs opens, for every Windows path form (0 mismatches)', async (t) => {
  makeFixtures()
  const cwd = process.cwd()
  process.chdir(ROOT)
  const mismatches = []
  let compared = 0
  let read = 0
  const check = (label, theirs, ours) => {
    compared++
    if (theirs.string !== undefined) read++
    try {
      assert.deepEqual(ours, theirs)
    } catch {
      mismatches.push({ label, fs: theirs, ours })
    }
  }
  try {
    const inputs = []
    for (const [label, p] of probes()) for (const [form, input] of forms(p)) inputs.push([`${label} (${form})`, input])
    for (const [label, p] of inputs) {
      const fsSync = sync(() => fs.readFileSync(p, 'utf8'))
      check(`readFileUtf8: ${label}`, fsSync, sync(() => api.readFileUtf8(p)))
      check(`readFileSync: ${label}`, fsSync, sync(() => api.readFileSync(p, 'utf8')))
      const fsPromises = await settle(fs.promises.readFile(p, 'utf8'))
      check(`readFileUtf8Async: ${label}`, fsPromises, await settle(api.readFileUtf8Async(p)))
      check(`promises.readFile: ${label}`, fsPromises, await settle(api.promises.readFile(p, 'utf8')))
      check(`readFile: ${label}`, await viaCallback(fs.readFile, p), await viaCallback(api.readFile, p))
    }
    // The batches, all probes in one list, each entry against its own fs read.
    const all = inputs.map(([, p]) => p)
    const batch = api.readFilesUtf8(all, { errors: 'return' })
    const batchAsync = await api.readFilesUtf8Async(all, { errors: 'return', concurrency: 3 })
    for (const [i, [label, p]] of inputs.entries()) {
      const strip = (o) => (o.error ? { error: { ...o.error, ownKeys: o.error.ownKeys.filter((k) => k !== 'index') } } : o)
      check(`readFilesUtf8: ${label}`, sync(() => fs.readFileSync(p, 'utf8')), strip(outcome(batch[i])))
      check(`readFilesUtf8Async: ${label}`, await settle(fs.promises.readFile(p, 'utf8')), strip(outcome(batchAsync[i])))
    }
  } finally {
    process.chdir(cwd)
  }
  t.diagnostic(`${compared} outcomes compared, ${read} of them strings fs read`)
  assert.deepEqual(mismatches.slice(0, 20), [], `${mismatches.length} of ${compared} differ from fs (the first 20 shown)`)
  // Enough was compared, and fs read a good share of it (not errors alone).
  assert.ok(compared > 600, `${compared} compared`)
  assert.ok(read > 100, `${read} read by fs`)
})

test('a name that ends with a dot or a space is that file, not its normalised twin', () => {
  makeFixtures()
  // Each literal name holds its own text; the twin without the dot does not exist.
  for (const [name, twin] of [['dotted.txt.', 'dotted.txt'], ['spaced.txt ', 'spaced.txt']]) {
    const file = path.join(ROOT, name)
    assert.equal(fs.readFileSync(file, 'utf8'), FILES[name])
    assert.equal(api.readFileUtf8(file), FILES[name])
    assert.equal(api.readFilesUtf8([file])[0], FILES[name])
    assert.equal(sync(() => fs.readFileSync(path.join(ROOT, twin), 'utf8')).error?.code, 'ENOENT')
    assert.equal(sync(() => api.readFileUtf8(path.join(ROOT, twin))).error?.code, 'ENOENT')
  }
  // And a file's name with a dot added is no name of it.
  const plainDot = path.join(ROOT, 'plain.txt.')
  assert.equal(sync(() => fs.readFileSync(plainDot, 'utf8')).error?.code, 'ENOENT')
  assert.equal(sync(() => api.readFileUtf8(plainDot)).error?.code, 'ENOENT')
})
