'use strict'
// Generators of the byte sequences that break UTF-8 decoders: every length
// class and boundary code point, overlongs, surrogates, truncations, bytes that
// never occur in UTF-8, and deterministic random bytes.

/** A tiny seeded PRNG (mulberry32): the same cases on every run. */
function prng(seed) {
  let a = seed >>> 0
  return () => {
    a = (a + 0x6d2b79f5) >>> 0
    let t = a
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

const utf8 = (s) => [...Buffer.from(s, 'utf8')]
const cp = (n) => utf8(String.fromCodePoint(n))

/** Named sequences, valid and invalid, to place at every offset. */
const NASTY = {
  // Valid code points at every length-class boundary.
  'U+0000 NUL': cp(0x0),
  'U+007F': cp(0x7f),
  'U+0080': cp(0x80),
  'U+00FF': cp(0xff),
  'U+0100': cp(0x100),
  'U+07FF': cp(0x7ff),
  'U+0800': cp(0x800),
  'U+D7FF': cp(0xd7ff),
  'U+E000': cp(0xe000),
  'U+FEFF BOM': cp(0xfeff),
  'U+FFFD': cp(0xfffd),
  'U+FFFF': cp(0xffff),
  'U+10000': cp(0x10000),
  'U+10FFFF': cp(0x10ffff),
  // Overlong encodings.
  'overlong C0 80': [0xc0, 0x80],
  'overlong C1 BF': [0xc1, 0xbf],
  'overlong E0 80 80': [0xe0, 0x80, 0x80],
  'overlong E0 9F BF': [0xe0, 0x9f, 0xbf],
  'overlong F0 80 80 80': [0xf0, 0x80, 0x80, 0x80],
  'overlong F0 8F BF BF': [0xf0, 0x8f, 0xbf, 0xbf],
  // Encoded surrogates.
  'surrogate ED A0 80': [0xed, 0xa0, 0x80],
  'surrogate ED BF BF': [0xed, 0xbf, 0xbf],
  'surrogate pair ED A0 BD ED B8 80': [0xed, 0xa0, 0xbd, 0xed, 0xb8, 0x80],
  // Above U+10FFFF.
  'F4 90 80 80': [0xf4, 0x90, 0x80, 0x80],
  // Truncated sequences.
  'truncated C3': [0xc3],
  'truncated E2': [0xe2],
  'truncated E2 82': [0xe2, 0x82],
  'truncated F0': [0xf0],
  'truncated F0 9F': [0xf0, 0x9f],
  'truncated F0 9F 98': [0xf0, 0x9f, 0x98],
  'truncated E2 then ASCII': [0xe2, 0x41],
  'truncated F0 9F then valid 2-byte': [0xf0, 0x9f, 0xc3, 0xa9],
  // Lone continuation bytes.
  'lone 80': [0x80],
  'lone BF': [0xbf],
  'lone 80 80 80': [0x80, 0x80, 0x80],
  // Bytes that never appear in UTF-8.
  C0: [0xc0],
  C1: [0xc1],
  F5: [0xf5],
  F8: [0xf8],
  FC: [0xfc],
  FE: [0xfe],
  FF: [0xff],
  'F5 80 80 80': [0xf5, 0x80, 0x80, 0x80],
  'FF FE': [0xff, 0xfe],
}

/** Fillers that put the rest of the file into each class. */
const FILLERS = {
  ascii: utf8('a'),
  latin1: utf8('é'),
  cjk: utf8('中'),
  emoji: utf8('😀'),
}

/** `n` bytes of `filler` (the last character may be cut when it does not fit). */
function fill(filler, n) {
  const out = []
  while (out.length < n) out.push(...filler)
  return out.slice(0, n)
}

/** Random byte arrays of several flavours, deterministic from `seed`. */
function randomFiles(seed, count, maxLen) {
  const rand = prng(seed)
  const files = []
  for (let i = 0; i < count; i++) {
    const len = Math.floor(rand() * maxLen)
    const flavour = i % 4
    const bytes = []
    if (flavour === 0) {
      // Uniform random bytes: errors everywhere.
      for (let j = 0; j < len; j++) bytes.push(Math.floor(rand() * 256))
    } else if (flavour === 1) {
      // Mostly ASCII with sparse high bytes.
      for (let j = 0; j < len; j++) bytes.push(rand() < 0.03 ? 0x80 + Math.floor(rand() * 128) : 0x20 + Math.floor(rand() * 95))
    } else {
      // Random valid code points, then (flavour 3) a few mutated bytes.
      while (bytes.length < len) {
        const r = rand()
        let c
        if (r < 0.4) c = Math.floor(rand() * 0x80)
        else if (r < 0.6) c = 0x80 + Math.floor(rand() * 0x780)
        else if (r < 0.85) c = 0x800 + Math.floor(rand() * 0xf800)
        else c = 0x10000 + Math.floor(rand() * 0x100000)
        if (c >= 0xd800 && c <= 0xdfff) c = 0xfffd
        bytes.push(...cp(c))
      }
      if (flavour === 3) for (let k = 0; k < 3 && bytes.length; k++) bytes[Math.floor(rand() * bytes.length)] = Math.floor(rand() * 256)
    }
    files.push(bytes)
  }
  return files
}

/** Repeating texts of each class, for large inputs. */
const BASES = {
  ascii: 'const answer = compute(42); // plain source text\n',
  latin1: 'Déjà vu à Noël, über Straße, ça coûte très cher.\n',
  utf8_mixed: 'Mixed: café, 中文, 日本語, emoji 😀🎉 and ASCII.\n',
  cjk: '漢字とかなの混じった文章、中文句子。한국어 문장.\n',
}

/** Odd bytes that change a large input's class when placed in it. */
const ODD = {
  'é (U+00E9)': utf8('é'),
  'Ā (U+0100)': utf8('Ā'),
  '😀 (4 bytes)': utf8('😀'),
  'stray FF': [0xff],
  'truncated E2 82': [0xe2, 0x82],
  'lone 80': [0x80],
}

/** `size` bytes of `base` repeated (the last repetition may be cut). */
function bigBuffer(base, size) {
  const unit = Buffer.from(base)
  if (unit.length === 0) throw new Error(`Buffer.from(${JSON.stringify(base)}) is empty: this Node's own UTF-8 encoding is broken`)
  const buf = Buffer.alloc(size)
  for (let i = 0; i < size; i += unit.length) unit.copy(buf, i)
  return buf
}

/**
 * Sizes around the external-string thresholds (128 KiB of string data on Node
 * 20-24, 512 KiB on Node 26) and the old 4 KiB and 64 KiB ones, the chunked
 * read (1 MiB), the two-thread read and conversion of files (768 KiB, whatever
 * they hold: src/read/, src/transcode/halves.rs), the
 * two-thread conversion of buffers (decodeUtf8, 4 MiB) and past the
 * two-thread lossy decode (8 MiB).
 */
const LARGE_SIZES = [
  4 * 1024 - 1,
  4 * 1024 + 1,
  64 * 1024 - 1,
  64 * 1024,
  64 * 1024 + 1,
  192 * 1024 + 1,
  256 * 1024 + 1,
  512 * 1024 + 1,
  768 * 1024 - 1,
  768 * 1024 + 1,
  1024 * 1024 + 7,
  2 * 1024 * 1024 + 1,
  4 * 1024 * 1024 - 1,
  4 * 1024 * 1024 + 3,
  8 * 1024 * 1024 + 5,
]

/**
 * LARGE_SIZES below and from 4 MiB: the identity tests take the larger ones in
 * files of their own (…-4mib.test.js), which node --test runs beside the rest.
 */
const LARGE_SIZES_BELOW_4MIB = LARGE_SIZES.filter((size) => size < 4 * 1024 * 1024 - 1)
const LARGE_SIZES_FROM_4MIB = LARGE_SIZES.filter((size) => size >= 4 * 1024 * 1024 - 1)

/** `size` bytes of `base` repeated, valid UTF-8: a character cut at the end is replaced by spaces. */
function validBuffer(base, size) {
  const clean = bigBuffer(base, size)
  let end = clean.length
  while (end > 0 && (clean[end - 1] & 0xc0) === 0x80) end--
  if (end > 0 && clean[end - 1] >= 0xc0) end--
  return Buffer.concat([clean.subarray(0, end), Buffer.alloc(clean.length - end, 0x20)])
}

/**
 * Where an odd sequence goes in a large input: the start (where the two-thread
 * conversions look first), the left half (an error there makes the left half
 * be decoded again and the right half's units move, src/transcode/halves.rs), the
 * middle (around where reads and conversions split) and the very end.
 */
const WHERE = ['start', 'left half', 'middle', 'end']

/**
 * Large inputs of `size` bytes: for each class a clean (valid) one, then the
 * same with each odd byte at each place of WHERE.
 */
function* largeCases(size) {
  for (const [className, base] of Object.entries(BASES)) {
    const valid = validBuffer(base, size)
    yield { label: `${className} clean`, bytes: valid }
    for (const [oddName, odd] of Object.entries(ODD)) {
      for (const where of WHERE) {
        const at = { start: 0, 'left half': valid.length >> 2, middle: valid.length >> 1, end: valid.length - odd.length }[where]
        const bytes = Buffer.from(valid)
        Buffer.from(odd).copy(bytes, at)
        yield { label: `${className} + ${oddName} at ${where}`, bytes }
      }
    }
  }
}

/**
 * For each class, 1 MiB of its text with a stray 0xFF every 3000-5000 bytes
 * (the bench's "invalid" shape), the same bytes on every run.
 */
function* sprinkledCases() {
  const rand = prng(7)
  for (const base of Object.values(BASES)) {
    const bytes = bigBuffer(base, 1024 * 1024)
    for (let i = Math.floor(rand() * 4096); i < bytes.length; i += 3000 + Math.floor(rand() * 2000)) bytes[i] = 0xff
    yield bytes
  }
}

module.exports = {
  prng,
  utf8,
  cp,
  NASTY,
  FILLERS,
  fill,
  randomFiles,
  BASES,
  ODD,
  bigBuffer,
  validBuffer,
  WHERE,
  LARGE_SIZES,
  LARGE_SIZES_BELOW_4MIB,
  LARGE_SIZES_FROM_4MIB,
  largeCases,
  sprinkledCases,
}
