'use strict'
// benchmark/RESULTS.md: each run of bench.js writes a section at the top, newest
// first, above the historical runs that were written up by hand.
const fs = require('node:fs')
const path = require('node:path')

const FILE = path.join(__dirname, 'RESULTS.md')
const MARKER = '<!-- bench.js inserts each run below this line, newest first -->'
const HEAD = `# Benchmark results

Written by \`npm run bench\` (\`node benchmark/bench.js\`): one section per run,
newest first, with the build, the machine and the Node it ran on. Runs with
\`--no-save\` are not recorded. Hand-written runs from before are under
"Historical runs" at the end.

${MARKER}
`

/** Inserts `section` (Markdown) below the marker, creating the file if it is missing. */
function saveRun(section) {
  let text = fs.existsSync(FILE) ? fs.readFileSync(FILE, 'utf8') : HEAD
  if (!text.includes(MARKER)) text = HEAD + '\n' + text
  const at = text.indexOf(MARKER) + MARKER.length
  text = `${text.slice(0, at)}\n\n${section.trim()}${text.slice(at)}`
  fs.writeFileSync(FILE, text)
  return FILE
}

module.exports = { saveRun }
