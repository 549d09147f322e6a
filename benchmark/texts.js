'use strict'
// The in-memory texts of the async and decode benchmarks: deterministic
// repetitions of one line per class (the read matrix has its own, richer
// fixtures in fixtures.js).

const UNITS = {
  ascii: 'const answer = compute(42); // plain source text\n',
  latin1: 'Déjà vu à Noël, über Straße, ça coûte très cher.\n',
  utf16: 'Mixed: café, 中文, 日本語, emoji 😀🎉 and ASCII.\n',
  invalid: 'Déjà vu à Noël, über Straße, ça coûte très cher.\n',
}

/** `size` bytes of class `kind`: ASCII source, Latin-1 prose, mixed CJK/emoji, Latin-1 with stray 0xFF bytes. */
function content(kind, size) {
  const buf = Buffer.alloc(size)
  const u = Buffer.from(UNITS[kind])
  for (let i = 0; i < size; i += u.length) u.copy(buf, i)
  if (kind === 'invalid') for (let i = 1234; i < size; i += 4099) buf[i] = 0xff
  return buf
}

module.exports = { content, KINDS: Object.keys(UNITS) }
