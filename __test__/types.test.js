'use strict'
// index.d.ts and register.d.ts, type-checked as a consumer's TypeScript sees
// them (strict, nodenext, @types/node): real usage compiles, misuse does not.
// Nothing here depends on the Node line or the CPU that runs it, so CI runs
// this file once (.ci/run); every check in it shares one parse of the
// standard library and @types/node (typecheck.js).
const { test } = require('node:test')
const assert = require('node:assert/strict')
const path = require('node:path')

const { scratch, installPackage } = require('./helpers')
const { typechecker } = require('./typecheck')

const ROOT = path.join(__dirname, '..')
const dir = scratch('types')
installPackage(dir, 'readfile-utf8', ROOT)
// @types/node and what it imports (found beside it when copied).
for (const name of ['@types', 'undici-types']) installPackage(dir, name, path.join(ROOT, 'node_modules', name))
const compile = typechecker(dir)

test('index.d.ts type-checks real usage (and rejects misuse)', () => {
  const ok = compile(`import { readFileUtf8, readFileSync, engine } from 'readfile-utf8'
    const a: string = readFileUtf8('x')
    const b: string = readFileUtf8(3, { flag: 'r' })
    const c: string = readFileUtf8(new URL('file:///x'), 'utf-8') + readFileUtf8('x', null)
    const d: Buffer = readFileSync('x')
    const e: string = readFileSync('x', 'utf8')
    const f: string = readFileSync(Buffer.from('x'), { encoding: 'latin1' })
    const g: 'simdutf' | 'fallback' | 'fs' = engine()
    export { a, b, c, d, e, f, g }
    import { readFileUtf8Async, decodeUtf8, readFile, promises } from 'readfile-utf8'
    import { register, unregister, isRegistered } from 'readfile-utf8/register'
    export async function more(): Promise<string> {
      const h: string = await readFileUtf8Async('x', { signal: new AbortController().signal, flag: 'r' })
      const i: string = decodeUtf8(Buffer.from('x')) + decodeUtf8(new Uint16Array(2), 1, 3) + decodeUtf8(new ArrayBuffer(4))
      const j: string = await promises.readFile('x', 'utf8')
      const k: Buffer = await promises.readFile('x')
      readFile('x', 'utf8', (err: NodeJS.ErrnoException | null, data: string) => void [err, data])
      register(); unregister(); const l: boolean = isRegistered()
      return h + i + j + k.length + l
    }
    import { setMemoryMode, type MemoryMode } from 'readfile-utf8'
    const m: MemoryMode = setMemoryMode('lean')
    export const n: 'fast' | 'lean' = setMemoryMode(m)`)
  assert.equal(ok.status, 0, ok.stdout + ok.stderr)
  const bad = compile(`import { readFileUtf8, decodeUtf8 } from 'readfile-utf8'
    const n: number = readFileUtf8('x')
    readFileUtf8('x', 'latin1')
    decodeUtf8('text')
    export { n }
    import { setMemoryMode } from 'readfile-utf8'
    setMemoryMode('small')`)
  assert.notEqual(bad.status, 0)
  assert.match(bad.stdout, /TS2322/)
  assert.match(bad.stdout, /TS2345|TS2769/)
  assert.match(bad.stdout, /"small"' is not assignable/)
})

test('index.d.ts types the batch functions (and rejects misuse)', () => {
  const ok = compile(`import { readFilesUtf8, readFilesUtf8Async, type ReadFilesUtf8Error } from 'readfile-utf8'
    const a: string[] = readFilesUtf8(['x', Buffer.from('y'), new URL('file:///z'), 3])
    const b: string[] = readFilesUtf8(['x'], { concurrency: 4, flag: 'r', errors: 'throw' })
    const c: Array<string | NodeJS.ErrnoException> = readFilesUtf8(['x'], { errors: 'return' })
    export async function more(): Promise<number> {
      const d: string[] = await readFilesUtf8Async(['x'], { signal: new AbortController().signal })
      const e: Array<string | Error> = await readFilesUtf8Async(['x'], { errors: 'return', concurrency: 1 })
      try { readFilesUtf8([]) } catch (err) { return (err as ReadFilesUtf8Error).index }
      return a.length + b.length + c.length + d.length + e.length
    }`)
  assert.equal(ok.status, 0, ok.stdout + ok.stderr)
  const bad = compile(`import { readFilesUtf8 } from 'readfile-utf8'
    const n: string[] = readFilesUtf8(['x'], { errors: 'return' })
    readFilesUtf8('x')
    readFilesUtf8(['x'], { concurrency: '2' })
    export { n }`)
  assert.notEqual(bad.status, 0)
  assert.match(bad.stdout, /TS2322|TS2769/)
  assert.match(bad.stdout, /TS2345|TS2769/)
})
