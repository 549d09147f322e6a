#!/usr/bin/env bash
# Installs readfile-utf8 as a user would, from packed tarballs, into a fresh
# project whose PATH has no Rust or C toolchain, and checks it on each Node
# given (paths of node binaries; default: the one on PATH):
#  1. root + linux-x64-gnu platform package: the native addon loads and gives
#     fs's results through require, import and -r readfile-utf8/register;
#  2. root alone: every function falls back to fs, with one warning, and
#     READFILE_UTF8_REQUIRE_NATIVE=1 turns that into an error.
# Needs npm/linux-x64-gnu/readfile-utf8.linux-x64-gnu.node (scripts/build-all.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
repo="$PWD"
platform=linux-x64-gnu
binary="npm/$platform/readfile-utf8.$platform.node"
[ -f "$binary" ] || { echo "install-check: $binary is missing; run: bash scripts/build-all.sh $platform" >&2; exit 1; }
nodes=("$@")
[ ${#nodes[@]} -gt 0 ] || nodes=("$(command -v node)")

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

# Tarballs, as `npm publish` would make them (no build: prepare is skipped).
npm pack --ignore-scripts --pack-destination "$work" --silent >/dev/null
(cd "npm/$platform" && npm pack --pack-destination "$work" --silent >/dev/null)
root_tgz="$(ls "$work"/readfile-utf8-0*.tgz)"
platform_tgz="$(ls "$work"/readfile-utf8-"$platform"-*.tgz)"
echo "tarballs: $(basename "$root_tgz") $(stat -c %s "$root_tgz") B, $(basename "$platform_tgz") $(stat -c %s "$platform_tgz") B"
if tar tzf "$root_tgz" | grep -qE '\.(rs|node)$|Cargo|scripts/'; then
  echo "install-check: the main tarball ships build files:" >&2
  tar tzf "$root_tgz" >&2
  exit 1
fi

# A PATH with node and npm only: no cargo, rustc, cc, c++ or compilers at all.
bare="$work/bin"
mkdir -p "$bare"
ln -s "$(command -v node)" "$bare/node"
ln -s "$(command -v npm)" "$bare/npm"
for tool in cargo rustc cc c++ gcc g++ clang make; do
  if PATH="$bare" command -v "$tool" >/dev/null; then echo "install-check: $tool is on the bare PATH" >&2; exit 1; fi
done

# Installs the tarballs given into a new project; prints the milliseconds it took.
install_into() {
  local project="$1"
  shift
  mkdir -p "$project"
  (cd "$project" && PATH="$bare" npm init -y >/dev/null)
  local started
  started=$(date +%s%N)
  (cd "$project" && PATH="$bare" npm install --no-audit --no-fund --loglevel=error "$@" >/dev/null)
  echo $((($(date +%s%N) - started) / 1000000))
}

with_platform="$work/with-platform"
without="$work/without-platform"
echo "install with the platform package: $(install_into "$with_platform" "$root_tgz" "$platform_tgz") ms"
echo "install without it:                 $(install_into "$without" "$root_tgz") ms"
[ -f "$with_platform/node_modules/readfile-utf8-$platform/readfile-utf8.$platform.node" ]
[ ! -e "$without/node_modules/readfile-utf8-$platform" ]
if find "$with_platform/node_modules/readfile-utf8" "$without/node_modules/readfile-utf8" -name '*.node' | grep -q .; then
  echo "install-check: a .node file inside the main package" >&2
  exit 1
fi

for node in "${nodes[@]}"; do
  node_dir="$(dirname "$node")"
  echo "--- $("$node" --version)"
  cp scripts/install-smoke.js "$with_platform/smoke.js"
  cp scripts/install-smoke.js "$without/smoke.js"
  (cd "$with_platform" && PATH="$node_dir:$bare" node smoke.js simdutf)
  # The fallback: the smoke check passes on fs, and the warning comes once.
  (cd "$without" && PATH="$node_dir:$bare" node smoke.js fs 2>"$work/warnings.txt")
  warned=$(cd "$without" && PATH="$node_dir:$bare" node -e "require('readfile-utf8'); require('readfile-utf8/register'); import('readfile-utf8')" 2>&1 | grep -c 'READFILE_UTF8_NO_NATIVE' || true)
  [ "$warned" = 1 ] || { echo "install-check: expected one warning, got $warned" >&2; exit 1; }
  (cd "$without" && PATH="$node_dir:$bare" node -e "require('readfile-utf8')" 2>&1 | grep -q "no native binary for $platform") ||
    { echo "install-check: the warning does not name the platform" >&2; exit 1; }
  if (cd "$without" && READFILE_UTF8_REQUIRE_NATIVE=1 PATH="$node_dir:$bare" node -e "require('readfile-utf8')" 2>/dev/null); then
    echo "install-check: READFILE_UTF8_REQUIRE_NATIVE=1 did not throw" >&2
    exit 1
  fi
  echo "fallback ok: one warning, READFILE_UTF8_REQUIRE_NATIVE=1 throws"
done
echo "install-check: passed on ${#nodes[@]} Node version(s)"
