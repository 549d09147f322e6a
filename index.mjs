// ESM entry: the same functions as the CommonJS entry.
import cjs from './index.js'

export const { readFileUtf8, readFileSync, readFileUtf8Async, readFilesUtf8, readFilesUtf8Async, decodeUtf8, readFile, promises, engine, setMemoryMode } = cjs
export default cjs
