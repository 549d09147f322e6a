'use strict'
// The Bun binary a suite compares with: the one given (--bun path, or $BUN),
// or Bun from the npm registry (scripts/get-bun.sh), with its version.
const path = require('node:path')
const { execFileSync } = require('node:child_process')

/**
 * `{ bin, version }` of the Bun to time, or null when `skip` is set or none can
 * be had (the reason goes to stderr, prefixed with `suite`, and the suite
 * leaves Bun out). With `required`, a failure throws instead.
 */
function findBun({ given, skip = false, suite, required = false }) {
  if (skip) return null
  try {
    const bin =
      given ??
      process.env.BUN ??
      execFileSync('bash', [path.join(__dirname, '..', 'scripts', 'get-bun.sh')], { encoding: 'utf8' }).trim()
    return { bin, version: execFileSync(bin, ['--version'], { encoding: 'utf8' }).trim() }
  } catch (err) {
    if (required) throw err
    process.stderr.write(`${suite}: no Bun (${err.message.split('\n')[0]}); it is left out\n`)
    return null
  }
}

module.exports = { findBun }
