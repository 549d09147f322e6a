'use strict'
// Prints the engine the package loads in this runtime (scripts/test-runtime.js):
// 'simdutf' or 'fallback' from the addon, 'fs' where none loaded.
console.log(require('..').engine())
