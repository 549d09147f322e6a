'use strict'
// The command line of a suite script. Every suite takes --quick, --content,
// --size and --memory-mode, so that bench.js can hand the same options to each
// suite it runs.
const { parseArgs } = require('node:util')

const { CONTENTS } = require('./fixtures')
const { parseSize } = require('./format')

/** 'a,b' or ['a,b', 'c'] (an option given more than once) -> ['a', 'b', 'c']. */
function parseList(values) {
  return [values ?? []]
    .flat()
    .flatMap((s) => s.split(','))
    .map((s) => s.trim())
    .filter(Boolean)
}

/**
 * Parses process.argv for a suite: `extra` are its own parseArgs options (all
 * strings or booleans), `defaults` its { sizes, quickSizes }. Returns
 * { values, quick, contents, sizes, number(name, full, quick) }; a bad command
 * line prints why and exits with status 2.
 */
function suiteOptions(script, extra = {}, defaults = {}) {
  try {
    const { values } = parseArgs({
      options: {
        quick: { type: 'boolean', default: false },
        content: { type: 'string', multiple: true },
        size: { type: 'string', multiple: true },
        'memory-mode': { type: 'string' },
        ...extra,
      },
      strict: true,
    })
    const contents = parseList(values.content)
    for (const c of contents) {
      if (!(c in CONTENTS)) throw new Error(`unknown content '${c}' (known: ${Object.keys(CONTENTS).join(', ')})`)
    }
    const mode = values['memory-mode']
    if (mode !== undefined) {
      if (mode !== 'fast' && mode !== 'lean') throw new Error(`--memory-mode is fast or lean, got '${mode}'`)
      // readers.js reads it, in this process and in every child it starts.
      process.env.READFILE_UTF8_BENCH_MEMORY_MODE = mode
    }
    const sizes = parseList(values.size).map(parseSize)
    const quick = values.quick
    /** The option's number if given (it must be positive), else the full or quick default. */
    const number = (name, full, quickValue = full) => {
      if (values[name] === undefined) return quick ? quickValue : full
      const n = Number(values[name])
      if (!(n > 0) || !Number.isFinite(n)) usageExit(script, new Error(`--${name} needs a positive number, got '${values[name]}'`))
      return n
    }
    return {
      values,
      quick,
      contents: contents.length ? Object.keys(CONTENTS).filter((c) => contents.includes(c)) : Object.keys(CONTENTS),
      sizes: sizes.length ? [...new Set(sizes)].sort((a, b) => a - b) : (quick && defaults.quickSizes) || defaults.sizes || [],
      number,
    }
  } catch (err) {
    usageExit(script, err)
  }
}

function usageExit(script, err) {
  process.stderr.write(`${script}: ${err.message}\n`)
  process.exit(2)
}

module.exports = { suiteOptions, parseList, usageExit }
