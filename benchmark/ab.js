'use strict'
// A/B of two builds of the addon in one process: for changes of a few percent,
// which the read matrix (separate loops per contender, whose small cells move
// by tens of percent from run to run) cannot resolve. Both binaries are loaded side by side and
// their raw `readPath` is timed in alternating blocks of calls, so both see the
// same machine, heap and page-cache state; the report is each build's median
// block and in how many blocks B beat A.
//
//   cp readfile-utf8.*.node /tmp/a.node   # before the change
//   npm run build && cp readfile-utf8.*.node /tmp/b.node
//   node benchmark/ab.js /tmp/a.node /tmp/b.node --content cjk --size 1KiB,16KiB
const path = require('node:path')
const { parseArgs } = require('node:util')

const { CONTENTS, ensureFixture } = require('./fixtures')
const { parseSize, sizeLabel } = require('./format')
const { parseList } = require('./options')
const { median } = require('./timing')

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    content: { type: 'string', default: 'ascii' },
    size: { type: 'string', default: '64B,1KiB' },
    blocks: { type: 'string', default: '30' },
    'block-ms': { type: 'string', default: '20' },
  },
})
if (positionals.length !== 2) {
  process.stderr.write('usage: node benchmark/ab.js A.node B.node [--content c,..] [--size 64B,..] [--blocks 30] [--block-ms 20]\n')
  process.exit(2)
}
const builds = positionals.map((file) => require(path.resolve(file)))
const blocks = Number(values.blocks)
const blockMs = Number(values['block-ms'])

let sink = 0

/** ns per call of `n` calls of `read(file)`. */
function timeBlock(read, file, n) {
  const start = process.hrtime.bigint()
  for (let i = 0; i < n; i++) sink += read(file, 0).length
  return Number(process.hrtime.bigint() - start) / n
}

for (const content of parseList(values.content)) {
  if (!(content in CONTENTS)) throw new Error(`unknown content '${content}'`)
  for (const size of parseList(values.size).map(parseSize)) {
    const { file } = ensureFixture(content, size)
    const [a, b] = builds.map((build) => build.readPath)
    if (a(file, 0) !== b(file, 0)) throw new Error(`the builds disagree on ${file}`)
    // Warm-up, which also sizes a block to about blockMs.
    const warm = timeBlock(a, file, 200) + timeBlock(b, file, 200)
    const n = Math.max(10, Math.round((blockMs * 1e6) / (warm / 2)))
    const times = [[], []]
    for (let r = 0; r < blocks; r++) {
      const order = r % 2 ? [1, 0] : [0, 1]
      for (const i of order) times[i].push(timeBlock(i ? b : a, file, n))
    }
    const [ma, mb] = times.map(median)
    const wins = times[1].filter((t, i) => t < times[0][i]).length
    console.log(
      `${content.padEnd(10)} ${sizeLabel(size).padStart(7)}  A ${ma.toFixed(0).padStart(8)} ns  B ${mb.toFixed(0).padStart(8)} ns` +
        `  B/A ${(mb / ma).toFixed(3)}  B faster in ${wins}/${blocks} blocks of ${n} calls`,
    )
  }
}
if (sink === 0) console.log('(no bytes read)')
