'use strict'
// The release's packages: one list of platforms, checked everywhere it is
// written; the tarballs, checked file by file; and the publish, platform
// packages first and the main package last. The release workflow's publish
// job and scripts/install-check.sh (a real publish to a local registry) both
// run it.
//
//   node scripts/release.js check
//       package.json's optionalDependencies, npm/*, lib/binary-name.js,
//       scripts/build-all.sh, napi.targets and the workflow's build and test
//       matrices name the same platforms; each platform package's fields agree.
//   node scripts/release.js pack <dir> [--placeholders]
//       the check, then every tarball into <dir>, each one's files checked.
//       --placeholders: a platform whose binary was not built here gets a
//       package without it (for the local registry only: Yarn refuses to
//       install while any optional dependency is missing from the registry).
//   node scripts/release.js publish <dir> [--provenance] [npm options…]
//       publishes the tarballs pack wrote, in order; versions the registry
//       already has are skipped, so a failed release can be run again.
const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const { execFile, spawnSync } = require('node:child_process')

const ROOT = path.join(__dirname, '..')
const root = require('../package.json')
const { PUBLISHED } = require('../lib/binary-name')
const WORKFLOW = '.github/workflows/ci.yml'

/** Rust target triple of each platform, as napi-rs names them. */
const TRIPLES = {
  'linux-x64-gnu': 'x86_64-unknown-linux-gnu',
  'linux-arm64-gnu': 'aarch64-unknown-linux-gnu',
  'linux-x64-musl': 'x86_64-unknown-linux-musl',
  'linux-arm64-musl': 'aarch64-unknown-linux-musl',
  'darwin-x64': 'x86_64-apple-darwin',
  'darwin-arm64': 'aarch64-apple-darwin',
  'win32-x64-gnu': 'x86_64-pc-windows-gnu',
}

const read = (file) => fs.readFileSync(path.join(ROOT, file), 'utf8')
const sorted = (list) => [...list].sort()
const binaryOf = (platform) => `readfile-utf8.${platform}.node`

/** The platforms each place names; every list must equal PUBLISHED. */
function platformLists() {
  const buildAll = read('scripts/build-all.sh')
  const all = /^ALL=\(([^)]*)\)/m.exec(buildAll)
  const tripleOf = Object.fromEntries([...buildAll.matchAll(/^\s+([a-z0-9-]+)\) echo (\S+) ;;$/gm)].map((m) => [m[1], m[2]]))
  const lists = {
    'lib/binary-name.js PUBLISHED': PUBLISHED,
    'package.json optionalDependencies': Object.keys(root.optionalDependencies ?? {}).map((n) => n.replace(/^readfile-utf8-/, '')),
    'npm/*': fs.readdirSync(path.join(ROOT, 'npm')).filter((d) => fs.existsSync(path.join(ROOT, 'npm', d, 'package.json'))),
    'scripts/build-all.sh ALL': all ? all[1].trim().split(/\s+/) : [],
    'scripts/build-all.sh triple_of': Object.keys(tripleOf),
    'package.json napi.targets': (root.napi?.targets ?? []).map((t) => Object.keys(TRIPLES).find((p) => TRIPLES[p] === t) ?? `? ${t}`),
  }
  const workflow = fs.existsSync(path.join(ROOT, WORKFLOW)) ? read(WORKFLOW) : ''
  lists[`${WORKFLOW} build matrix`] = matrixList(jobBody(workflow, 'build'))
  lists[`${WORKFLOW} test matrix`] = matrixList(jobBody(workflow, 'test'))
  lists[`${WORKFLOW} test runners`] = matrixRunners(jobBody(workflow, 'test'))
  return { lists, tripleOf }
}

/** The body of the workflow's job `name` (jobs are keyed two spaces in). */
function jobBody(workflow, name) {
  const start = workflow.search(new RegExp(`^  ${name}:\\s*$`, 'm'))
  if (start < 0) return ''
  const rest = workflow.slice(start).split('\n').slice(1)
  const end = rest.findIndex((line) => /^ {2}\S/.test(line))
  return rest.slice(0, end < 0 ? undefined : end).join('\n')
}

/** The platforms of a job's matrix list (`platform: [a, b]`). */
function matrixList(body) {
  const m = /^\s+platform:\s*\[([^\]]*)\]\s*$/m.exec(body)
  return m ? m[1].split(',').map((s) => s.trim()).filter(Boolean) : []
}

/** The platforms given a runner in a job's matrix `include` (`- platform: a` then `runner: …`). */
function matrixRunners(body) {
  return [...body.matchAll(/-\s+platform:\s*([a-z0-9-]+)\s*\n\s+runner:\s*\S+/g)].map((m) => m[1])
}

/** What a platform package's package.json must say, given its name. */
function expectedFields(platform) {
  const [osName, cpu, abi] = platform.split('-')
  return {
    name: `readfile-utf8-${platform}`,
    version: root.version,
    os: [osName],
    cpu: [cpu],
    libc: osName === 'linux' ? [abi === 'musl' ? 'musl' : 'glibc'] : undefined,
    main: binaryOf(platform),
    files: [binaryOf(platform)],
    license: root.license,
    engines: root.engines,
    repository: { ...root.repository, directory: `npm/${platform}` },
    homepage: root.homepage,
    bugs: root.bugs,
  }
}

/** Every disagreement between the lists and packages, as lines (none: all agree). */
function problems() {
  const out = []
  const { lists, tripleOf } = platformLists()
  const want = sorted(PUBLISHED).join(', ')
  for (const [where, list] of Object.entries(lists)) {
    if (sorted(list).join(', ') !== want) out.push(`${where} names [${sorted(list).join(', ')}], not [${want}]`)
  }
  for (const platform of PUBLISHED) {
    if (tripleOf[platform] !== undefined && tripleOf[platform] !== TRIPLES[platform]) {
      out.push(`scripts/build-all.sh builds ${platform} as ${tripleOf[platform]}, not ${TRIPLES[platform]}`)
    }
    const name = `readfile-utf8-${platform}`
    if (root.optionalDependencies?.[name] !== undefined && root.optionalDependencies[name] !== root.version) {
      out.push(`package.json optionalDependencies pins ${name}@${root.optionalDependencies[name]}, not ${root.version}`)
    }
    const file = path.join(ROOT, 'npm', platform, 'package.json')
    if (!fs.existsSync(file)) continue
    const pkg = JSON.parse(fs.readFileSync(file, 'utf8'))
    for (const [field, value] of Object.entries(expectedFields(platform))) {
      if (JSON.stringify(pkg[field]) !== JSON.stringify(value)) {
        out.push(`npm/${platform}/package.json: ${field} is ${JSON.stringify(pkg[field])}, not ${JSON.stringify(value)}`)
      }
    }
  }
  for (const field of ['repository', 'homepage', 'bugs']) {
    if (root[field] === undefined) out.push(`package.json has no ${field}`)
  }
  return out
}

/** Runs npm with `args` in `cwd`; returns stdout, or exits with npm's output. */
function npm(args, cwd = ROOT) {
  const r = spawnSync(process.platform === 'win32' ? 'npm.cmd' : 'npm', args, { cwd, encoding: 'utf8', shell: process.platform === 'win32' })
  if (r.status !== 0) {
    console.error(`release: npm ${args.join(' ')} failed (in ${cwd}):\n${r.stdout}${r.stderr}`)
    process.exit(1)
  }
  return r.stdout
}

/** The files of a packed tarball, from npm's JSON report. */
const packed = (report) => report.files.map((f) => f.path).sort()

/** The main package's files must be the JS layer, its types and docs: no binary, no sources. */
function checkMainFiles(files) {
  const bad = files.filter((f) => /\.(node|rs)$|^(src|scripts|target|benchmark|__test__|npm|tests)\/|^Cargo/.test(f))
  const missing = ['package.json', 'README.md', 'LICENSE', 'index.js', 'index.mjs', 'index.d.ts', 'register.js', 'register.mjs', 'lib/native.js'].filter(
    (f) => !files.includes(f),
  )
  return [...bad.map((f) => `ships ${f}`), ...missing.map((f) => `lacks ${f}`)]
}

/** Packs every package into `dir`; returns the manifest (publish order) it writes there. */
function pack(dir, { placeholders }) {
  fs.mkdirSync(dir, { recursive: true })
  const stage = fs.mkdtempSync(path.join(os.tmpdir(), 'readfile-utf8-stage-'))
  const manifest = []
  const errors = []
  try {
    for (const platform of PUBLISHED) {
      const src = path.join(ROOT, 'npm', platform)
      const to = path.join(stage, platform)
      fs.mkdirSync(to)
      for (const f of ['package.json', 'README.md']) fs.copyFileSync(path.join(src, f), path.join(to, f))
      fs.copyFileSync(path.join(ROOT, 'LICENSE'), path.join(to, 'LICENSE'))
      const binary = path.join(src, binaryOf(platform))
      const built = fs.existsSync(binary)
      if (built) fs.copyFileSync(binary, path.join(to, binaryOf(platform)))
      else if (!placeholders) errors.push(`npm/${platform}/${binaryOf(platform)} is missing (scripts/build-all.sh ${platform})`)
      const [report] = JSON.parse(npm(['pack', '--json', '--pack-destination', dir], to))
      const want = [...(built ? [binaryOf(platform)] : []), 'LICENSE', 'README.md', 'package.json'].sort()
      if (packed(report).join() !== want.join()) errors.push(`${report.filename} holds [${packed(report)}], not [${want}]`)
      manifest.push({ name: report.name, version: report.version, file: report.filename, size: report.size, placeholder: !built })
    }
    const [report] = JSON.parse(npm(['pack', '--json', '--ignore-scripts', '--pack-destination', dir]))
    for (const e of checkMainFiles(packed(report))) errors.push(`${report.filename}: ${e}`)
    manifest.push({ name: report.name, version: report.version, file: report.filename, size: report.size, placeholder: false })
  } finally {
    fs.rmSync(stage, { recursive: true, force: true })
  }
  for (const entry of manifest) {
    if (entry.version !== root.version) errors.push(`${entry.name} is version ${entry.version}, not ${root.version}`)
  }
  if (errors.length > 0) {
    console.error(`release: the packages are not ready:\n  ${errors.join('\n  ')}`)
    process.exit(1)
  }
  fs.writeFileSync(path.join(dir, 'manifest.json'), `${JSON.stringify(manifest, null, 2)}\n`)
  for (const e of manifest) console.log(`${e.file.padEnd(44)} ${String(e.size).padStart(9)} B${e.placeholder ? '  (placeholder: no binary)' : ''}`)
  return manifest
}

/** The value of an npm option (`--name value` or `--name=value`) in `options`, or undefined. */
function optionValue(options, name) {
  for (let i = 0; i < options.length; i++) {
    if (options[i] === name) return options[i + 1]
    if (options[i].startsWith(`${name}=`)) return options[i].slice(name.length + 1)
  }
  return undefined
}

/** Whether the registry already has `name@version` (its packument, read anonymously). */
async function isPublished(registry, { name, version }) {
  const res = await fetch(new URL(encodeURIComponent(name), registry.endsWith('/') ? registry : `${registry}/`))
  if (res.status === 404) return false
  if (!res.ok) throw new Error(`release: ${registry} answered ${res.status} for ${name}`)
  return Boolean((await res.json()).versions?.[version])
}

/** Runs npm asynchronously; rejects with its output if it fails. */
function npmAsync(args) {
  return new Promise((resolve, reject) => {
    execFile(process.platform === 'win32' ? 'npm.cmd' : 'npm', args, { shell: process.platform === 'win32' }, (err, stdout, stderr) =>
      err ? reject(new Error(`npm ${args.join(' ')} failed:\n${stdout}${stderr}`)) : resolve(stdout),
    )
  })
}

/**
 * Publishes the tarballs in `dir`: every platform package (a few at a time),
 * then, once all of them are in, the main package.
 */
async function publish(dir, npmOptions) {
  const manifest = JSON.parse(fs.readFileSync(path.join(dir, 'manifest.json'), 'utf8'))
  const main = manifest.at(-1)
  const platformPackages = manifest.slice(0, -1)
  const names = manifest.map((e) => e.name)
  if (main.name !== root.name || new Set(names).size !== names.length) throw new Error(`release: bad manifest order ${names}`)
  for (const dep of Object.keys(root.optionalDependencies)) {
    if (!platformPackages.some((e) => e.name === dep)) throw new Error(`release: ${dep} would not be published before ${root.name}`)
  }
  const ref = process.env.GITHUB_REF_NAME
  if (process.env.GITHUB_REF_TYPE === 'tag' && ref !== `v${root.version}`) {
    throw new Error(`release: the tag ${ref} does not name version ${root.version}`)
  }
  if (npmOptions.includes('--provenance') && manifest.some((e) => e.placeholder)) {
    throw new Error('release: placeholder packages are never published for real')
  }
  const userconfig = optionValue(npmOptions, '--userconfig')
  const registry =
    optionValue(npmOptions, '--registry') ?? npm(['config', 'get', 'registry', ...(userconfig ? ['--userconfig', userconfig] : [])]).trim()
  const publishOne = async (entry) => {
    if (await isPublished(registry, entry)) return console.log(`${entry.name}@${entry.version}: already published, skipped`)
    await npmAsync(['publish', path.join(dir, entry.file), '--access', 'public', ...npmOptions])
    console.log(`${entry.name}@${entry.version}: published`)
  }
  const queue = [...platformPackages]
  await Promise.all(Array.from({ length: 4 }, async () => {
    while (queue.length > 0) await publishOne(queue.shift())
  }))
  await publishOne(main)
}

function main() {
  const [command, dir, ...rest] = process.argv.slice(2)
  const found = problems()
  if (found.length > 0) {
    console.error(`release: the platform lists or packages disagree:\n  ${found.join('\n  ')}`)
    process.exit(1)
  }
  if (command === 'check' || command === undefined) {
    console.log(`release: ${PUBLISHED.length} platforms named alike everywhere, package fields agree`)
  } else if (command === 'pack' && dir) {
    pack(path.resolve(dir), { placeholders: rest.includes('--placeholders') })
  } else if (command === 'publish' && dir) {
    publish(path.resolve(dir), rest).catch((err) => {
      console.error(err.message)
      process.exit(1)
    })
  } else {
    console.error('usage: node scripts/release.js check | pack <dir> [--placeholders] | publish <dir> [npm options…]')
    process.exit(2)
  }
}

if (require.main === module) main()
module.exports = { problems, platformLists, expectedFields, TRIPLES }
