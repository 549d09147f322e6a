'use strict'
// What the warning (or, under READFILE_UTF8_REQUIRE_NATIVE, the error) says
// when the loader (./native) found no binary to load: where it looked, the
// causes it cannot tell apart from inside the process, and every way out.
// An install reports none of these causes: npm skips an optional dependency
// it cannot fetch without a word, so the message has to name them all.
const path = require('node:path')
const { version, repository } = require('../package.json')

const PATH_VARIABLE = 'READFILE_UTF8_NATIVE_LIBRARY_PATH'

/** The repository to clone, from package.json ('git+https://…/x.git' → 'https://…/x'). */
const REPOSITORY = String(repository?.url ?? repository ?? '')
  .replace(/^git\+/, '')
  .replace(/\.git$/, '')

/** How to build `binary` from source and use it: commands that work outside the installed package. */
function fromSource(binary) {
  return (
    'build one from source (needs Rust with cargo, and a C and C++ compiler): ' +
    `git clone --branch v${version} ${REPOSITORY} && cd readfile-utf8 && npm install, ` +
    `then set ${PATH_VARIABLE} to the ${binary} it builds there`
  )
}

/** Where the loader looked, in the order it looks: `local` the local build paths, `pkg` the platform package. */
function lookedFor({ local, pkg, root }) {
  const files = local.map((file) => path.basename(file))
  return (
    `Looked for: the file ${PATH_VARIABLE} names (it is not set); ` +
    `a local build, ${files.join(' or ')} in ${root} (there is none); ` +
    `the platform package ${pkg}@${version}, from ${root} and from the current directory (it is in neither).`
  )
}

/** The platform package is not installed: { cause, detail, fix } for the loader's result. */
function notInstalled({ pkg, binary, local, root }) {
  return {
    cause: `the platform package ${pkg} is not installed`,
    detail: [
      lookedFor({ local, pkg, root }),
      'Possible causes, which it cannot tell apart: ' +
        'the install left optional dependencies out (--omit=optional, --no-optional, omit=optional in an .npmrc); ' +
        `the registry has no ${pkg}@${version} (for this platform or for this version: npm skips an optional dependency it cannot fetch, without a word); ` +
        "the lockfile was written on another platform, and lists that platform's package only.",
    ],
    fix:
      'Ways out: reinstall with optional dependencies (npm install --include=optional; after a lockfile from another platform, ' +
      'delete it and node_modules first); ' +
      `if \`npm view ${pkg}@${version}\` finds it, add ${pkg}@${version} to your dependencies; ` +
      `set ${PATH_VARIABLE} to a ${binary} you have; or ${fromSource(binary)}.`,
  }
}

/** No binary is published for this platform: the ways to make one. */
function unpublished(binary) {
  return `Set ${PATH_VARIABLE} to a ${binary} you have, or ${fromSource(binary)}.`
}

module.exports = { PATH_VARIABLE, notInstalled, unpublished }
