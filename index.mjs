// ESM entry: the same functions as the CommonJS entry.
import cjs from './index.js'

export const { readFileUtf8, readFileSync, engine } = cjs
export default cjs
