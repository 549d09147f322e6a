'use strict'
// mixed: files of every kind and size read one after another in one process,
// as a tool reading a source tree reads them, rather than one cell at a time.
//
// - passes: a shuffled sequence of --reads reads (fixed seed, the same for every
//   reader) over the five kinds of text from 64 B to 4 MiB, most of them small
//   as in source trees; each reader in fresh processes (--rounds, in turns), a
//   pass untimed then --passes timed ones: the median and mean pass, the peak
//   RSS, the RSS while one pass's strings are all held, and the RSS after a GC
//   and a second of idleness. Readers: fs.readFileSync(p, 'utf8'),
//   fs.readFileSync(p).toString(), ours (the default), ours in the lean memory
//   mode, and Bun's readFileSync (scripts/get-runtime.sh bun, or --bun path); under
//   Deno (scripts/get-runtime.sh deno, or --deno path), its fs.readFileSync(p, 'utf8'),
//   its fs.readFileSync(p).toString() and ours.
// - history: every cell of a read matrix (kind × size) in one process, in a
//   shuffled order, against the same cell alone in a fresh process: what a
//   cell costs after the others have run. Both in --history-rounds
//   processes, round by round (the sequence, then each cell alone), each
//   cell's median taken: one run of a cell varies by more than the 1.2× this
//   view is read against (a whole process can run a small cell ~1.5× slower
//   than the next, after nothing or after anything), and the machine's state
//   drifts (after the passes view, for one).
//
//   node benchmark/mixed.js [--quick] [--views passes,history] [--reads n] [--passes n]
//        [--rounds n] [--history-rounds n] [--loop-ms ms] [--seed n] [--bun path | --no-bun] [--deno path | --no-deno] [--content a,b]
//        [--builds A.node,B.node@NAME=value;NAME=value]
//
// --builds: the passes of ours with each of these addon binaries (loaded
// through READFILE_UTF8_NATIVE_LIBRARY_PATH; after an @, thresholds a bench
// build takes from READFILE_UTF8_TUNE) instead of the other readers, in
// turns in fresh processes: an A/B of two builds on the whole sequence.
const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const { findBun, findDeno, DENO_RUN } = require('./runtimes')

const { ensureFixture, prng } = require('./fixtures')
const { KiB, MiB, sizeLabel, fmtTime, fmtMiB, fmtRatio, table } = require('./format')
const { suiteOptions, parseList } = require('./options')
const { inChildren, median } = require('./timing')

const opts = suiteOptions('mixed.js', {
  views: { type: 'string' },
  reads: { type: 'string' },
  passes: { type: 'string' },
  rounds: { type: 'string' },
  'history-rounds': { type: 'string' },
  'loop-ms': { type: 'string' },
  seed: { type: 'string' },
  bun: { type: 'string' },
  'no-bun': { type: 'boolean', default: false },
  deno: { type: 'string' },
  'no-deno': { type: 'boolean', default: false },
  builds: { type: 'string' },
})
// Each build is a binary, optionally with thresholds for a bench build
// (`file.node@NAME=value;NAME=value`, as READFILE_UTF8_TUNE takes them).
const builds = parseList(opts.values.builds).map((entry) => {
  const [file, tune] = entry.split('@')
  return { file: path.resolve(file), tune: tune?.replaceAll(';', ',') }
})
const views = parseList(opts.values.views ?? 'passes,history')
const reads = Math.round(opts.number('reads', 1000, 400))
const passCount = Math.round(opts.number('passes', 5, 3))
const rounds = Math.round(opts.number('rounds', 3, 1))
const historyRounds = Math.round(opts.number('history-rounds', 5, 1))
const loopMs = opts.number('loop-ms', 150, 60)
const seed = Math.round(opts.number('seed', 20261205))

/** Sizes of the sequence and their shares: 80 % of reads at 16 KiB or less, as in source trees. */
const SIZE_MIX = [
  [64, 0.2],
  [KiB, 0.25],
  [4 * KiB, 0.2],
  [16 * KiB, 0.15],
  [64 * KiB, 0.1],
  [256 * KiB, 0.06],
  [MiB, 0.03],
  [4 * MiB, 0.01],
]
/** The history view's cells: every kind at these sizes. */
const HISTORY_SIZES = [KiB, 16 * KiB, 256 * KiB, MiB, 4 * MiB]

function shuffle(items, rng) {
  for (let i = items.length - 1; i > 0; i--) {
    const j = Math.floor(rng() * (i + 1))
    ;[items[i], items[j]] = [items[j], items[i]]
  }
  return items
}

/** The sequence: `reads` files, sizes by SIZE_MIX (exact counts), kinds even, shuffled. */
function sequence(rng) {
  const files = []
  for (const [size, share] of SIZE_MIX) {
    const count = Math.max(1, Math.round(share * reads))
    for (let i = 0; i < count; i++) files.push(ensureFixture(opts.contents[i % opts.contents.length], size).file)
  }
  return shuffle(files, rng)
}

let scratch
/** A JSON file in this run's scratch folder holding `value`. */
function jsonFile(name, value) {
  if (scratch === undefined) {
    scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'readfile-utf8-mixed-'))
    process.on('exit', () => fs.rmSync(scratch, { recursive: true, force: true }))
  }
  const file = path.join(scratch, name)
  fs.writeFileSync(file, JSON.stringify(value))
  return file
}

const CHILD = path.join(__dirname, 'mixed-child.js')

function passesView(out) {
  const list = jsonFile('sequence.json', sequence(prng(seed)))
  const { bin: bun, version: bunVersion } = findBun({ given: opts.values.bun, skip: opts.values['no-bun'] || builds.length > 0, suite: 'mixed' }) ?? {}
  const { bin: deno, version: denoVersion } = findDeno({ given: opts.values.deno, skip: opts.values['no-deno'] || builds.length > 0, suite: 'mixed' }) ?? {}
  const onDeno = deno ? ['Deno fs', 'Deno toString', 'Deno ours'] : []
  const readers = builds.length ? ['fs', ...builds.map((_, i) => `build ${i + 1}`)] : ['fs', 'toString', 'ours', 'lean', ...(bun ? ['Bun'] : []), ...onDeno]
  const runtime = (name) => (name === 'Bun' ? bun : onDeno.includes(name) ? deno : process.execPath)
  const childReader = (name) => (name === 'Bun' ? 'fs' : name.startsWith('build') ? 'ours' : name.replace(/^Deno /, ''))
  const argv = (name) => [...(onDeno.includes(name) ? DENO_RUN : []), CHILD, 'passes', childReader(name), list, '--passes', String(passCount)]
  const env = (name) => {
    if (!name.startsWith('build ')) return process.env
    const { file, tune } = builds[Number(name.slice(6)) - 1]
    return { ...process.env, READFILE_UTF8_NATIVE_LIBRARY_PATH: file, ...(tune ? { READFILE_UTF8_TUNE: tune } : {}) }
  }
  process.stderr.write(`mixed: passes, ${readers.join(', ')} × ${rounds} round(s)\n`)
  const runs = {}
  for (const name of readers) runs[name] = []
  for (let r = 0; r < rounds; r++) {
    const got = inChildren(readers, 1, argv, [], runtime, env)
    for (const name of readers) runs[name].push(...got[name])
  }
  const stats = Object.fromEntries(
    readers.map((name) => {
      const passMs = runs[name].flatMap((run) => run.passMs)
      return [
        name,
        {
          median: median(passMs),
          mean: passMs.reduce((a, b) => a + b, 0) / passMs.length,
          peakRss: median(runs[name].map((run) => run.peakRss)),
          heldRss: median(runs[name].map((run) => run.heldRss)),
          idleRss: median(runs[name].map((run) => run.idleRss)),
        },
      ]
    }),
  )
  const label = {
    fs: "fs.readFileSync(p, 'utf8')",
    toString: 'fs.readFileSync(p).toString()',
    ours: 'ours (default)',
    lean: "ours, setMemoryMode('lean')",
    Bun: `Bun ${bunVersion} readFileSync`,
    'Deno fs': `Deno ${denoVersion}: fs.readFileSync(p, 'utf8')`,
    'Deno toString': `Deno ${denoVersion}: fs.readFileSync(p).toString()`,
    'Deno ours': `Deno ${denoVersion}: ours`,
  }
  builds.forEach(({ file, tune }, i) => (label[`build ${i + 1}`] = `ours, ${path.basename(file)}${tune ? ` (${tune})` : ''}`))
  const rows = readers.map((name) => {
    const s = stats[name]
    return [
      label[name],
      `${s.median.toFixed(1)} ms`,
      `${s.mean.toFixed(1)} ms`,
      fmtRatio(stats.fs.median / s.median),
      fmtRatio(stats.fs.mean / s.mean),
      fmtMiB(s.peakRss),
      fmtMiB(s.heldRss),
      fmtMiB(s.idleRss),
    ]
  })
  const files = JSON.parse(fs.readFileSync(list, 'utf8'))
  const bytes = files.reduce((sum, f) => sum + fs.statSync(f).size, 0)
  out.push(
    '#### Mixed sequence: one pass over files of every kind and size',
    '',
    `${files.length} reads per pass (${fmtMiB(bytes)}), ${SIZE_MIX.map(([size, share]) => `${Math.round(share * 100)} % ${sizeLabel(size)}`).join(', ')}; ` +
      `kinds ${opts.contents.join(', ')}; shuffled with seed ${seed}, the same sequence for every reader. ` +
      `Each reader in ${rounds} fresh process(es), in turns: a pass untimed, then ${passCount} timed. ` +
      'Speed-ups are fs over the reader, on medians and on means. peak: the peak RSS; held: RSS while one pass\'s strings are all held; ' +
      'idle: RSS after they are dropped, a GC and 1 s idle.' +
      (deno ? " Under Deno, fs is Deno's node:fs, and ratios in this table are over Node's fs." : ''),
    '',
    table(
      [['reader', 'l'], ['median pass', 'r'], ['mean pass', 'r'], ['fs / it (median)', 'r'], ['fs / it (mean)', 'r'], ['peak', 'r'], ['held', 'r'], ['idle', 'r']],
      rows,
    ),
    '',
  )
  if (builds.length) {
    const [a, b] = [stats['build 1'], stats['build 2']]
    if (b) out.push(`Build 2 over build 1: ${fmtRatio(b.median / a.median)} of its median pass, ${fmtRatio(b.mean / a.mean)} of its mean.`, '')
    return
  }
  const ours = stats.ours
  const vs = (name) => (stats[name] ? `${fmtRatio(stats[name].median / ours.median)} ${name} (median), ${fmtRatio(stats[name].mean / ours.mean)} (mean)` : null)
  out.push(`Ours (default) is ${[vs('fs'), vs('toString'), vs('Bun')].filter(Boolean).join('; ')}. ${memoryBeside('fs', ours, stats.fs)}`, '')
  if (deno) {
    const [own, fsOn, toStringOn] = [stats['Deno ours'], stats['Deno fs'], stats['Deno toString']]
    out.push(
      `Under Deno ${denoVersion}, ours is ${fmtRatio(fsOn.median / own.median)} its fs (median), ${fmtRatio(fsOn.mean / own.mean)} (mean); ` +
        `${fmtRatio(toStringOn.median / own.median)} its toString (median). ${memoryBeside('its fs', own, fsOn)}`,
      '',
    )
  }
}

/** The sentence on a reader's memory (`it`) beside another's (`base`, named `name`). */
function memoryBeside(name, it, base) {
  return (
    `Memory beside ${name}: peak ${fmtRatio(it.peakRss / base.peakRss)} (${signed(it.peakRss - base.peakRss)}), ` +
    `held ${fmtRatio(it.heldRss / base.heldRss)}, idle ${signed(it.idleRss - base.idleRss)}.`
  )
}

const signed = (bytes) => `${bytes >= 0 ? '+' : '−'}${fmtMiB(Math.abs(bytes))}`

function historyView(out) {
  const cells = []
  for (const content of opts.contents) for (const size of HISTORY_SIZES) cells.push({ content, size, file: ensureFixture(content, size).file })
  shuffle(cells, prng(seed + 1))
  const together = jsonFile('cells.json', cells.map((c) => c.file))
  const names = ['ours', 'fs']
  process.stderr.write(`mixed: history, ${cells.length} cells in one process and each alone\n`)
  const ones = cells.map((cell, i) => jsonFile(`cell-${i}.json`, [cell.file]))
  const loop = (list) => (name) => [CHILD, 'cells', name, list, '--loop-ms', String(loopMs)]
  // Per reader: the sequence's runs (ns per call of each cell), and each cell's runs alone.
  const sequenceRuns = Object.fromEntries(names.map((name) => [name, []]))
  const aloneRuns = Object.fromEntries(names.map((name) => [name, cells.map(() => [])]))
  for (let round = 0; round < historyRounds; round++) {
    // Readers in turns: the first reader changes every round.
    const order = round % 2 ? [...names].reverse() : names
    const sequence = inChildren(order, 1, loop(together))
    for (const name of names) sequenceRuns[name].push(sequence[name][0])
    ones.forEach((one, i) => {
      const got = inChildren(order, 1, loop(one))
      for (const name of names) aloneRuns[name][i].push(got[name][0][0])
    })
  }
  const after = Object.fromEntries(names.map((name) => [name, cells.map((_, i) => median(sequenceRuns[name].map((run) => run[i])))]))
  const alone = Object.fromEntries(names.map((name) => [name, aloneRuns[name].map(median)]))
  const ratio = (name, i) => after[name][i] / alone[name][i]
  // The lowest run of each: a process that runs slow throughout (as one in a
  // few does here, alone or not) drops out, a cost the cells before leave stays.
  const lowestRatio = (name, i) => Math.min(...sequenceRuns[name].map((run) => run[i])) / Math.min(...aloneRuns[name][i])
  const rows = cells.map((cell, i) => [
    String(i + 1),
    cell.content,
    sizeLabel(cell.size),
    fmtTime(alone.ours[i]),
    fmtTime(after.ours[i]),
    fmtRatio(ratio('ours', i)),
    fmtRatio(lowestRatio('ours', i)),
    fmtTime(alone.fs[i]),
    fmtTime(after.fs[i]),
    fmtRatio(ratio('fs', i)),
    fmtRatio(lowestRatio('fs', i)),
    fmtRatio(after.fs[i] / after.ours[i]),
  ])
  const worst = (name, of = ratio) => Math.max(...cells.map((_, i) => of(name, i)))
  out.push(
    '#### History: the matrix\'s cells one after another in one process, against each alone',
    '',
    `Each cell a ${loopMs} ms loop (median batch per call), in the order below (seed ${seed + 1}); alone: the same loop in a fresh process; ` +
      `each the median of ${historyRounds} such process(es), round by round. ` +
      'after / alone over 1.00× is what the cells before it cost this one; (lowest): the same of the fastest process of each, ' +
      'which leaves out a process that ran slow throughout.',
    '',
    table(
      [['#', 'r'], ['content', 'l'], ['size', 'l'], ['ours alone', 'r'], ['ours after', 'r'], ['after / alone', 'r'], ['(lowest)', 'r'], ['fs alone', 'r'], ['fs after', 'r'], ['fs after / alone', 'r'], ['(lowest)', 'r'], ['fs / ours after', 'r']],
      rows,
    ),
    '',
    `Largest after / alone: ours ${fmtRatio(worst('ours'))} (lowest: ${fmtRatio(worst('ours', lowestRatio))}), ` +
      `fs ${fmtRatio(worst('fs'))} (lowest: ${fmtRatio(worst('fs', lowestRatio))}).`,
    '',
  )
}

function main() {
  const out = []
  for (const view of views) {
    if (view === 'passes') passesView(out)
    else if (view === 'history') historyView(out)
    else throw new Error(`unknown view ${view} (passes, history)`)
  }
  process.stdout.write(out.join('\n'))
}

main()
