'use strict'
// The async read of a caller's fd that the native reader leaves to fs (on
// Windows, always: Node's fds there belong to its own C runtime). fs.readFile
// (fd) would do, but for a caller's fd it drops read errors: a write-only fd
// or a directory resolves '' where FileHandle.readFile rejects with EBADF /
// EISDIR. This reads from the fd's position until a read returns nothing,
// never closing it, through fs's callback API (libuv's thread pool), so that
// its errors are those reads' own: FileHandle.readFile's for an open fd, and
// for a number with no open file the native readers' (EBADF, 'read'), where
// FileHandle.readFile, which starts with an fstat, would name 'fstat'.
const fs = require('node:fs')
const { promisify } = require('node:util')
const { MAX_STRING_LENGTH } = require('node:buffer').constants

const { abortError, stringTooLong } = require('./errors')
const { facts } = require('./limits')

// Kept at load time, so a later patch of fs (readfile-utf8/register) cannot loop back to us.
const { read, readFileSync } = fs
const fsReadFileAsPromise = promisify(fs.readFile)

/** FileHandle.readFile's chunk (kReadFileBufferLength). */
const CHUNK = facts.NODE_READ_CHUNK_BYTES

/**
 * One read into `buffer`. An abort rejects at once, as the native reads do,
 * also while the read waits (a silent pipe): its bytes, when they come, are
 * dropped, as the native reader drops those of the chunk it stops at.
 */
const readChunk = (fd, buffer, signal) =>
  new Promise((resolve, reject) => {
    const onAbort = () => reject(abortError(signal))
    signal?.addEventListener?.('abort', onAbort, { once: true })
    read(fd, buffer, 0, buffer.length, null, (err, n) => {
      signal?.removeEventListener?.('abort', onAbort)
      if (err) reject(err)
      else resolve(n)
    })
  })

/** Whether fs.readFile takes these options (its getOptions): if not, fs must throw its own error. */
function validOptions(options) {
  if (options == null || typeof options === 'string') return true
  if (typeof options !== 'object') return false
  const { signal } = options
  return signal === undefined || (signal !== null && typeof signal === 'object' && 'aborted' in signal)
}

/**
 * Reads `fd` from its position to EOF as UTF-8 text, leaving it open.
 * `options` are fs.readFile's (UTF-8; an aborted `signal` rejects at once).
 * Rejects with the failed read's error; a read that reaches kMaxLength bytes
 * stops with ERR_STRING_TOO_LONG, as the native reads do.
 */
async function readFdAsync(fd, options) {
  // What fs.readFile rejects (a number that is no int32 is a bad path to it) is its to answer.
  if ((fd | 0) !== fd || !validOptions(options)) return fsReadFileAsPromise(fd, options)
  // fs.read refuses a negative number with a RangeError before any syscall;
  // fs's own read of one (no fd is negative: nothing is read) gives the EBADF.
  if (fd < 0) readFileSync(fd, 'utf8')
  const signal = typeof options === 'object' && options !== null ? options.signal : undefined
  const chunks = []
  let total = 0
  for (;;) {
    if (signal?.aborted) throw abortError(signal)
    if (total >= MAX_STRING_LENGTH) throw stringTooLong()
    const buffer = Buffer.allocUnsafe(Math.min(CHUNK, MAX_STRING_LENGTH - total))
    const n = await readChunk(fd, buffer, signal)
    if (n === 0) break
    chunks.push(n === buffer.length ? buffer : buffer.subarray(0, n))
    total += n
  }
  return Buffer.concat(chunks, total).toString('utf8')
}

module.exports = { readFdAsync }
