'use strict'
// Benchmark inputs: deterministic text files, generated on first use into a cache
// folder outside the repo (nothing large is committed) and reused afterwards.
//
// Every content class is a stream of text from a seeded PRNG, so a file of a given
// class and size has the same bytes on every machine and every Node version, and
// results stay comparable across runs. The generator version is part of the file
// name: bump GENERATOR_VERSION whenever the text below changes, so stale fixtures
// are never reused.
const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const { isUtf8 } = require('node:buffer')

const { KiB, MiB } = require('./format')

const GENERATOR_VERSION = 1

/** A tiny seeded PRNG (mulberry32): the same text on every machine and Node. */
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

/** Content classes, in report order, with what each one exercises. */
const CONTENTS = {
  ascii: 'source-code-like English, pure ASCII',
  latin1: 'French/German prose, every code point <= U+00FF (stored as UTF-8)',
  utf8_mixed: 'mostly ASCII with accented Latin, Greek/Cyrillic, CJK and emoji',
  cjk: 'Chinese/Japanese prose, mostly 3-byte characters',
  invalid: 'utf8_mixed with one stray 0xFF byte in every ~4 KiB',
}

/** Full matrix sizes (bytes). */
const SIZES = [64, KiB, 16 * KiB, 256 * KiB, MiB, 4 * MiB, 64 * MiB]

/** The cache folder of the repo's scripts: $READFILE_UTF8_CACHE (as scripts/get-node.sh) or the XDG cache. */
function cacheDir() {
  return process.env.READFILE_UTF8_CACHE || path.join(process.env.XDG_CACHE_HOME || path.join(os.homedir(), '.cache'), 'readfile-utf8')
}

/** Where fixtures are generated: the cache folder's fixtures/. */
function fixtureDir() {
  return path.join(cacheDir(), 'fixtures')
}

const words = (s) => s.trim().split(/\s+/)

// --- ascii: JavaScript-ish source lines with English comments -----------------------
const EN = words(`
  the of and to in is that for it as was with be by on not he this are or his from at
  which but have an they you were her she there would their we him been has when who will
  more no if out so said what up its about into than them can only other new some could
  time these two may then do first any my now such like our over man me even most made
  after also did many before must through back years where much your way well down should
  because each just those people how too little state good very make world still own see
  men work long get here between both life being under never day same another know while
  last might us great old year off come since against go came right used take three value
  result buffer string length index offset cache reader parser token stream file path`)
const IDENT = words(`
  value result buffer string length index offset cache reader parser token stream file path
  options count size data item node list map key entry error state config handler context
  input output chunk bytes text line column start end next prev total limit flags mode`)
const KEYWORDS_EXPR = ['null', 'undefined', 'true', 'false', '0', '1', '-1', "''", '[]', '{}']
const OPS = ['===', '!==', '<', '>', '<=', '>=', '&&', '||']

function asciiSource(rng) {
  const pick = (a) => a[(rng() * a.length) | 0]
  const ident = () => {
    let s = pick(IDENT)
    const n = (rng() * 3) | 0
    for (let i = 0; i < n; i++) {
      const w = pick(IDENT)
      s += w[0].toUpperCase() + w.slice(1)
    }
    return s
  }
  const expr = () => {
    const r = rng()
    if (r < 0.3) return ident()
    if (r < 0.5) return `${ident()}.${ident()}`
    if (r < 0.7) return `${ident()}(${ident()}, ${(rng() * 4096) | 0})`
    if (r < 0.85) return `${ident()}[${ident()} + ${(rng() * 16) | 0}]`
    return pick(KEYWORDS_EXPR)
  }
  const sentence = (n) => {
    const parts = []
    for (let i = 0; i < n; i++) parts.push(pick(EN))
    return parts.join(' ')
  }
  let depth = 0
  return function nextLine() {
    const indent = '  '.repeat(depth)
    const r = rng()
    if (r < 0.12) return `${indent}// ${sentence(4 + ((rng() * 10) | 0))}.\n`
    if (r < 0.17) return '\n'
    if (r < 0.25 && depth < 4) {
      depth++
      return rng() < 0.5
        ? `${indent}function ${ident()}(${ident()}, ${ident()}) {\n`
        : `${indent}if (${expr()} ${pick(OPS)} ${expr()}) {\n`
    }
    if (r < 0.35 && depth > 0) {
      depth--
      return `${'  '.repeat(depth)}}\n`
    }
    if (r < 0.45) return `${indent}return ${expr()}\n`
    if (r < 0.55) return `${indent}throw new Error('${sentence(3 + ((rng() * 5) | 0))}')\n`
    return `${indent}const ${ident()} = ${expr()}\n`
  }
}

// --- latin1: French and German prose (no œ, €, curly quotes: all <= U+00FF) ----------
const FR = words(`
  le la les des une un et dans pour avec qui que ne pas sur était été déjà très où après
  là première être à élève fenêtre château garçon français naïve Noël hôtel forêt théâtre
  café enfant maison soleil rivière façade leçon reçu août île maïs aimé père mère frère
  génération société éducation cinéma étrange écrire répondre préféré intérêt événement
  chaîne goût plutôt bientôt même déçu à côté voilà ça Hélène Québec Montréal fidèle idée`)
const DE = words(`
  der die das und ist nicht mit auf für über Straße groß schön Mädchen Bäume Grüße Fuß weiß
  hören Brücke müssen Äpfel Öl Übung Haus Stadt Wasser heißt Käse Frühling Größe Tür fährt
  läuft früh spät München Köln Düsseldorf Zürich Bär zurück wählen gemütlich Gebäude Glück
  schließlich natürlich möglich während außerdem ungefähr Fräulein Schlüssel Geschäft`)
for (const w of [...FR, ...DE]) {
  for (const ch of w) if (ch.codePointAt(0) > 0xff) throw new Error(`latin1 word ${w} is not Latin-1`)
}

/** A text source whose first piece is `opening` (so every class shows its kind up front), then `next()`'s. */
function openingThen(opening, next) {
  let first = true
  return () => {
    if (!first) return next()
    first = false
    return opening
  }
}

function latin1Prose(rng) {
  return openingThen('Über die Straße, déjà vu à Zürich.\n\n', function nextParagraph() {
    const vocab = rng() < 0.5 ? FR : DE
    const sentences = 2 + ((rng() * 5) | 0)
    let p = ''
    for (let s = 0; s < sentences; s++) {
      const n = 6 + ((rng() * 12) | 0)
      const ws = []
      for (let i = 0; i < n; i++) ws.push(vocab[(rng() * vocab.length) | 0])
      ws[0] = ws[0][0].toUpperCase() + ws[0].slice(1)
      let sentence = ws.join(' ')
      if (rng() < 0.1) sentence = `« ${sentence} »`
      p += sentence + (rng() < 0.8 ? '. ' : rng() < 0.5 ? ' ! ' : ' ? ')
    }
    return p.trimEnd() + '\n\n'
  })
}

// --- utf8_mixed: mostly English, with accents, Greek/Cyrillic, CJK, emoji ------------
const ACCENTED = words(`café naïve résumé Zürich São Paulo piñata Ångström façade crème brûlée
  jalapeño coöperate Øresund Łódź Dvořák Kraków smørrebrød`)
const TWO_BYTE = words('Привет мир λόγος αλφάβητο Ελλάδα Москва שלום مرحبا')
const CJK_WORDS = words('東京 日本語 中文 한국어 漢字 ひらがな カタカナ 北京 大阪 文字コード')
const EMOJI = ['😀', '🚀', '👍', '🎉', '❤️', '🇫🇷', '👩‍💻', '✅', '🔥', '🙂']

function mixedText(rng) {
  return openingThen('# Notes — café, 東京, 🚀\n', function nextLine() {
    const n = 8 + ((rng() * 14) | 0)
    const ws = []
    for (let i = 0; i < n; i++) {
      const r = rng()
      if (r < 0.05) ws.push(ACCENTED[(rng() * ACCENTED.length) | 0])
      else if (r < 0.07) ws.push(TWO_BYTE[(rng() * TWO_BYTE.length) | 0])
      else if (r < 0.09) ws.push(CJK_WORDS[(rng() * CJK_WORDS.length) | 0])
      else if (r < 0.1) ws.push(EMOJI[(rng() * EMOJI.length) | 0])
      else ws.push(EN[(rng() * EN.length) | 0])
    }
    return ws.join(' ') + '.\n'
  })
}

// --- cjk: Chinese/Japanese prose (3-byte characters and CJK punctuation) -------------
const HANZI = Array.from(
  '的一是不了人我在有他这为之大来以个中上们到说国和地也子时道出而要于就下得可你年生自会那后' +
    '能对着事其里所去行过家十用发天如然作方成者多日都三小军二无同么经法当起与好看学进种将还分' +
    '此心前面又定见只主没公从已知实现本文字编码读取文件速度数据字符串程序系统测试结果标准问题',
)
const KANA = Array.from('あいうえおかきくけこさしすせそたちつてとなにぬねのはひふへほまみむめもやゆよらりるれろわをん')
const CJK_PUNCT = ['，', '、', '：', '；']

function cjkProse(rng) {
  return function nextParagraph() {
    const sentences = 2 + ((rng() * 6) | 0)
    let p = ''
    for (let s = 0; s < sentences; s++) {
      const n = 8 + ((rng() * 30) | 0)
      const japanese = rng() < 0.3
      let sentence = ''
      for (let i = 0; i < n; i++) {
        const r = rng()
        if (japanese && r < 0.4) sentence += KANA[(rng() * KANA.length) | 0]
        else sentence += HANZI[(rng() * HANZI.length) | 0]
        if (i > 2 && i < n - 2 && rng() < 0.06) sentence += CJK_PUNCT[(rng() * CJK_PUNCT.length) | 0]
        if (rng() < 0.01) sentence += String((rng() * 2100) | 0) // a year or count, in ASCII
      }
      p += rng() < 0.1 ? `「${sentence}」` : sentence + '。'
    }
    return p + '\n'
  }
}

const GENERATORS = { ascii: asciiSource, latin1: latin1Prose, utf8_mixed: mixedText, cjk: cjkProse }
const SEEDS = { ascii: 0x0a5c11, latin1: 0x1a7101, utf8_mixed: 0x0f8f8, cjk: 0xc0c1c }

/** At least `min` bytes of the class's UTF-8 text stream (a prefix-stable stream per class). */
function textBytes(content, min) {
  const next = GENERATORS[content](prng(SEEDS[content]))
  const chunks = []
  let total = 0
  while (total < min) {
    // Join ~64K chars at a time: string building per piece, Buffer encoding per chunk.
    const parts = []
    let chars = 0
    while (chars < 65536) {
      const s = next()
      parts.push(s)
      chars += s.length
    }
    const buf = Buffer.from(parts.join(''), 'utf8')
    chunks.push(buf)
    total += buf.length
  }
  return Buffer.concat(chunks, total)
}

/** Generates the bytes of one fixture (exactly `size` bytes, or a few under for valid classes). */
function generate(content, size) {
  if (content === 'invalid') {
    // utf8_mixed, then one 0xFF dropped at a pseudo-random offset of every 4 KiB block
    // (it may land inside a multi-byte character: that is a stray byte too). A block
    // shorter than 4 KiB, such as a whole 64 B file, still gets its stray byte.
    const src = textBytes('utf8_mixed', size)
    const out = Buffer.allocUnsafe(size)
    const rng = prng(0xff)
    let s = 0
    for (let blockStart = 0; blockStart < size; blockStart += 4096) {
      const len = Math.min(4096, size - blockStart)
      const pos = blockStart + ((rng() * len) | 0)
      s += src.copy(out, blockStart, s, s + (pos - blockStart))
      out[pos] = 0xff
      s += src.copy(out, pos + 1, s, s + (blockStart + len - pos - 1))
    }
    return out
  }
  // Valid classes: cut at a character boundary at or below `size` so the file stays
  // valid UTF-8 (up to 3 bytes under). textBytes returns > size bytes, so buf[end] exists.
  const buf = textBytes(content, size + 1)
  let end = size
  while (end > 0 && (buf[end] & 0xc0) === 0x80) end--
  return buf.subarray(0, end)
}

/** Is an existing cached file what generate() would produce (cheap structural checks)? */
function looksValid(file, content, size) {
  let st
  try {
    st = fs.statSync(file)
  } catch {
    return false
  }
  if (content === 'invalid' ? st.size !== size : st.size > size || st.size < size - 3) return false
  return isUtf8(fs.readFileSync(file)) === (content !== 'invalid')
}

/**
 * Returns { file, bytes, generated } for a content × size, generating it if the cache
 * lacks it (written to a temp name, then renamed, so concurrent runs never see a
 * partial file). `onGenerate` is called first when it has to generate.
 */
function ensureFixture(content, size, onGenerate = () => {}) {
  if (!(content in CONTENTS)) throw new Error(`unknown content ${content}`)
  const dir = fixtureDir()
  const file = path.join(dir, `v${GENERATOR_VERSION}-${content}-${size}.txt`)
  const generated = !looksValid(file, content, size)
  if (generated) {
    onGenerate()
    fs.mkdirSync(dir, { recursive: true })
    const data = generate(content, size)
    if (isUtf8(data) !== (content !== 'invalid')) throw new Error(`generator bug: ${content} ${size}`)
    const tmp = `${file}.${process.pid}.tmp`
    fs.writeFileSync(tmp, data)
    fs.renameSync(tmp, file)
  }
  return { file, bytes: fs.statSync(file).size, generated }
}

module.exports = { CONTENTS, SIZES, cacheDir, fixtureDir, ensureFixture, generate, prng }
