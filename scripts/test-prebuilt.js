'use strict'
// Runs the JS suite against a binary built elsewhere (the release workflow's
// test jobs, each on a machine of the binary's platform):
//
//   node scripts/test-prebuilt.js <platform>
//
// takes npm/<platform>/readfile-utf8.<platform>.node, checks that it is the
// binary this machine's loader looks for, installs the dev dependencies
// without building (npm ci --ignore-scripts), puts the binary where the
// loader looks first (the package root, as a local build) and runs
// `npm run test:js` with READFILE_UTF8_REQUIRE_NATIVE=1, so that a binary
// that does not load fails the run instead of falling back to fs.
const fs = require('node:fs')
const path = require('node:path')
const { spawnSync } = require('node:child_process')
const { platforms } = require('../lib/binary-name')

const ROOT = path.join(__dirname, '..')
const platform = process.argv[2]
if (!platform) {
  console.error('usage: node scripts/test-prebuilt.js <platform>')
  process.exit(2)
}
const name = `readfile-utf8.${platform}.node`
const binary = path.join(ROOT, 'npm', platform, name)
if (!fs.existsSync(binary)) {
  console.error(`test-prebuilt: ${path.relative(ROOT, binary)} is missing`)
  process.exit(1)
}
if (platforms()[0] !== platform) {
  console.error(`test-prebuilt: this machine loads ${platforms()[0]} binaries, not ${platform}`)
  process.exit(1)
}
for (const other of fs.readdirSync(ROOT).filter((f) => /^readfile-utf8\..*\.node$/.test(f))) {
  console.error(`test-prebuilt: ${other} is in the package root already; remove it first`)
  process.exit(1)
}

const windows = process.platform === 'win32'
function run(command, args, env = {}) {
  console.log(`\n> ${command} ${args.join(' ')}`)
  // Windows: npm is npm.cmd (needs a shell), and Git's bash expands the
  // suite's globs, which cmd.exe does not.
  const r = spawnSync(command, args, {
    cwd: ROOT,
    stdio: 'inherit',
    shell: windows,
    env: { ...process.env, ...(windows ? { npm_config_script_shell: 'bash' } : {}), ...env },
  })
  if (r.status !== 0) {
    console.error(`test-prebuilt: ${command} ${args.join(' ')} failed (${r.error?.message ?? `exit ${r.status}`})`)
    process.exit(1)
  }
}

console.log(`test-prebuilt: ${name} (${fs.statSync(binary).size} B) on Node ${process.version} ${process.platform}-${process.arch}`)
run('npm', ['ci', '--ignore-scripts', '--no-audit', '--no-fund'])
fs.copyFileSync(binary, path.join(ROOT, name))
try {
  run(process.execPath, ['-e', "const m = require('./'); console.log('engine():', m.engine()); if (m.engine() === 'fs') process.exit(1)"], {
    READFILE_UTF8_REQUIRE_NATIVE: '1',
  })
  run('npm', ['run', 'test:js', '--ignore-scripts'], { READFILE_UTF8_REQUIRE_NATIVE: '1' })
} finally {
  fs.rmSync(path.join(ROOT, name), { force: true })
}
