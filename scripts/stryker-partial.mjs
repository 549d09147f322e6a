// A StrykerJS reporter that appends each mutant's result to the file
// READFILE_UTF8_STRYKER_PARTIAL names, as it comes: a campaign stopped before
// its end (a session's time, a machine's) still leaves what it tested
// (scripts/stryker.js --partial turns that into its report).
import fs from 'node:fs'
import { PluginKind, declareClassPlugin } from '@stryker-mutator/api/plugin'

class PartialReporter {
  onMutantTested(result) {
    const file = process.env.READFILE_UTF8_STRYKER_PARTIAL
    if (!file) return
    const { id, mutatorName, replacement, fileName, location, status } = result
    fs.appendFileSync(file, `${JSON.stringify({ id, mutatorName, replacement, fileName, location, status })}\n`)
  }
}

export const strykerPlugins = [declareClassPlugin(PluginKind.Reporter, 'partial', PartialReporter)]
