'use strict'
// The addon's interface where no addon could be loaded: every read answers
// FS_ANSWERS, so the JS layer hands each call to fs, which then gives its own
// result or error; decodeUtf8 is Buffer#toString.
const { FS_ANSWERS } = require('./errors')

const forFs = () => FS_ANSWERS
// The default mode is fast, as with the addon (setMemoryMode's answers match).
let lean = false

module.exports = {
  readPath: forFs,
  readPathBytes: forFs,
  readFd: forFs,
  poolOpen: () => null,
  // -1: no read was queued, fs answers it. So no read has an id to cancel, and
  // batches, which check for readFilesOpen, never ask the pool (poolReadAll).
  poolReadEach: () => -1,
  decodeUtf8: (bytes, start, end) =>
    Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('utf8', start, end),
  setLeanStrings: (next) => {
    const was = lean
    lean = next
    return was
  },
  engine: () => 'fs',
  reader: () => 'fs',
}
