'use strict'
// readFileUtf8 on this Node against Bun's fs.readFileSync(p, 'utf8') and this
// Node's, each in a plain loop in a fresh process (loop-child.js): with a small
// heap, and with a heap holding LOADED_HEAP_MIB of live objects.
//
//   node benchmark/bun.js [--bun path] [--quick] [--content a,b] [--size 1MiB,4MiB]
//        [--loop-ms ms] [--rounds n]
//
// Without --bun (or $BUN), Bun comes from the npm registry (scripts/get-runtime.sh bun).
const path = require('node:path')
const { findBun } = require('./runtimes')

const { ensureFixture } = require('./fixtures')
const { MiB, sizeLabel, fmtTime, fmtRatio, table } = require('./format')
const { suiteOptions } = require('./options')
const { inChildren, median, LOADED_HEAP_MIB } = require('./timing')

const opts = suiteOptions(
  'bun.js',
  { bun: { type: 'string' }, 'loop-ms': { type: 'string' }, rounds: { type: 'string' } },
  { sizes: [MiB, 4 * MiB], quickSizes: [MiB] },
)
const loopMs = opts.number('loop-ms', 250, 100)
const rounds = Math.round(opts.number('rounds', 3, 1))

/** ns per call of each contender's loop over `file` (by name), median of `rounds` fresh processes each. */
function timeLoops(byName, file, heapMib) {
  const runs = inChildren(Object.keys(byName), rounds, loopArgv(byName, file, heapMib), [], (name) => byName[name].runtime)
  return Object.keys(byName).map((name) => median(runs[name].map((r) => r.nsPerCall)))
}

/** ns per call that V8's GC took in our loop over `file`, from `rounds` processes of their own (loop-child.js --gc). */
function ourGcTime(byName, file, heapMib) {
  const argv = loopArgv(byName, file, heapMib, ['--gc'])
  return median(inChildren(['ours'], rounds, argv).ours.map((r) => r.gcNsPerCall))
}

/** loop-child.js's arguments for a contender by name, then `more`. */
function loopArgv(byName, file, heapMib, more = []) {
  return (name) => [path.join(__dirname, 'loop-child.js'), byName[name].reader, file, '--ms', String(loopMs), '--heap-mib', String(heapMib), ...more]
}

function main() {
  const { bin: bun, version: bunVersion } = findBun({ given: opts.values.bun, suite: 'bun', required: true })
  const contenders = {
    ours: { runtime: process.execPath, reader: 'ours' },
    fs: { runtime: process.execPath, reader: 'fs' },
    Bun: { runtime: bun, reader: 'fs' },
  }
  const out = [
    `readFileUtf8 on Node ${process.version} against fs.readFileSync(p, 'utf8') on the same Node and on Bun ${bunVersion}: ` +
      `a ${loopMs} ms plain loop per reader, each in a fresh process, median of ${rounds} round(s); ` +
      `"loaded": the process first fills its heap with ~${LOADED_HEAP_MIB} MiB of live objects. ` +
      'ours / Bun is our time over Bun\'s (under 1.00 is faster than Bun). ' +
      'ours: GC is the part of our time per call that V8\'s garbage collector took, collecting the loop\'s strings ' +
      '(v8.GCProfiler, in processes of their own, since it slows each GC).',
    '',
  ]
  const rows = []
  for (const content of opts.contents) {
    for (const size of opts.sizes) {
      const { file } = ensureFixture(content, size)
      const row = [content, sizeLabel(size)]
      for (const heapMib of [0, LOADED_HEAP_MIB]) {
        process.stderr.write(`bun: ${content} ${sizeLabel(size)}${heapMib ? ' loaded' : ''}\n`)
        const [ours, fs, b] = timeLoops(contenders, file, heapMib)
        const gc = ourGcTime(contenders, file, heapMib)
        row.push(fmtTime(ours), fmtTime(gc), fmtTime(fs), fmtTime(b), (ours / b).toFixed(2), fmtRatio(fs / ours))
      }
      rows.push(row)
    }
  }
  const columns = [['content', 'l'], ['size', 'l']]
  for (const heap of ['', 'loaded ']) {
    columns.push([`${heap}ours`, 'r'], [`${heap}ours: GC`, 'r'], [`${heap}fs`, 'r'], [`${heap}Bun`, 'r'], [`${heap}ours / Bun`, 'r'], [`${heap}fs / ours`, 'r'])
  }
  out.push(table(columns, rows))
  process.stdout.write(out.join('\n') + '\n')
}

main()
