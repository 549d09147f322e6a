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
export declare function readFileUtf8(path: PathOrFileDescriptor, options?: Utf8Encoding | ReadFileUtf8Options | null): string

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

/**
 * How the strings of sync calls (`readFileUtf8`, `readFileSync`, `decodeUtf8`)
 * are made, for the whole process (every thread):
 * - `'fast'` (the default): large strings are external strings over our
 *   buffers, which saves the copy. V8 frees those only in full GCs, so a loop
 *   of large reads holds some dead strings at its peak; once a bounded amount
 *   of them is waiting for V8, strings are copied until V8 collects some.
 * - `'lean'`: strings are external only where fs's own are (large files on
 *   Node 26), copied into V8's heap otherwise, so a loop of reads peaks where
 *   fs's does, at the cost of speed (most on Node 20–24).
 *
 * Async reads and batches are not affected: their external strings already
 * peak lower than fs.promises' copies. Returns the mode it replaces; any other
 * value throws an `ERR_INVALID_ARG_VALUE` TypeError. The environment variable
 * `READFILE_UTF8_MEMORY_MODE` (`lean` or `fast`) sets it when the package loads.
 * @example
 * require('readfile-utf8').setMemoryMode('lean') // a server with memory to spare for nothing
 */
export declare function setMemoryMode(mode: MemoryMode): MemoryMode

/** See {@link setMemoryMode}. */
export type MemoryMode = 'lean' | 'fast'

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
  options?: Utf8Encoding | ReadFileUtf8AsyncOptions | null,
): Promise<string>

/** Options of {@link readFilesUtf8}. */
export interface ReadFilesUtf8Options extends ReadFileUtf8Options {
  /**
   * How many threads read at once (the calling thread included, for the sync
   * function): an integer from 1 to 256; default: `os.availableParallelism()`,
   * at most 16. Out of range: `ERR_OUT_OF_RANGE`; not a number: `ERR_INVALID_ARG_TYPE`.
   */
  concurrency?: number | undefined
  /**
   * `'throw'` (default): the call throws (rejects with) the error fs gives for
   * the first failing path in list order, with its position as `err.index`.
   * `'return'`: each failing path's error (fs's own, without `index`) takes its
   * place in the array.
   */
  errors?: 'throw' | 'return' | undefined
}

/** Options of {@link readFilesUtf8Async}: those of {@link readFilesUtf8}, plus an AbortSignal. */
export interface ReadFilesUtf8AsyncOptions extends ReadFilesUtf8Options {
  /** Aborting rejects with fs.promises' `AbortError` (`code: 'ABORT_ERR'`) and stops the reads. */
  signal?: AbortSignal | undefined
}

/** An error of a batch read in `'throw'` mode: fs's error, plus the failing path's position. */
export interface ReadFilesUtf8Error extends NodeJS.ErrnoException {
  index: number
}

/**
 * Reads a list of files as UTF-8 text with several threads at once. Element i
 * is `===` `fs.readFileSync(paths[i], 'utf8')`, in the order of `paths`.
 * Opening, reading and decoding run on worker threads; the strings are made on
 * the calling thread, which reads too while it waits.
 *
 * @param paths file paths (string, Buffer/Uint8Array, `file:` URL) or integer
 *   fds (read on the calling thread, in list order, from their position).
 * @throws the error fs throws for the first failing path, with `index` set
 *   (see {@link ReadFilesUtf8Options.errors}).
 * @example
 * const sources = readFilesUtf8(['src/a.ts', 'src/b.ts'])
 */
export declare function readFilesUtf8(
  paths: readonly PathOrFileDescriptor[],
  options?: Utf8Encoding | (ReadFilesUtf8Options & { errors?: 'throw' | undefined }),
): string[]
export declare function readFilesUtf8(
  paths: readonly PathOrFileDescriptor[],
  options: ReadFilesUtf8Options & { errors: 'return' },
): Array<string | NodeJS.ErrnoException>

/**
 * {@link readFilesUtf8} off the main thread: resolves with what
 * `fs.promises.readFile(p, 'utf8')` gives for each path, in list order;
 * rejects with fs.promises' error for the first failing path (with `index`),
 * or an `AbortError` when `options.signal` aborts. The main thread only makes
 * the strings.
 * @example
 * const sources = await readFilesUtf8Async(paths, { signal: AbortSignal.timeout(5000) })
 */
export declare function readFilesUtf8Async(
  paths: readonly PathOrFileDescriptor[],
  options?: Utf8Encoding | (ReadFilesUtf8AsyncOptions & { errors?: 'throw' | undefined }),
): Promise<string[]>
export declare function readFilesUtf8Async(
  paths: readonly PathOrFileDescriptor[],
  options: ReadFilesUtf8AsyncOptions & { errors: 'return' },
): Promise<Array<string | NodeJS.ErrnoException>>

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
