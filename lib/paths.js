'use strict'
// fs's path argument forms, reduced to what the native reads take: a string
// path, raw path bytes (Buffer / Uint8Array) or an int32 fd. Anything else is
// DELEGATE, so that fs itself answers (and throws its own exact error).
const { toNamespacedPath } = require('node:path')
const { fileURLToPath } = require('node:url')
const { isUint8Array } = require('node:util/types')

const { DELEGATE } = require('./options')

const WINDOWS = process.platform === 'win32'

/**
 * The native read's argument for fs's `path`: string, Uint8Array, int32 fd, or
 * DELEGATE. On Windows, fs opens a string path (a file: URL's too) as
 * `path.toNamespacedPath` makes it (`\\?\C:\…`, `\\?\UNC\…`: the OS then
 * applies no Win32 normalisation, e.g. trailing dots and spaces stay), and so
 * does the native reader. fs opens Buffer paths as given on some Nodes and
 * namespaced on others (readFileSync of Node 22+): those go to fs.
 */
function nativeArgument(path) {
  if (typeof path === 'string') return WINDOWS ? toNamespacedPath(path) : path
  if (isUint8Array(path)) return WINDOWS ? DELEGATE : path
  // fs treats every int32 as an fd (negative ones fail with EBADF at read).
  if (typeof path === 'number') return (path | 0) === path ? path : DELEGATE
  if (path instanceof URL && path.protocol === 'file:') {
    try {
      return nativeArgument(fileURLToPath(path))
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
