'use strict'
// Loads the compiled addon (built from source by `npm install`).
const { findBinary } = require('./binary-name')

const file = findBinary()
if (file === null) {
  throw new Error(
    'readfile-utf8: the native addon is not built for this platform. ' +
      'Run `npm run build` in the package folder (needs Rust and cargo).',
  )
}

module.exports = require(file)
