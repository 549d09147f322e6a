'use strict'
// One contender of the read matrix, timed in a process of its own (bench.js
// --isolate runs it once per round): its heap holds only its own strings, as in
// a user's process that reads with it alone.
//
//   node benchmark/contender.js <ours|fs|buffer> <file> <budgetMs> <minSamples> <warmupMs> <batched 0|1>
//
// Prints {"samples": [ns per call, ...], "calls": n} as one JSON line.
const fs = require('node:fs')

const { measureSamples } = require('./measure')

/** What each contender does with the file: the calls the read matrix (and sustained.js) compare. */
const CONTENDERS = {
  ours: (file) => {
    const { readFileUtf8 } = require('..')
    return () => readFileUtf8(file)
  },
  fs: (file) => () => fs.readFileSync(file, 'utf8'),
  buffer: (file) => () => fs.readFileSync(file),
}

async function main() {
  const [name, file, budgetMs, minSamples, warmupMs, batched] = process.argv.slice(2)
  if (!CONTENDERS[name] || !file || !['0', '1'].includes(batched)) {
    throw new Error(`usage: node benchmark/contender.js <${Object.keys(CONTENDERS).join('|')}> <file> <budgetMs> <minSamples> <warmupMs> <batched 0|1>`)
  }
  const contender = { name, fn: CONTENDERS[name](file) }
  const { samples, calls } = await measureSamples([contender], {
    budgetMs: Number(budgetMs),
    rounds: 1,
    minSamples: Number(minSamples),
    warmupMs: Number(warmupMs),
    batched: batched === '1',
  })
  process.stdout.write(JSON.stringify({ samples: samples[name], calls: calls[name] }) + '\n')
}

if (require.main === module) {
  main().catch((err) => {
    process.stderr.write(`${err.stack || err}\n`)
    process.exitCode = 1
  })
}

module.exports = { CONTENDERS }
