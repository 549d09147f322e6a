#!/usr/bin/env bash
# Installs readfile-utf8 as users do, from a registry, and checks it works.
#
#   bash scripts/install-check.sh [node…]    # node binaries; default: the one on PATH
#
# Publishes the packages to a local registry (scripts/local-registry.sh:
# Verdaccio on 127.0.0.1, stopped at the end whatever happens) with the same
# script the release workflow publishes with (scripts/release.js): every
# platform package, then the main package. Platforms not built here get
# placeholder packages (right name and fields, no binary), since Yarn refuses
# to install while any optional dependency is missing from the registry.
# Then, in projects whose PATH has node and npm but no compiler, it installs
# with npm, pnpm (without and with a lockfile), Yarn Berry (PnP and
# node-modules), Bun and Deno, and runs scripts/install-smoke.js in each: the native
# engine, strings === fs's, fs's errors, require, import, -r and --import
# readfile-utf8/register (under PnP, with its loader); also an esbuild bundle
# run from another folder (the binary beside it, or named by
# READFILE_UTF8_NATIVE_LIBRARY_PATH), an install without optional
# dependencies (the fallback: one warning, READFILE_UTF8_REQUIRE_NATIVE=1
# throws), Node 20.12.0 (the oldest supported), Node 18 (falls back, and
# the warning names the version) and Deno without --allow-ffi (falls back, and
# the warning says to allow it). Every npm-installed check runs on each Node
# given; the other package managers on the first. Prints a table of scenarios
# and exits 1 if any failed.
#
# Needs npm/linux-x64-gnu/readfile-utf8.linux-x64-gnu.node (scripts/build-all.sh
# linux-x64-gnu). Tools, each pinned, come from the npm registry into
# ${READFILE_UTF8_CACHE:-~/.cache/readfile-utf8}.
set -euo pipefail
cd "$(dirname "$0")/.."
repo="$PWD"

PNPM_VERSION=12.24.0
YARN_VERSION=4.18.1
ESBUILD_VERSION=0.28.2
OLDEST_NODE=20.12.0
OLD_NODE=18.20.8

platform=linux-x64-gnu
binary_name="readfile-utf8.$platform.node"
[ -f "npm/$platform/$binary_name" ] || { echo "install-check: npm/$platform/$binary_name is missing; run: bash scripts/build-all.sh $platform" >&2; exit 1; }
nodes=("$@")
[ ${#nodes[@]} -gt 0 ] || nodes=("$(command -v node)")
node_main="${nodes[0]}"
version="$(node -p 'require("./package.json").version')"

started=$SECONDS
step() { printf '\n--- [%ds] %s\n' "$((SECONDS - started))" "$*"; }

work="$(mktemp -d)"
registry_dir="$work/registry"
cleanup() {
  bash "$repo/scripts/local-registry.sh" stop "$registry_dir" || true
  rm -rf "$work"
}
trap cleanup EXIT

# ------------------------------------------------------------------ tools
step "tools (pinned, cached)"
# pnpm 12 and esbuild are native executables (their install scripts put them in place).
pnpm_bin="$(bash scripts/get-tool.sh pnpm "$PNPM_VERSION")/pnpm"
yarn_js="$(bash scripts/get-tool.sh @yarnpkg/cli-dist "$YARN_VERSION")/bin/yarn.js"
esbuild_bin="$(bash scripts/get-tool.sh esbuild "$ESBUILD_VERSION")/bin/esbuild"
bun="$(bash scripts/get-runtime.sh bun)"
bun_version="$("$bun" --version)"
deno="$(bash scripts/get-runtime.sh deno)"
oldest_node="$(bash scripts/get-node.sh "$OLDEST_NODE")"
old_node="$(bash scripts/get-node.sh "$OLD_NODE")"
echo "pnpm $PNPM_VERSION, yarn $YARN_VERSION, esbuild $ESBUILD_VERSION, bun $bun_version, node $OLDEST_NODE and $OLD_NODE"

# A PATH with node and npm only: no cargo, rustc, cc, c++ or compilers at all.
# Each node binary gets a folder of its own holding just a link to it.
bare="$work/bin"
mkdir -p "$bare"
ln -s "$(command -v npm)" "$bare/npm"
node_path() { # node binary -> the PATH to run it with
  local dir
  dir="$work/node-$(printf '%s' "$1" | cksum | cut -d' ' -f1)"
  [ -e "$dir/node" ] || { mkdir -p "$dir" && ln -s "$1" "$dir/node"; }
  echo "$dir:$bare"
}
for node in "${nodes[@]}"; do
  for tool in cargo rustc cc c++ gcc g++ clang make zig; do
    if PATH="$(node_path "$node")" command -v "$tool" >/dev/null; then echo "install-check: $tool is on the bare PATH" >&2; exit 1; fi
  done
done
# Runs a command in a project with the given node first on the bare PATH;
# `with_env NAME=value… command` sets variables there (there is no env(1)).
in_project() {
  local project="$1" node="$2"
  shift 2
  (cd "$project" && export PATH="$(node_path "$node")" npm_config_cache="$work/npm-cache" && "$@")
}
with_env() {
  while [[ "$1" == *=* ]]; do export "${1?}"; shift; done
  "$@"
}

# ------------------------------------------------------------------ results
results="$work/results.tsv"
: >"$results"
failed=0
record() { # scenario, check, status
  printf '%s\t%s\t%s\n' "$1" "$2" "$3" >>"$results"
  if [ "$3" = FAIL ]; then failed=1; fi
}
# Runs install-smoke.js in a project: one result per check it prints.
smoke() { # scenario, project, node, engine, checks…
  local scenario="$1" project="$2" node="$3" engine="$4" log="$work/smoke.log"
  shift 4
  cp "$repo/scripts/install-smoke.js" "$project/smoke.js"
  echo "$scenario:"
  in_project "$project" "$node" node smoke.js "$engine" "$@" >"$log" 2>"$log.err" || true
  sed 's/^/  /' "$log"
  # (One sed reads all, so nothing in a pipe dies of SIGPIPE under pipefail.)
  [ ! -s "$log.err" ] || grep -v '^(Use `node --trace-warnings' "$log.err" | sed -n '1,30s/^/  stderr: /p'
  for check in "$@"; do
    if grep -qx "ok $check" "$log"; then record "$scenario" "$check" pass; else record "$scenario" "$check" FAIL; fi
  done
}
# Runs a command that must succeed for the scenario's check to pass.
expect() { # scenario, check, command…
  local scenario="$1" check="$2"
  shift 2
  if "$@" >"$work/expect.log" 2>&1; then
    record "$scenario" "$check" pass
  else
    record "$scenario" "$check" FAIL
    echo "$scenario / $check failed:" && sed -n '1,40s/^/  /p' "$work/expect.log"
  fi
}

# ------------------------------------------------------------------ registry
step "pack (scripts/release.js) and publish to a local registry"
node scripts/release.js pack "$work/packages" --placeholders
url="$(bash scripts/local-registry.sh start "$registry_dir")"
echo "registry: $url"
userconfig=(--userconfig "$registry_dir/npmrc" --registry "$url")
# A package of ours that projects require after readfile-utf8/register is
# installed: its modules are then read through the hook (under Yarn PnP, from
# inside a zip archive).
fixture="$work/fixture"
mkdir -p "$fixture"
cat >"$fixture/package.json" <<'JSON'
{ "name": "readfile-utf8-smoke-fixture", "version": "1.0.0", "main": "index.js", "license": "MIT" }
JSON
echo '{ "text": "fixture: é 中 😀" }' >"$fixture/data.json"
echo "module.exports = { text: require('./data.json').text }" >"$fixture/index.js"
echo "export const text = 'fixture: é 中 😀'" >"$fixture/esm.mjs"
(cd "$fixture" && npm pack --silent --pack-destination "$work" >/dev/null)
expect "publish" "all packages, main last" node scripts/release.js publish "$work/packages" "${userconfig[@]}"
expect "publish" "fixture" npm publish "$work/readfile-utf8-smoke-fixture-1.0.0.tgz" "${userconfig[@]}"

# A new project depending on readfile-utf8 and the fixture, with the registry in its .npmrc.
new_project() {
  local project="$work/$1"
  mkdir -p "$project"
  printf '{ "name": "%s", "version": "1.0.0", "private": true, "dependencies": { "readfile-utf8": "%s", "readfile-utf8-smoke-fixture": "1.0.0" } }\n' "$1" "$version" >"$project/package.json"
  printf 'registry=%s\n' "$url" >"$project/.npmrc"
  echo "$project"
}
has_binary() { [ -f "$1/readfile-utf8-$platform/$binary_name" ]; }
ALL_CHECKS=(require import register-cjs register-esm)

# ------------------------------------------------------------------ npm
step "npm"
npm_project="$(new_project npm-project)"
expect "npm" "install" in_project "$npm_project" "$node_main" npm install --no-audit --no-fund --loglevel=error
expect "npm" "platform package installed" has_binary "$npm_project/node_modules"
for node in "${nodes[@]}"; do
  smoke "npm, Node $("$node" --version)" "$npm_project" "$node" simdutf "${ALL_CHECKS[@]}"
done
smoke "npm, Node $OLDEST_NODE (oldest supported)" "$npm_project" "$oldest_node" simdutf "${ALL_CHECKS[@]}"
smoke "npm, Node $OLD_NODE (falls back)" "$npm_project" "$old_node" fs "${ALL_CHECKS[@]}"
old_warning() {
  local out
  out="$(in_project "$npm_project" "$old_node" node -e "require('readfile-utf8')" 2>&1)"
  echo "$out"
  grep -q "Node $OLD_NODE is older than 20.12" <<<"$out"
}
expect "npm, Node $OLD_NODE (falls back)" "warning names the version" old_warning

step "npm --omit=optional (the fallback)"
omit_project="$(new_project npm-omit-optional)"
expect "npm --omit=optional" "install" in_project "$omit_project" "$node_main" npm install --omit=optional --no-audit --no-fund --loglevel=error
smoke "npm --omit=optional" "$omit_project" "$node_main" fs "${ALL_CHECKS[@]}"
one_warning() {
  local out
  out="$(in_project "$omit_project" "$node_main" node -e "require('readfile-utf8'); require('readfile-utf8/register'); import('readfile-utf8')" 2>&1)"
  echo "$out"
  [ "$(grep -c READFILE_UTF8_NO_NATIVE <<<"$out")" = 1 ] && grep -q "readfile-utf8-$platform is not installed" <<<"$out"
}
expect "npm --omit=optional" "one warning: not installed" one_warning
require_native_throws() {
  in_project "$omit_project" "$node_main" with_env READFILE_UTF8_REQUIRE_NATIVE=1 node -e "
    try { require('readfile-utf8') } catch (e) { console.log(e.code, e.message); process.exit(e.code === 'READFILE_UTF8_NO_NATIVE' && !/falls? back/.test(e.message) ? 0 : 1) }
    process.exit(1)"
}
expect "npm --omit=optional" "REQUIRE_NATIVE=1 throws" require_native_throws

# ------------------------------------------------------------------ pnpm
step "pnpm $PNPM_VERSION"
pnpm_project="$(new_project pnpm-project)"
pnpm() { in_project "$1" "$node_main" "$pnpm_bin" "${@:2}" --store-dir "$work/pnpm-store" --reporter=append-only; }
expect "pnpm, no lockfile" "install" pnpm "$pnpm_project" install --no-frozen-lockfile
expect "pnpm, no lockfile" "platform package installed" has_binary "$pnpm_project/node_modules/.pnpm/node_modules"
smoke "pnpm, no lockfile" "$pnpm_project" "$node_main" simdutf "${ALL_CHECKS[@]}"
pnpm_locked="$(new_project pnpm-locked)"
cp "$pnpm_project/pnpm-lock.yaml" "$pnpm_locked/" 2>/dev/null || true
rm -rf "$work/pnpm-store"
expect "pnpm, lockfile" "install" pnpm "$pnpm_locked" install --frozen-lockfile
smoke "pnpm, lockfile" "$pnpm_locked" "$node_main" simdutf "${ALL_CHECKS[@]}"

# ------------------------------------------------------------------ yarn
step "Yarn $YARN_VERSION"
yarn_project() { # name, linker
  local project
  project="$(new_project "$1")"
  # Yarn 4 hides versions younger than npmMinimalAgeGate (a day, by default):
  # ours were published a second ago. CI sets immutable installs: there is no
  # lockfile yet. PnP projects that import ESM enable Yarn's ESM loader. The
  # global folder (metadata cache) is the run's own: each run's registry differs.
  cat >"$project/.yarnrc.yml" <<YAML
nodeLinker: $2
npmRegistryServer: "${url%/}"
unsafeHttpWhitelist: ["127.0.0.1"]
npmMinimalAgeGate: 0
enableGlobalCache: false
globalFolder: "$work/yarn-global"
enableTelemetry: false
enableImmutableInstalls: false
pnpEnableEsmLoader: true
YAML
  echo "$project"
}
yarn() { in_project "$1" "$node_main" with_env YARN_ENABLE_PROGRESS_BARS=0 node "$yarn_js" "${@:2}"; }
pnp_project="$(yarn_project yarn-pnp pnp)"
expect "Yarn PnP" "install" yarn "$pnp_project" install
# `yarn node` runs node with PnP's require hook and ESM loader (NODE_OPTIONS).
cp scripts/install-smoke.js "$pnp_project/smoke.js"
yarn_smoke() { # scenario, project, checks…
  local scenario="$1" project="$2" log="$work/smoke.log"
  shift 2
  echo "$scenario:"
  yarn "$project" node smoke.js simdutf "$@" >"$log" 2>"$log.err" || true
  sed 's/^/  /' "$log"
  [ ! -s "$log.err" ] || sed -n '1,30s/^/  stderr: /p' "$log.err"
  for check in "$@"; do
    if grep -qx "ok $check" "$log"; then record "$scenario" "$check" pass; else record "$scenario" "$check" FAIL; fi
  done
}
yarn_smoke "Yarn PnP" "$pnp_project" "${ALL_CHECKS[@]}" fixture-paths
nm_project="$(yarn_project yarn-node-modules node-modules)"
expect "Yarn node-modules" "install" yarn "$nm_project" install
expect "Yarn node-modules" "platform package installed" has_binary "$nm_project/node_modules"
smoke "Yarn node-modules" "$nm_project" "$node_main" simdutf "${ALL_CHECKS[@]}"

# ------------------------------------------------------------------ bun
step "Bun $bun_version"
bun_project="$(new_project bun-project)"
printf '[install]\nregistry = "%s"\n[install.cache]\ndir = "%s"\n' "$url" "$work/bun-cache" >"$bun_project/bunfig.toml"
expect "Bun install" "install" in_project "$bun_project" "$node_main" "$bun" install
expect "Bun install" "platform package installed" has_binary "$bun_project/node_modules"
smoke "Bun install" "$bun_project" "$node_main" simdutf "${ALL_CHECKS[@]}"
bun_runtime() {
  cp scripts/install-smoke.js "$bun_project/smoke.js"
  in_project "$bun_project" "$node_main" "$bun" smoke.js simdutf require import
}
expect "Bun runtime" "require + import" bun_runtime

# ------------------------------------------------------------------ deno
step "Deno $("$deno" --version | head -1)"
deno_project="$(new_project deno-project)"
cp scripts/install-smoke.js "$deno_project/smoke.cjs"
# Deno installs nothing published less than a day ago unless told otherwise.
deno_in_project() { in_project "$deno_project" "$node_main" with_env DENO_DIR="$work/deno-cache" "$deno" "$@"; }
expect "Deno install" "install" deno_in_project install --minimum-dependency-age=0
expect "Deno install" "platform package installed" has_binary "$deno_project/node_modules/.deno/readfile-utf8-$platform@$version/node_modules"
deno_runtime() {
  deno_in_project run --allow-read --allow-write --allow-env --allow-ffi --allow-sys smoke.cjs simdutf require import
}
expect "Deno runtime" "require + import" deno_runtime
deno_without_ffi() {
  local out
  out="$(deno_in_project run --allow-read --allow-write --allow-env --allow-sys smoke.cjs fs require 2>&1)" || { echo "$out"; return 1; }
  echo "$out"
  grep -q -- "--allow-ffi" <<<"$out"
}
expect "Deno runtime, no --allow-ffi" "fs, and says why" deno_without_ffi

# ------------------------------------------------------------------ esbuild
step "esbuild $ESBUILD_VERSION bundle, run from another folder"
bundle_dir="$work/bundle"
elsewhere="$work/elsewhere"
mkdir -p "$bundle_dir" "$elsewhere"
cp scripts/install-smoke.js "$npm_project/smoke.js"
expect "esbuild bundle" "build" in_project "$npm_project" "$node_main" "$esbuild_bin" smoke.js --bundle --platform=node \
  --log-level=error --outfile="$bundle_dir/smoke.js"
bundle_run() { # engine, env…
  local engine="$1"
  shift
  in_project "$elsewhere" "$node_main" with_env "$@" node "$bundle_dir/smoke.js" "$engine" require import
}
bundle_unresolvable() {
  local out
  out="$(bundle_run fs 2>&1)" || { echo "$out"; return 1; }
  echo "$out"
  grep -q "bundled into $bundle_dir/smoke.js" <<<"$out"
}
expect "esbuild bundle, nothing beside" "fs, and says why" bundle_unresolvable
cp "npm/$platform/$binary_name" "$bundle_dir/"
expect "esbuild bundle, binary beside" "native, === fs" bundle_run simdutf
rm "$bundle_dir/$binary_name"
expect "esbuild bundle, READFILE_UTF8_NATIVE_LIBRARY_PATH" "native, === fs" bundle_run simdutf \
  READFILE_UTF8_NATIVE_LIBRARY_PATH="$npm_project/node_modules/readfile-utf8-$platform/$binary_name"
expect "esbuild bundle, --external:readfile-utf8" "build" in_project "$npm_project" "$node_main" "$esbuild_bin" smoke.js --bundle \
  --platform=node --log-level=error --external:readfile-utf8 --outfile="$npm_project/dist/smoke.js"
external_run() { in_project "$npm_project" "$node_main" node dist/smoke.js simdutf "${ALL_CHECKS[@]}"; }
expect "esbuild bundle, --external:readfile-utf8" "native, === fs" external_run

# ------------------------------------------------------------------ table
step "scenarios"
node -e '
  const rows = require("fs").readFileSync(process.argv[1], "utf8").trim().split("\n").map((l) => l.split("\t"))
  const scenarios = [...new Set(rows.map((r) => r[0]))]
  const width = Math.max(...scenarios.map((s) => s.length))
  for (const s of scenarios) {
    const cells = rows.filter((r) => r[0] === s).map((r) => `${r[1]}: ${r[2]}`)
    console.log(`${s.padEnd(width)}  ${cells.join(", ")}`)
  }
  const fails = rows.filter((r) => r[2] === "FAIL").length
  console.log(`\n${rows.length - fails} passed, ${fails} failed`)
' "$results"
echo "install-check: $((SECONDS - started)) s"
exit "$failed"
