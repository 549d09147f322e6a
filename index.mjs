// ESM entry: the same functions as the CommonJS entry.
import cjs from './index.js'

export const { readFileUtf8, readFileSync, readFileUtf8Async, decodeUtf8, readFile, promises, engine } = cjs
export default cjs
