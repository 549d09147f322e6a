'use strict'
// Loads the addon from, in order: the file READFILE_UTF8_NATIVE_LIBRARY_PATH
// names (then nowhere else); a local build in the package root, or beside the
// bundle this file was bundled into; the platform package. Where none loads,
// or Node is older than the addon supports, every function falls back to fs
// (./no-native) with one warning per process that gives the cause, or where
// it looked and the causes it cannot tell apart (./no-native-advice), and the
// ways out; READFILE_UTF8_REQUIRE_NATIVE=1 makes that an error instead.
const path = require('node:path')
const { PUBLISHED, OLDEST_NODE, BUNDLED, ROOT, platforms, findBinary, olderThanSupported } = require('./binary-name')
const { version } = require('../package.json')
const { PATH_VARIABLE, notInstalled, unpublished } = require('./no-native-advice')
const REQUIRE_VARIABLE = 'READFILE_UTF8_REQUIRE_NATIVE'
const CODE = 'READFILE_UTF8_NO_NATIVE'

/** Whether READFILE_UTF8_REQUIRE_NATIVE asks for the addon; a value it cannot mean throws. */
function nativeRequired() {
  const value = process.env[REQUIRE_VARIABLE]
  if (value === undefined || value === '' || value === '0' || /^false$/i.test(value)) return false
  if (value === '1' || /^true$/i.test(value)) return true
  const err = new TypeError(`readfile-utf8: ${REQUIRE_VARIABLE} must be 1 or true (or 0, false, empty), not '${value}'.`)
  err.code = 'READFILE_UTF8_BAD_ENV'
  throw err
}

const oneLine = (err) => String(err?.message ?? err).split('\n')[0]

/** Loads the file `READFILE_UTF8_NATIVE_LIBRARY_PATH` names: { addon } or { reason, cause, error }. */
function loadNamed(named) {
  const file = path.resolve(named)
  try {
    return { addon: require(file) }
  } catch (error) {
    const what = error?.code === 'MODULE_NOT_FOUND' ? 'there is no such file' : `it failed to load: ${oneLine(error)}`
    return { reason: 'load-failed', cause: `${PATH_VARIABLE} names ${file}, and ${what}`, error }
  }
}

/** The platform package's own package.json, or null where it cannot be resolved from here. */
function platformPackage(name) {
  try {
    return { dir: path.dirname(require.resolve(`${name}/package.json`)), ...require(`${name}/package.json`) }
  } catch {
    return null
  }
}

/** Where `name` resolves from the current directory, when it does not from here. */
function resolvableFromCwd(name) {
  try {
    return path.dirname(require.resolve(`${name}/package.json`, { paths: [process.cwd()] }))
  } catch {
    return null
  }
}

/** The addon ({ addon }), or why none was loaded ({ reason, cause, detail?, fix?, error? }). */
function load() {
  const node = process.versions.node
  if (olderThanSupported(node)) {
    return {
      reason: 'old-node',
      cause: `Node ${node} is older than ${OLDEST_NODE.join('.')}, the oldest Node its native addon supports`,
      fix: `Run Node ${OLDEST_NODE.join('.')} or newer for the native reads.`,
    }
  }
  const named = process.env[PATH_VARIABLE]
  if (named) return loadNamed(named)

  const names = platforms()
  const local = findBinary()
  if (local !== null) {
    try {
      return { addon: require(local) }
    } catch (error) {
      return { reason: 'load-failed', cause: `${local} failed to load: ${oneLine(error)}`, error }
    }
  }
  const name = names.find((n) => PUBLISHED.includes(n))
  if (name === undefined) {
    return {
      reason: 'no-binary',
      cause: `there is no binary for ${names[0]} (binaries exist for ${PUBLISHED.join(', ')})`,
      fix: unpublished(`readfile-utf8.${names[0]}.node`),
    }
  }
  const pkg = `readfile-utf8-${name}`
  const installed = platformPackage(pkg)
  if (installed !== null) {
    if (installed.version !== version) {
      return {
        reason: 'load-failed',
        cause: `${pkg} ${installed.version} is installed (${installed.dir}), but readfile-utf8 ${version} needs the same version`,
        fix: `Install ${pkg}@${version}, or reinstall readfile-utf8.`,
      }
    }
    try {
      return { addon: require(pkg) }
    } catch (error) {
      return { reason: 'load-failed', cause: `${pkg} (${installed.dir}) is installed but failed to load: ${oneLine(error)}`, error }
    }
  }
  const binary = `readfile-utf8.${name}.node`
  if (BUNDLED) {
    return {
      reason: 'unresolvable',
      cause: `it was bundled into ${__filename}, from where the platform package ${pkg} cannot be resolved, and no ${binary} lies beside it`,
      fix:
        `Leave readfile-utf8 out of the bundle (esbuild: --external:readfile-utf8), copy ${binary} ` +
        `(from ${pkg}) beside the bundle, or set ${PATH_VARIABLE} to that file's path.`,
    }
  }
  const elsewhere = resolvableFromCwd(pkg)
  if (elsewhere !== null) {
    return {
      reason: 'unresolvable',
      cause: `${pkg} is installed in ${elsewhere}, but it cannot be resolved from ${ROOT}`,
      fix: `Install ${pkg}@${version} where readfile-utf8 is installed, or set ${PATH_VARIABLE} to ${path.join(elsewhere, binary)}.`,
    }
  }
  const builds = names.map((n) => path.join(ROOT, `readfile-utf8.${n}.node`))
  return { reason: 'not-installed', ...notInstalled({ pkg, binary, local: builds, root: ROOT }) }
}

/** A SharedArrayBuffer flag every later Worker inherits: true in the one thread that takes it first. */
function firstToWarn() {
  try {
    const { getEnvironmentData, setEnvironmentData } = require('node:worker_threads')
    let flag = getEnvironmentData(CODE)
    if (!(flag instanceof SharedArrayBuffer)) {
      flag = new SharedArrayBuffer(4)
      setEnvironmentData(CODE, flag)
    }
    return Atomics.compareExchange(new Int32Array(flag), 0, 0, 1) === 0
  } catch {
    return true
  }
}

/** An Error (for the warning or the throw) with the cause, code and reason. */
function noNativeError(result, required) {
  const consequence = required
    ? `${REQUIRE_VARIABLE} is set, so this is an error.`
    : 'Every function hands its calls to fs: the same results and errors, without the speed-up.'
  // A cause the loader knows takes one line; `detail` (where it looked, the
  // causes it cannot tell apart) a line each, then the ways out.
  const text = result.detail
    ? [`readfile-utf8: no native addon: ${result.cause}. ${consequence}`, ...result.detail, result.fix].join('\n  ')
    : `readfile-utf8: no native addon: ${result.cause}. ${consequence}${result.fix ? ` ${result.fix}` : ''}`
  const err = new Error(text, result.error === undefined ? undefined : { cause: result.error })
  err.code = CODE
  err.reason = result.reason
  return err
}

/**
 * Under Bun, its own fs reads and decodes a file faster than a call through
 * Node-API does (`npm run bench -- --suite bun`): single reads and
 * decodeUtf8 answer FS_ANSWERS, as without an addon, so that Bun's fs and
 * Buffer#toString take them. Batches, read on threads of their own, stay ours.
 */
function runtimeReads() {
  const fs = require('./no-native')
  const names = ['readPath', 'readPathBytes', 'readFd', 'poolReadEach', 'decodeUtf8']
  return Object.fromEntries(names.map((name) => [name, fs[name]]))
}

const required = nativeRequired()
const result = load()
if (result.addon !== undefined) {
  result.addon.setHeapMeter(require('./heap').heapBytes)
  // Deno runs a Node-API finalizer only once its event loop turns, and Bun
  // frees an external string late: the addon copies every string there
  // (src/plan.rs).
  if (process.versions.deno !== undefined || process.versions.bun !== undefined) result.addon.setOtherRuntime()
  module.exports = process.versions.bun === undefined ? result.addon : { ...result.addon, ...runtimeReads() }
} else {
  const err = noNativeError(result, required)
  if (required) throw err
  if (firstToWarn()) {
    err.name = 'Warning'
    process.emitWarning(err)
  }
  module.exports = require('./no-native')
}
