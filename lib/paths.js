'use strict'
// fs's path argument forms, reduced to what the native reads take: a string
// path, raw path bytes (Buffer / Uint8Array) or an int32 fd. Anything else is
// DELEGATE, so that fs itself answers (and throws its own exact error).
const { fileURLToPath } = require('node:url')
const { isUint8Array } = require('node:util/types')

const { DELEGATE } = require('./options')

/** The native read's argument for fs's `path`: string, Uint8Array, int32 fd, or DELEGATE. */
function nativeArgument(path) {
  if (typeof path === 'string' || isUint8Array(path)) return path
  // fs treats every int32 as an fd (negative ones fail with EBADF at read).
  if (typeof path === 'number') return (path | 0) === path ? path : DELEGATE
  if (path instanceof URL && path.protocol === 'file:') {
    try {
      return fileURLToPath(path)
    } catch {
      return DELEGATE // fs throws the same URL error
    }
  }
  return DELEGATE
}

/** True if a native path argument has a NUL byte, which fs rejects before any syscall. */
function hasNul(arg) {
  if (typeof arg === 'string') return arg.includes('\0')
  return typeof arg !== 'number' && arg.includes(0)
}

module.exports = { nativeArgument, hasNul }
