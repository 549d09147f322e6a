'use strict'
// The differential fuzz property, shared by `npm run fuzz` (__test__/fuzz/run.js)
// and the fixed-seed slice in `npm run test:slow` (__test__/fuzz.slow.js).
//
// fast-check generates byte sequences biased to what breaks UTF-8 decoders —
// boundary code points, overlongs, surrogates, truncations, 0xF5..0xFF, lone
// continuation bytes, long valid runs with an error at the end, Latin-1 runs
// broken by one U+0100 — in sizes from 0 to 1 MiB (most small), and checks
// each one against Node itself:
//   decodeUtf8(buf[, start, end])        === buf.toString('utf8'[, start, end])
//   readFileUtf8(file)                   === fs.readFileSync(file, 'utf8')
//   await readFileUtf8Async(file)        === fs.readFileSync(file, 'utf8')
// Cases are generated as a structure (pieces × repeat counts), so a 1 MiB case
// costs little to make and shrinks to a short description.
const fs = require('node:fs')
const fc = require('fast-check')

const { readFileUtf8, readFileUtf8Async, decodeUtf8 } = require('../..')
const { NASTY, utf8, cp } = require('../cases')

const MiB = 1 << 20

const nastyNames = Object.keys(NASTY)
const BOUNDARY_CODE_POINTS = [
  0x0, 0x7f, 0x80, 0xbf, 0xc0, 0xff, 0x100, 0x7ff, 0x800, 0xfff, 0x1000, 0xd7ff, 0xe000, 0xfeff, 0xfffd, 0xfffe,
  0xffff, 0x10000, 0x3ffff, 0x40000, 0xfffff, 0x100000, 0x10ffff,
]

/** A short byte sequence: one "piece" of a case. */
const piece = fc.oneof(
  { weight: 4, arbitrary: fc.constantFrom(...nastyNames).map((name) => ({ name, bytes: NASTY[name] })) },
  { weight: 2, arbitrary: fc.constantFrom(...BOUNDARY_CODE_POINTS).map((c) => ({ name: `U+${c.toString(16)}`, bytes: cp(c) })) },
  {
    weight: 3,
    arbitrary: fc.string({ unit: 'binary', maxLength: 12 }).map((s) => ({ name: JSON.stringify(s), bytes: utf8(s) })),
  },
  {
    weight: 2,
    arbitrary: fc
      .array(fc.integer({ min: 0x20, max: 0xff }), { minLength: 1, maxLength: 12 })
      .map((cs) => ({ name: `latin1(${cs.length})`, bytes: cs.flatMap(cp) })),
  },
  {
    weight: 1,
    arbitrary: fc
      .array(fc.integer({ min: 0xf5, max: 0xff }), { minLength: 1, maxLength: 4 })
      .map((bs) => ({ name: `bytes ${bs.map((b) => b.toString(16)).join(' ')}`, bytes: bs })),
  },
  {
    weight: 2,
    arbitrary: fc
      .uint8Array({ maxLength: 16 })
      .map((bs) => ({ name: `random ${Buffer.from(bs).toString('hex')}`, bytes: [...bs] })),
  },
)

/** Small cases: a few pieces, each repeated a few times (0 .. ~1 KiB). */
const smallCase = fc
  .array(fc.tuple(piece, fc.integer({ min: 1, max: 8 })), { maxLength: 12 })
  .map((parts) => ({
    describe: parts.map(([p, n]) => (n === 1 ? p.name : `${p.name}×${n}`)).join(' + ') || '(empty)',
    build: () => Buffer.from(parts.flatMap(([p, n]) => Array.from({ length: n }, () => p.bytes).flat())),
  }))

const FILLERS = {
  ascii: 'a',
  'ascii text': 'The quick brown fox. ',
  latin1: 'é',
  'latin1 text': 'déjà vu à Noël ',
  cjk: '中',
  emoji: '😀',
  mixed: 'x é 中 😀 ',
}

/**
 * A long valid run of one class with one odd piece at the end, the start, the
 * middle (where parallel.rs splits ≥ 1 MiB inputs) or elsewhere — including
 * the Latin-1 run broken by a single U+0100.
 */
function longCase(maxBytes) {
  return fc
    .record({
      filler: fc.constantFrom(...Object.keys(FILLERS)),
      length: fc.integer({ min: 1, max: maxBytes }),
      odd: fc.oneof(piece, fc.constant({ name: 'U+0100', bytes: cp(0x100) })),
      where: fc.constantFrom('end', 'start', 'middle', 'near end', 'anywhere'),
      shift: fc.integer({ min: 0, max: 70 }),
      cut: fc.boolean(), // cut the run inside a character before the odd piece
    })
    .map(({ filler, length, odd, where, shift, cut }) => ({
      describe: `${length} bytes of ${filler} with ${odd.name} at ${where}${where === 'end' ? '' : ` (shift ${shift})`}${cut ? ', run cut mid-character' : ''}`,
      build: () => {
        const run = Buffer.from(FILLERS[filler].repeat(Math.ceil(length / Buffer.byteLength(FILLERS[filler])) + 1))
        let body = run.subarray(0, length)
        if (!cut) body = Buffer.from(body.toString('utf8').replace(/\uFFFD$/, '')) // whole characters only
        const at = Math.min(
          body.length,
          where === 'end'
            ? body.length
            : where === 'start'
              ? shift
              : where === 'middle'
                ? Math.max(0, (body.length >> 1) - 35 + shift)
                : where === 'near end'
                  ? Math.max(0, body.length - shift)
                  : Math.floor((body.length * shift) / 71),
        )
        return Buffer.concat([body.subarray(0, at), Buffer.from(odd.bytes), body.subarray(at)])
      },
    }))
}

/** A case and the byte range decodeUtf8 / toString are asked for. */
const caseArbitrary = fc
  .tuple(
    fc.oneof(
      { weight: 80, arbitrary: smallCase },
      { weight: 14, arbitrary: longCase(64 * 1024) },
      { weight: 6, arbitrary: longCase(MiB) },
    ),
    fc.option(fc.tuple(fc.nat(), fc.nat()), { freq: 3 }),
  )
  .map(([c, range]) => {
    const bytes = c.build()
    const value = { describe: c.describe, bytes, range }
    // fast-check prints the minimal case with this: what it is, then its bytes.
    Object.defineProperty(value, fc.toStringMethod, {
      value: () => `{ ${c.describe}; ${describeBytes(bytes)}${range ? `; toString range ${range[0] % (bytes.length + 2)}..${range[1] % (bytes.length + 2)}` : ''} }`,
    })
    return value
  })

function describeBytes(bytes, max = 64) {
  const hex = (b) => [...b].map((x) => x.toString(16).padStart(2, '0')).join(' ')
  if (bytes.length <= max) return `${bytes.length} bytes [${hex(bytes)}]`
  return `${bytes.length} bytes [${hex(bytes.subarray(0, max / 2))} … ${hex(bytes.subarray(bytes.length - max / 2))}]`
}

/** Where `a` and `b` first differ, for failure messages. */
function firstDifference(a, b) {
  let i = 0
  while (i < a.length && i < b.length && a.charCodeAt(i) === b.charCodeAt(i)) i++
  const at = (s) => (i < s.length ? `U+${s.charCodeAt(i).toString(16)}` : 'end')
  return `lengths ${a.length} vs ${b.length}, first difference at char ${i}: ${at(a)} vs ${at(b)}`
}

function assertSame(api, actual, expected) {
  if (actual !== expected) {
    throw new Error(`${api} differs from Node: ${typeof actual === 'string' ? firstDifference(actual, expected) : typeof actual}`)
  }
}

/**
 * The check of one case, for a scratch `file` this process owns: every API
 * against Node. Async (readFileUtf8Async is part of every case). `api` is
 * readfile-utf8's functions (replaced only to show that a wrong one is caught).
 */
function predicate(file, api = { readFileUtf8, readFileUtf8Async, decodeUtf8 }) {
  const { readFileUtf8, readFileUtf8Async, decodeUtf8 } = api
  return async ({ bytes, range }) => {
    assertSame('decodeUtf8(buf)', decodeUtf8(bytes), bytes.toString('utf8'))
    if (range) {
      const start = range[0] % (bytes.length + 2)
      const end = range[1] % (bytes.length + 2)
      assertSame(`decodeUtf8(buf, ${start}, ${end})`, decodeUtf8(bytes, start, end), bytes.toString('utf8', start, end))
    }
    fs.writeFileSync(file, bytes)
    const expected = fs.readFileSync(file, 'utf8')
    assertSame('readFileUtf8', readFileUtf8(file), expected)
    assertSame('readFileUtf8Async', await readFileUtf8Async(file), expected)
  }
}

/** The fast-check property over `caseArbitrary` for a scratch `file`. */
function differential(file, api) {
  return fc.asyncProperty(caseArbitrary, predicate(file, api))
}

module.exports = { differential, predicate, caseArbitrary, describeBytes }
