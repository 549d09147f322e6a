'use strict'
// Loads the addon: a local build in the package root if there is one (the
// repo's `npm install` makes it), else the platform package. Where neither
// loads, every function falls back to fs (./no-native) and one warning says
// so; READFILE_UTF8_REQUIRE_NATIVE=1 makes that an error instead.
const { platforms, findBinary } = require('./binary-name')

/** The addon, or the reasons none could be loaded. */
function load() {
  const local = findBinary()
  const failures = []
  for (const where of [local, ...platforms().map((name) => `readfile-utf8-${name}`)]) {
    if (where === null) continue
    try {
      return { addon: require(where) }
    } catch (err) {
      // An absent platform package is expected on every platform but one.
      if (err?.code === 'MODULE_NOT_FOUND' && String(err.message).includes(`'${where}'`)) continue
      failures.push(`${where}: ${err?.message ?? err}`)
    }
  }
  return { failures }
}

function noBinaryMessage(failures) {
  const platform = platforms()[0]
  const why = failures.length > 0 ? ` It failed to load: ${failures.join('; ')}.` : ''
  return (
    `readfile-utf8: no native binary for ${platform} (package readfile-utf8-${platform}).${why} ` +
    'Every function falls back to fs: the same results, without the speed-up. ' +
    'Install without --omit=optional / --no-optional, or build one with `npm run build` in ' +
    'the readfile-utf8 folder (needs Rust).'
  )
}

const { addon, failures } = load()
if (addon !== undefined) {
  module.exports = addon
} else {
  const message = noBinaryMessage(failures)
  if (process.env.READFILE_UTF8_REQUIRE_NATIVE === '1') throw new Error(message)
  process.emitWarning(message, { code: 'READFILE_UTF8_NO_NATIVE' })
  module.exports = require('./no-native')
}
