#!/usr/bin/env bash
# Builds the release addon for each platform given (default: all of them) into
# npm/<platform>/readfile-utf8.<platform>.node, then checks every binary with
# scripts/check-binaries.sh. Installs the cross tools it needs first (zig and
# cargo-zigbuild from PyPI, Rust targets and llvm-tools from rustup, `file`
# from apt), skipping what is already there.
#
#   bash scripts/build-all.sh                       # every platform
#   bash scripts/build-all.sh linux-x64-gnu darwin-arm64
#
# All compilers are zig's (via cargo-zigbuild), so one Linux x64 host builds
# every platform: glibc targets against glibc 2.17 (the oldest zig offers that
# Rust still supports), libc++ linked statically everywhere, no SDKs to fetch.
set -euo pipefail
cd "$(dirname "$0")/.."
root="$PWD"

ALL=(linux-x64-gnu linux-arm64-gnu linux-x64-musl linux-arm64-musl darwin-x64 darwin-arm64 win32-x64-gnu)

# napi-rs platform name -> Rust target triple.
triple_of() {
  case "$1" in
    linux-x64-gnu) echo x86_64-unknown-linux-gnu ;;
    linux-arm64-gnu) echo aarch64-unknown-linux-gnu ;;
    linux-x64-musl) echo x86_64-unknown-linux-musl ;;
    linux-arm64-musl) echo aarch64-unknown-linux-musl ;;
    darwin-x64) echo x86_64-apple-darwin ;;
    darwin-arm64) echo aarch64-apple-darwin ;;
    win32-x64-gnu) echo x86_64-pc-windows-gnu ;;
    *) return 1 ;;
  esac
}

platforms=("$@")
[ ${#platforms[@]} -gt 0 ] || platforms=("${ALL[@]}")
for p in "${platforms[@]}"; do
  triple_of "$p" >/dev/null || { echo "build-all: unknown platform '$p' (known: ${ALL[*]})" >&2; exit 2; }
  [ -f "npm/$p/package.json" ] || { echo "build-all: npm/$p/package.json is missing" >&2; exit 2; }
done
# A platform package must carry the root package's version (`napi version` or a
# hand edit keeps them in step); publishing a mismatch breaks the install.
node -e '
  const want = require("./package.json").version
  const bad = process.argv.slice(1).filter((p) => require(`./npm/${p}/package.json`).version !== want)
  if (bad.length) { console.error(`build-all: version differs from ${want} in npm/{${bad}}/package.json`); process.exit(2) }
' "${platforms[@]}"

started=$SECONDS
section() { printf '\n=== [%ds] %s\n' "$((SECONDS - started))" "$*"; }

# ---------------------------------------------------------------- tools
section "cross tools"

# pip may put console scripts (cargo-zigbuild) in the user base; keep it on PATH.
user_bin="$(python3 -c 'import site; print(site.USER_BASE)')/bin"
export PATH="$PATH:$user_bin"

pip_install() {
  # PEP 668 distros (Debian 12+, Ubuntu 24.04) refuse system-wide installs;
  # then install for this user only.
  python3 -m pip install --quiet --disable-pip-version-check "$@" ||
    python3 -m pip install --quiet --disable-pip-version-check --user --break-system-packages "$@"
}
# cargo-zigbuild finds zig through `python3 -m ziglang` when no zig is on PATH.
if ! python3 -m ziglang version >/dev/null 2>&1; then
  echo "installing ziglang from PyPI"
  pip_install "ziglang==${ZIGLANG_VERSION:-0.17.1}"
fi
if ! cargo help zigbuild >/dev/null 2>&1; then
  echo "installing cargo-zigbuild from PyPI"
  pip_install "cargo-zigbuild==${CARGO_ZIGBUILD_VERSION:-0.24.1}"
fi
echo "zig $(python3 -m ziglang version), $(cargo-zigbuild -V)"

installed_targets="$(rustup target list --installed)"
missing_targets=()
for p in "${platforms[@]}"; do
  t="$(triple_of "$p")"
  grep -qx "$t" <<<"$installed_targets" || missing_targets+=("$t")
done
if [ ${#missing_targets[@]} -gt 0 ]; then
  rustup target add "${missing_targets[@]}"
fi

# llvm-nm / llvm-objdump read ELF, Mach-O and PE alike (used by check-binaries.sh).
if ! rustup component list --installed | grep -q '^llvm-tools'; then
  rustup component add llvm-tools
fi

if ! command -v file >/dev/null; then
  echo "installing file (apt)"
  as_root() { if [ "$(id -u)" = 0 ]; then "$@"; else sudo "$@"; fi; }
  export DEBIAN_FRONTEND=noninteractive
  as_root apt-get install -y --no-install-recommends file >/dev/null ||
    { as_root apt-get update -qq && as_root apt-get install -y --no-install-recommends file >/dev/null; }
fi

# ---------------------------------------------------------------- builds
# One cargo target dir for all cross builds, apart from target/release used by
# `npm run build`: host build scripts and proc macros are then built once for
# every platform, and a cross build never invalidates the native one.
target_dir="$root/target/cross"
napi="$root/node_modules/.bin/napi"
[ -x "$napi" ] || { echo "build-all: $napi not found; run npm ci first" >&2; exit 2; }

declare -A took
for p in "${platforms[@]}"; do
  t="$(triple_of "$p")"
  out="npm/$p/readfile-utf8.$p.node"
  section "build $p ($t)"
  rm -f "$out"
  t0=$SECONDS
  case "$p" in
    win32-*)
      # `napi build -x` sends Windows targets to cargo-xwin (MSVC only, and it
      # downloads the MSVC CRT from Microsoft), so this one goes through
      # cargo-zigbuild directly, with zig's mingw-w64 and libc++.
      # napi-build insists on a libnode.dll to link against, even though the
      # `dyn-symbols` feature makes the addon look every napi_* function up in
      # the host process at load time: give it an empty import library.
      stub="$target_dir/libnode-stub"
      mkdir -p "$stub"
      [ -f "$stub/libnode.a" ] || printf '!<arch>\n' >"$stub/libnode.a"
      [ -f "$stub/libnode.dll" ] || : >"$stub/libnode.dll"
      # zig drops the export list rustc hands the linker as `-Wl,list.def`,
      # and a MinGW DLL without one exports every global symbol; a .def given
      # as a plain input is honoured, so export the entry point alone, as on
      # the other platforms.
      printf 'EXPORTS\n    napi_register_module_v1\n' >"$stub/exports.def"
      LIBNODE_PATH="$stub" CARGO_TARGET_X86_64_PC_WINDOWS_GNU_RUSTFLAGS="-C link-arg=$stub/exports.def" \
        cargo zigbuild --release --target "$t" --target-dir "$target_dir"
      cp "$target_dir/$t/release/readfile_utf8.dll" "$out"
      ;;
    *)
      # `.2.17` pins the glibc the binary links against (cargo-zigbuild strips
      # it before cargo sees the triple); musl needs no pin. napi adds
      # `-C target-feature=-crt-static` for musl, without which there is no
      # cdylib.
      # macOS: the oldest release Node supports on that CPU (zig would
      # otherwise stamp its own, much newer, minimum into the binary).
      zig_target="$t"
      case "$t" in
        *-linux-gnu) zig_target="$t.2.17" ;;
        x86_64-apple-darwin) export MACOSX_DEPLOYMENT_TARGET=10.15 ;;
        aarch64-apple-darwin) export MACOSX_DEPLOYMENT_TARGET=11.0 ;;
      esac
      "$napi" build --platform --release --no-js -x \
        --target "$zig_target" --target-dir "$target_dir" \
        --output-dir "npm/$p"
      unset MACOSX_DEPLOYMENT_TARGET
      ;;
  esac
  took[$p]=$((SECONDS - t0))
  [ -f "$out" ] || { echo "build-all: $out was not produced" >&2; exit 1; }
done

# ---------------------------------------------------------------- checks
section "check binaries"
bash scripts/check-binaries.sh "${platforms[@]}"

section "summary"
printf '%-18s %8s %10s\n' platform "build s" "bytes"
for p in "${platforms[@]}"; do
  printf '%-18s %8d %10d\n' "$p" "${took[$p]}" "$(stat -c %s "npm/$p/readfile-utf8.$p.node")"
done
echo "done in $((SECONDS - started)) s"
