'use strict'
// A preload for the tools suite (tools.js), loaded with `--import` after the
// register hook when the hook is on, so that it sees the fs functions the tool
// sees. It counts every fs and fs.promises function the tool calls (the calls
// fs makes inside them are not counted: only the outermost), and times the
// reads: the union of the intervals during which at least one read is in
// flight, sync or async (a sync read's interval is exactly its call; an async
// read's runs from the call to its result, so it also holds whatever the main
// thread did meanwhile: an upper bound on what reading cost). Buffers that a
// read returns undecoded are marked, and their decoding by the tool
// (buffer.toString, TextDecoder) is counted and timed too. At exit it writes
// JSON to $READFILE_UTF8_BENCH_PROBE; reads under $READFILE_UTF8_BENCH_CORPUS
// are told apart from the rest (the tool's own modules, configs, package.json).
const fs = require('node:fs')
const path = require('node:path')
const { fileURLToPath } = require('node:url')
const { syncBuiltinESMExports } = require('node:module')

const OUT = process.env.READFILE_UTF8_BENCH_PROBE
const CORPUS = process.env.READFILE_UTF8_BENCH_CORPUS || '\0'
const now = () => performance.now()

/** Calls per `function\tencoding\twhere` (the encoding of whole-file reads only), and the bytes reads returned. */
const calls = new Map()
const count = (key, bytes) => {
  const c = calls.get(key) ?? { calls: 0, bytes: 0 }
  c.calls++
  c.bytes += bytes
  calls.set(key, c)
}

// Reads in flight, and the time any was: all of them, and the async ones alone.
const span = { all: { active: 0, since: 0, ms: 0 }, async: { active: 0, since: 0, ms: 0 } }
const begin = (s, t) => {
  if (s.active++ === 0) s.since = t
}
const end = (s, t) => {
  if (--s.active === 0) s.ms += t - s.since
}
let syncReadMs = 0
let corpusSyncReadMs = 0
let peakAsync = 0
const corpusSpan = { active: 0, since: 0, ms: 0 }

// Undecoded Buffers a read returned, and their decoding by the tool.
const undecoded = new WeakSet()
const decoding = { calls: 0, bytes: 0, ms: 0, by: {} }

/** 'utf8', 'buffer' (no encoding: a Buffer) or another encoding, from a read's options argument. */
function encodingOf(options) {
  const e = typeof options === 'string' ? options : options?.encoding
  return e == null ? 'buffer' : String(e).toLowerCase().replace('utf-8', 'utf8')
}

/** The absolute path a call names (a string, URL or Buffer), or null (an fd, a FileHandle). */
const pathOf = (p) =>
  typeof p === 'string' || p instanceof URL || Buffer.isBuffer(p) ? path.resolve(p instanceof URL ? fileURLToPath(p) : String(p)) : null
/** 'corpus', 'other', or 'fd' for a descriptor. */
const where = (p) => {
  if (typeof p === 'number') return 'fd'
  return pathOf(p)?.startsWith(CORPUS) ? 'corpus' : 'other'
}

/** Each file read whole by path, once per encoding: what tools-free-reads.js serves. */
const wholeReads = new Map()

const sizeOf = (v) => (typeof v === 'string' ? v.length : (v?.byteLength ?? 0))

/** Functions that read a file (or part of one): timed, and keyed by encoding. */
const READS = new Set(['readFileSync', 'readFile', 'readSync', 'read', 'readv', 'readvSync'])

let depth = 0

/** `target[name]` wrapped: counted when called at depth 0 and, if a read, timed. */
function wrap(target, name, label, kind) {
  const original = target[name]
  if (typeof original !== 'function' || /^[A-Z]/.test(name)) return
  const isRead = READS.has(name)
  const wholeFile = name === 'readFile' || name === 'readFileSync'
  const wrapper = function (...args) {
    if (depth > 0) return original.apply(this, args)
    // A FileHandle's methods read the handle's file: their first argument is the options.
    const onHandle = label.startsWith('FileHandle.')
    const place = onHandle ? 'fd' : where(args[0])
    const encoding = wholeFile ? encodingOf(onHandle ? args[0] : args[1]) : ''
    const key = `${label}\t${encoding}\t${place}`
    const inCorpus = wholeFile && place === 'corpus'
    if (!isRead) {
      count(key, 0)
      depth++
      try {
        return original.apply(this, args)
      } finally {
        depth--
      }
    }
    const done = (value) => {
      count(key, wholeFile ? sizeOf(value) : typeof value === 'number' ? value : (value?.bytesRead ?? 0))
      if (!wholeFile) return
      if (typeof value !== 'string' && value) undecoded.add(value)
      const abs = onHandle ? null : pathOf(args[0])
      if (abs !== null) wholeReads.set(`${abs}\0${encoding}`, { path: abs, encoding })
    }
    if (kind === 'sync') {
      const t0 = now()
      begin(span.all, t0)
      if (inCorpus) begin(corpusSpan, t0)
      depth++
      try {
        const value = original.apply(this, args)
        done(value)
        return value
      } finally {
        depth--
        const t1 = now()
        end(span.all, t1)
        if (inCorpus) end(corpusSpan, t1)
        syncReadMs += t1 - t0
        if (inCorpus) corpusSyncReadMs += t1 - t0
      }
    }
    const started = () => {
      const t = now()
      begin(span.all, t)
      begin(span.async, t)
      if (inCorpus) begin(corpusSpan, t)
      peakAsync = Math.max(peakAsync, span.async.active)
    }
    const finished = () => {
      const t = now()
      end(span.all, t)
      end(span.async, t)
      if (inCorpus) end(corpusSpan, t)
    }
    if (kind === 'callback') {
      const last = args.length - 1
      const cb = args[last]
      if (typeof cb !== 'function') return original.apply(this, args)
      args[last] = function (err, value, ...rest) {
        finished()
        if (!err) done(value)
        return cb.call(this, err, value, ...rest)
      }
      started()
      depth++
      try {
        return original.apply(this, args)
      } catch (err) {
        finished()
        throw err
      } finally {
        depth--
      }
    }
    // A promise.
    started()
    depth++
    let promise
    try {
      promise = original.apply(this, args)
    } catch (err) {
      finished()
      throw err
    } finally {
      depth--
    }
    return Promise.resolve(promise).then(
      (value) => {
        finished()
        done(value)
        return value
      },
      (err) => {
        finished()
        throw err
      },
    )
  }
  // Keep what hangs on the function (realpathSync.native, util.promisify.custom).
  for (const key of Reflect.ownKeys(original)) {
    if (key === 'length' || key === 'name' || key === 'prototype') continue
    Object.defineProperty(wrapper, key, Object.getOwnPropertyDescriptor(original, key))
  }
  Object.defineProperty(wrapper, 'name', { value: original.name })
  target[name] = wrapper
}

for (const name of Object.keys(fs)) {
  if (name === 'promises') continue
  wrap(fs, name, `fs.${name}`, name.endsWith('Sync') ? 'sync' : 'callback')
}
for (const name of Object.keys(fs.promises)) wrap(fs.promises, name, `fs.promises.${name}`, 'promise')

// FileHandle reads (fs.promises.open, then handle.readFile / read): its class is reachable only through a handle.
{
  const open = fs.promises.open
  let wrapped = false
  fs.promises.open = async function (...args) {
    const handle = await open.apply(this, args)
    if (!wrapped) {
      wrapped = true
      const proto = Object.getPrototypeOf(handle)
      for (const name of ['readFile', 'read']) wrap(proto, name, `FileHandle.${name}`, 'promise')
    }
    return handle
  }
}
syncBuiltinESMExports()

// The tool's own decoding of the Buffers it read.
function wrapDecoder(proto, name, label, bufferOf) {
  const original = proto[name]
  proto[name] = function (...args) {
    const buf = bufferOf(this, args)
    if (!buf || !undecoded.has(buf)) return original.apply(this, args)
    const t0 = now()
    try {
      return original.apply(this, args)
    } finally {
      decoding.ms += now() - t0
      decoding.calls++
      decoding.bytes += buf.byteLength
      decoding.by[label] = (decoding.by[label] ?? 0) + 1
    }
  }
}
wrapDecoder(Buffer.prototype, 'toString', 'buffer.toString', (self) => self)
wrapDecoder(TextDecoder.prototype, 'decode', 'TextDecoder.decode', (self, args) => args[0])

process.on('exit', () => {
  // A worker thread gets this preload too (it inherits --import): the main thread's counts are the report's.
  if (!OUT || !require('node:worker_threads').isMainThread) return
  fs.writeFileSync(
    OUT,
    JSON.stringify({
      ms: now(),
      readMs: span.all.ms,
      asyncReadMs: span.async.ms,
      syncReadMs,
      corpusReadMs: corpusSpan.ms,
      corpusSyncReadMs,
      peakAsync,
      decoding,
      calls: Object.fromEntries(calls),
      wholeReads: [...wholeReads.values()],
    }),
  )
})
