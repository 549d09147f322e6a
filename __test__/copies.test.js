'use strict'
// Which strings are copies in V8's heap and which are external (V8 counts
// their bytes in process.memoryUsage().external): the addon's setOtherRuntime
// (what lib/native.js calls under Bun and Deno, whose collectors free an
// external string's buffer late), and the lean mode's rule for wide text.
// Each in a fresh process, every string held, so none is finalized while it
// counts; every string is fs's.
const { test } = require('node:test')
const assert = require('node:assert/strict')
const fs = require('node:fs')
const path = require('node:path')
const { spawnSync } = require('node:child_process')
const { scratch } = require('./helpers')

const ROOT = path.join(__dirname, '..')
const NODE_26 = Number(process.versions.node.split('.')[0]) >= 26
// Node 26 makes strings of this many characters or more external (EXTERN_APEX), earlier Nodes none.
const FS_EXTERNAL_UNITS = 0xfbee9

/**
 * Runs `cases` ([label, 'mode', 'expression reading file'] with `api`,
 * `native`, `file`, `bytes` in scope) in a child: the external bytes each
 * case's 4 calls added, and whether every string was fs's.
 */
function externalGrowth(file, cases, prelude = '') {
  const script = `
    const fs = require('node:fs')
    const api = require(${JSON.stringify(ROOT)})
    const native = require(${JSON.stringify(path.join(ROOT, 'lib', 'native'))})
    const file = ${JSON.stringify(file)}
    const expected = fs.readFileSync(file, 'utf8')
    const bytes = fs.readFileSync(file)
    ${prelude}
    const kept = []
    ;(async () => {
      const growth = {}
      for (const [label, mode, read] of ${JSON.stringify(cases)}) {
        api.setMemoryMode(mode)
        const before = process.memoryUsage().external
        for (let i = 0; i < 4; i++) kept.push(await eval(read))
        await new Promise(setImmediate) // a sync batch's bytes are reported after it returns
        growth[label] = process.memoryUsage().external - before
      }
      process.stdout.write(JSON.stringify({ growth, same: kept.every((text) => text === expected), length: expected.length }))
    })()`
  const r = spawnSync(process.execPath, ['-e', script], { encoding: 'utf8' })
  assert.equal(r.status, 0, r.stderr)
  return JSON.parse(r.stdout)
}

test("after setOtherRuntime (Bun, Deno) every API's large strings are copies, in both modes, and fs's", () => {
  const texts = {
    ascii: Buffer.alloc(2 << 20, 'plain ascii text\n'),
    latin1: Buffer.from('déjà vu à Noël\n'.repeat(140000)),
    wide: Buffer.from('жизнь, 生活, ζωή\n'.repeat(70000)),
  }
  for (const [kind, content] of Object.entries(texts)) {
    const file = scratch(`copies-all-${kind}.txt`)
    fs.writeFileSync(file, content)
    const cases = []
    for (const mode of ['fast', 'lean']) {
      cases.push(
        [`${mode} readFileUtf8`, mode, 'api.readFileUtf8(file)'],
        [`${mode} readFileSync drop-in`, mode, "api.readFileSync(file, 'utf8')"],
        [`${mode} decodeUtf8`, mode, 'api.decodeUtf8(bytes)'],
        [`${mode} readFileUtf8Async`, mode, 'api.readFileUtf8Async(file)'],
        [`${mode} readFilesUtf8`, mode, 'api.readFilesUtf8([file, file])[1]'],
        [`${mode} readFilesUtf8Async`, mode, 'api.readFilesUtf8Async([file, file]).then((all) => all[0])'],
      )
    }
    const { growth, same, length } = externalGrowth(file, cases, 'native.setOtherRuntime()')
    assert.ok(same, `${kind}: fs's strings`)
    // Other small external allocations may come and go meanwhile: less than one string's worth.
    for (const [label, bytes] of Object.entries(growth)) assert.ok(bytes < length, `${kind} ${label}: ${bytes} external bytes after 4 calls`)
  }
})

test('without setOtherRuntime the same large strings are external (what the test above tells apart)', () => {
  const file = scratch('copies-none.txt')
  fs.writeFileSync(file, Buffer.from('жизнь, 生活, ζωή\n'.repeat(70000)))
  const { growth, same, length } = externalGrowth(file, [
    ['readFileUtf8Async', 'fast', 'api.readFileUtf8Async(file)'],
    ['readFilesUtf8', 'fast', 'api.readFilesUtf8([file, file])[1]'],
  ])
  assert.ok(same, "fs's strings")
  for (const [label, bytes] of Object.entries(growth)) assert.ok(bytes >= 4 * length, `${label}: ${bytes} external bytes after 4 calls`)
  // Large ASCII text too, decodeUtf8's among it (made from the caller's bytes, which it copies first).
  const ascii = scratch('copies-none-ascii.txt')
  fs.writeFileSync(ascii, 'plain ASCII text\n'.repeat(1 << 18))
  const plain = externalGrowth(ascii, [
    ['readFileUtf8', 'fast', 'api.readFileUtf8(file)'],
    ['decodeUtf8', 'fast', 'api.decodeUtf8(bytes)'],
  ])
  assert.ok(plain.same, "fs's strings")
  for (const [label, bytes] of Object.entries(plain.growth)) assert.ok(bytes >= 4 * plain.length, `ASCII ${label}: ${bytes} external bytes after 4 calls`)
})

test("small strings: a sync call's are copies, a batch's and an async read's external (README: every string of a batch or an async read)", () => {
  for (const [kind, content] of [['ascii', Buffer.alloc(16 << 10, 'plain ascii text\n')], ['wide', Buffer.from('жизнь, 生活, ζωή\n'.repeat(700))]]) {
    const file = scratch(`copies-small-${kind}.txt`)
    fs.writeFileSync(file, content)
    const { growth, same, length } = externalGrowth(file, [
      ['readFileUtf8', 'fast', 'api.readFileUtf8(file)'],
      ['readFileUtf8Async', 'fast', 'api.readFileUtf8Async(file)'],
      ['readFilesUtf8', 'fast', 'api.readFilesUtf8([file, file])[1]'],
      ['readFilesUtf8Async', 'fast', 'api.readFilesUtf8Async([file, file]).then((all) => all[0])'],
    ])
    assert.ok(same, `${kind}: fs's strings`)
    assert.ok(growth.readFileUtf8 < length, `${kind} readFileUtf8: ${growth.readFileUtf8} external bytes after 4 calls`)
    for (const label of ['readFileUtf8Async', 'readFilesUtf8', 'readFilesUtf8Async']) {
      assert.ok(growth[label] >= 4 * length, `${kind} ${label}: ${growth[label]} external bytes after 4 calls`)
    }
  }
})

test("lean: a sync call's wide (UTF-16) string is external from fs's own count of characters on, not of bytes", () => {
  // Characters of two UTF-8 bytes and one UTF-16 unit each: fewer than
  // EXTERN_APEX characters (fs copies them), more than a quarter as many.
  const below = scratch('copies-lean-wide-below.txt')
  fs.writeFileSync(below, Buffer.from('ж'.repeat(Math.floor(FS_EXTERNAL_UNITS * 0.6))))
  const at = scratch('copies-lean-wide-at.txt')
  fs.writeFileSync(at, Buffer.from('ж'.repeat(FS_EXTERNAL_UNITS)))
  const read = [
    ['readFileUtf8', 'lean', 'api.readFileUtf8(file)'],
    ['decodeUtf8', 'lean', 'api.decodeUtf8(bytes)'],
  ]
  const copied = externalGrowth(below, read)
  assert.ok(copied.same, "fs's strings")
  for (const [label, bytes] of Object.entries(copied.growth)) {
    assert.ok(bytes < copied.length, `${label}, ${copied.length} characters: ${bytes} external bytes, copies as fs's`)
  }
  const external = externalGrowth(at, read)
  assert.ok(external.same, "fs's strings")
  for (const [label, bytes] of Object.entries(external.growth)) {
    if (NODE_26) assert.ok(bytes >= 4 * external.length, `${label}, ${external.length} characters: ${bytes} external bytes, external as fs's`)
    else assert.ok(bytes < external.length, `${label}, ${external.length} characters: ${bytes} external bytes, copies as fs's`)
  }
})

test("while the JS heap holds more than the table's EXTERNAL_HEAP_BELOW, every API's large strings are copies (README: the heap's own size caps external memory)", () => {
  const file = scratch('copies-big-heap.txt')
  fs.writeFileSync(file, Buffer.from('жизнь, 生活, ζωή\n'.repeat(70000)))
  // Small objects kept alive, beyond the limit of every Node line.
  const prelude = 'globalThis.kept = Array.from({ length: 5e6 }, (_, i) => ({ i }))'
  const { growth, same, length } = externalGrowth(file, [
    ['readFileUtf8', 'fast', 'api.readFileUtf8(file)'],
    ['readFileUtf8Async', 'fast', 'api.readFileUtf8Async(file)'],
    ['readFilesUtf8', 'fast', 'api.readFilesUtf8([file])[0]'],
  ], prelude)
  assert.ok(same, "fs's strings")
  for (const [label, bytes] of Object.entries(growth)) assert.ok(bytes < length, `${label}: ${bytes} external bytes after 4 calls with a large heap`)
})
