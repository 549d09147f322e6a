'use strict'
// Type-checks TypeScript sources against the package's .d.ts files, as
// `tsc --noEmit --strict --module nodenext --moduleResolution nodenext --types
// node use.ts` run in their folder would, and answers as tsc does ({ status, stdout }:
// tsc's plain diagnostics, status 0 when there are none). In this process,
// through the compiler API: one load of TypeScript and one parse of the
// standard library and @types/node for every check a test file makes, and the
// semantic check of our files (the source, index.d.ts, register.d.ts) but not
// of @types/node's and the standard library's own, which tsc spends most of
// its time on and which are not ours to test.
const fs = require('node:fs')
const path = require('node:path')
const ts = require('typescript')

const OPTIONS = {
  noEmit: true,
  strict: true,
  module: ts.ModuleKind.NodeNext,
  moduleResolution: ts.ModuleResolutionKind.NodeNext,
  types: ['node'],
}

const THEIRS = /[\\/]node_modules[\\/](@types|undici-types|typescript)[\\/]/

/**
 * A checker of sources written to `dir`/use.ts. The declaration files it parses
 * are shared by its checks (they do not change) and let go with it.
 */
function typechecker(dir) {
  const parsed = new Map()
  return (source) => {
    const file = path.join(dir, 'use.ts')
    fs.writeFileSync(file, source)
    const host = ts.createCompilerHost(OPTIONS)
    const getSourceFile = host.getSourceFile.bind(host)
    host.getSourceFile = (name, language, onError) => {
      if (!THEIRS.test(name)) return getSourceFile(name, language, onError)
      if (!parsed.has(name)) parsed.set(name, getSourceFile(name, language, onError))
      return parsed.get(name)
    }
    const program = ts.createProgram({ rootNames: [file], options: OPTIONS, host })
    const ours = program.getSourceFiles().filter((sf) => !program.isSourceFileDefaultLibrary(sf) && !THEIRS.test(sf.fileName))
    const diagnostics = [
      ...program.getOptionsDiagnostics(),
      ...program.getGlobalDiagnostics(),
      ...program.getSyntacticDiagnostics(),
      ...ours.flatMap((sf) => program.getSemanticDiagnostics(sf)),
    ]
    const stdout = ts.formatDiagnostics(diagnostics, {
      getCanonicalFileName: (name) => name,
      getCurrentDirectory: () => dir,
      getNewLine: () => '\n',
    })
    return { status: diagnostics.length ? 2 : 0, stdout, stderr: '', checked: ours.map((sf) => path.basename(sf.fileName)) }
  }
}

module.exports = { typechecker }
