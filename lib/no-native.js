'use strict'
// The addon's interface where no addon could be loaded: every read answers
// FS_ANSWERS, so the JS layer hands each call to fs, which then gives its own
// result or error; decodeUtf8 is Buffer#toString.
const { FS_ANSWERS } = require('./errors')

const forFs = () => FS_ANSWERS
// The default mode is fast, as with the addon (setMemoryMode's answers match).
let lean = false
const forFsAsync = async () => FS_ANSWERS

module.exports = {
  readPath: forFs,
  readPathBytes: forFs,
  readFd: forFs,
  readPathAsync: forFsAsync,
  readPathBytesAsync: forFsAsync,
  readFdAsync: forFsAsync,
  ReadCancel: class ReadCancel {
    cancel() {}
  },
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
