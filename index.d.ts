/// <reference types="node" />
import type { PathOrFileDescriptor } from 'node:fs'

/** The UTF-8 spellings fs accepts (any letter case works at run time, as in fs). */
export type Utf8Encoding = 'utf8' | 'utf-8' | 'UTF8' | 'UTF-8'

/** Options of {@link readFileUtf8}: fs's options, UTF-8 only. */
export interface ReadFileUtf8Options {
  /** Defaults to UTF-8; any other encoding is an `ERR_INVALID_ARG_VALUE` TypeError. */
  encoding?: Utf8Encoding | null | undefined
  /** Open flag as in fs (`'r'`, `'r+'`, `'a+'`, …, or a number); default `'r'`. */
  flag?: string | number | undefined
}

/**
 * Reads a whole file as UTF-8 text. The result is `===` to
 * `fs.readFileSync(path, 'utf8')` for every file, and failures throw fs's errors.
 *
 * @param path a file path (string, Buffer/Uint8Array, `file:` URL) or an integer fd
 *   (read from its current position; not closed).
 * @example
 * const { readFileUtf8 } = require('readfile-utf8')
 * const source = readFileUtf8('src/index.ts')
 */
export declare function readFileUtf8(path: PathOrFileDescriptor, options?: Utf8Encoding | ReadFileUtf8Options): string

/**
 * `fs.readFileSync` with exactly fs's signature: UTF-8 requests are served by
 * readfile-utf8, every other call goes to `fs.readFileSync` unchanged.
 */
export declare function readFileSync(
  path: PathOrFileDescriptor,
  options?: { encoding?: null | undefined; flag?: string | undefined } | null,
): Buffer
export declare function readFileSync(
  path: PathOrFileDescriptor,
  options: { encoding: BufferEncoding; flag?: string | undefined } | BufferEncoding,
): string
export declare function readFileSync(
  path: PathOrFileDescriptor,
  options?: { encoding?: BufferEncoding | null | undefined; flag?: string | undefined } | BufferEncoding | null,
): string | Buffer

/**
 * The UTF-8 engine this process uses: `'simdutf'` (SIMD), `'fallback'` (pure
 * Rust), or `'fs'` where no native binary could be loaded and every function
 * hands its calls to fs.
 */
export declare function engine(): 'simdutf' | 'fallback' | 'fs'

/** Options of {@link readFileUtf8Async}: those of {@link readFileUtf8}, plus an AbortSignal. */
export interface ReadFileUtf8AsyncOptions extends ReadFileUtf8Options {
  /** Aborting rejects with the `AbortError` (`code: 'ABORT_ERR'`) fs.promises gives. */
  signal?: AbortSignal | undefined
}

/**
 * Reads a whole file as UTF-8 text off the main thread (libuv's thread pool):
 * the result is `===` to `await fs.promises.readFile(path, 'utf8')`, and failures
 * reject with fs.promises' errors. Also accepts an integer fd (read from its position).
 * @example
 * const source = await readFileUtf8Async('src/index.ts', { signal: AbortSignal.timeout(1000) })
 */
export declare function readFileUtf8Async(
  path: PathOrFileDescriptor,
  options?: Utf8Encoding | ReadFileUtf8AsyncOptions,
): Promise<string>

/**
 * Decodes UTF-8 bytes: `=== Buffer.from(bytes).toString('utf8', start, end)` for
 * every byte sequence (U+FFFD per maximal invalid subpart). `start`/`end` are
 * byte offsets into the view, clamped as `buffer.toString` clamps them.
 */
export declare function decodeUtf8(
  input: ArrayBufferView | ArrayBufferLike,
  start?: number,
  end?: number,
): string

/**
 * `fs.readFile` with exactly fs's signature: UTF-8 requests for paths are read
 * natively off the main thread, every other call goes to `fs.readFile` unchanged.
 */
export declare const readFile: typeof import('node:fs').readFile

/** `fs.promises` drop-ins. */
export declare const promises: {
  /**
   * `fs.promises.readFile` with exactly its signature: UTF-8 requests are read
   * natively, every other call goes to `fs.promises.readFile` unchanged.
   */
  readFile: typeof import('node:fs/promises').readFile
}
