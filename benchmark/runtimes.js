'use strict'
// The other runtimes a suite compares with: Bun, and Deno. Each is the binary
// given (--bun / --deno path, or $BUN / $DENO), or the one from the npm registry
// (scripts/get-runtime.sh), with its version.
const path = require('node:path')
const { execFileSync } = require('node:child_process')

/**
 * `{ bin, version }` of the runtime to time (`runtime`: 'Bun' or 'Deno'), or
 * null when `skip` is set or none can be had (the reason goes to stderr,
 * prefixed with `suite`, and the suite leaves the runtime out). With
 * `required`, a failure throws instead.
 */
function findRuntime(runtime, { given, skip = false, suite, required = false }) {
  if (skip) return null
  const lower = runtime.toLowerCase()
  try {
    const bin =
      given ??
      process.env[runtime.toUpperCase()] ??
      execFileSync('bash', [path.join(__dirname, '..', 'scripts', 'get-runtime.sh'), lower], { encoding: 'utf8' }).trim()
    // `deno --version` also names its V8 and TypeScript, on lines of their own.
    const version = execFileSync(bin, ['--version'], { encoding: 'utf8' }).split('\n')[0].replace(/^deno (\S+).*/, '$1').trim()
    return { bin, version }
  } catch (err) {
    if (required) throw err
    process.stderr.write(`${suite}: no ${runtime} (${err.message.split('\n')[0]}); it is left out\n`)
    return null
  }
}

const findBun = (options) => findRuntime('Bun', options)
const findDeno = (options) => findRuntime('Deno', options)

/** The arguments before a script's that Deno needs to run our CommonJS scripts and the addon. */
const DENO_RUN = ['run', '--allow-all', '--unstable-detect-cjs']

module.exports = { findBun, findDeno, DENO_RUN }
