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

/** The UTF-8 engine this process uses: `'simdutf'` (SIMD) or `'fallback'` (pure Rust). */
export declare function engine(): 'simdutf' | 'fallback'
