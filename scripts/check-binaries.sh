#!/usr/bin/env bash
# Checks that each npm/<platform>/readfile-utf8.<platform>.node is what its
# package claims: the object format and CPU (`file`), the libc it links against,
# a C++ runtime linked in statically, and the Node-API entry point exported.
# Prints what each binary needs at load time; exits 1 if any check fails.
#
#   bash scripts/check-binaries.sh [platform…]    # default: every npm/*/ built
set -euo pipefail
cd "$(dirname "$0")/.."

# Highest glibc symbol version a linux-*-gnu binary may need (build-all.sh
# links against this one; older distros would refuse a newer symbol).
MAX_GLIBC="2.17"

# llvm-tools from rustup read ELF, Mach-O and PE; fall back to the PATH.
host="$(rustc -vV | sed -n 's/^host: //p')"
llvm_bin="$(rustc --print sysroot)/lib/rustlib/$host/bin"
tool() { if [ -x "$llvm_bin/$1" ]; then echo "$llvm_bin/$1"; else command -v "$1" || { echo "check-binaries: $1 not found (rustup component add llvm-tools)" >&2; exit 2; }; fi; }
NM="$(tool llvm-nm)"
OBJDUMP="$(tool llvm-objdump)"
READOBJ="$(tool llvm-readobj)"

platforms=("$@")
if [ ${#platforms[@]} -eq 0 ]; then
  for f in npm/*/readfile-utf8.*.node; do [ -e "$f" ] && platforms+=("$(basename "$(dirname "$f")")"); done
  [ ${#platforms[@]} -gt 0 ] || { echo "check-binaries: no npm/*/readfile-utf8.*.node built" >&2; exit 1; }
fi

failures=0
fail() { echo "  FAIL: $*"; failures=$((failures + 1)); }

for p in "${platforms[@]}"; do
  f="npm/$p/readfile-utf8.$p.node"
  echo "$p: $f"
  if [ ! -f "$f" ]; then fail "missing"; continue; fi
  desc="$(file -b "$f")"
  echo "  file: $desc"

  case "$p" in
    darwin-x64) MAX_MACOS="10.15" ;;
    darwin-arm64) MAX_MACOS="11.0" ;;
  esac
  case "$p" in
    linux-x64-*) want='^ELF 64-bit LSB shared object, x86-64' ;;
    linux-arm64-*) want='^ELF 64-bit LSB shared object, ARM aarch64' ;;
    darwin-x64) want='^Mach-O 64-bit x86_64 dynamically linked shared library' ;;
    darwin-arm64) want='^Mach-O 64-bit arm64 dynamically linked shared library' ;;
    win32-x64-*) want='^PE32\+ executable \(DLL\).*x86-64' ;;
    *) fail "no expectations for platform $p"; continue ;;
  esac
  grep -qE "$want" <<<"$desc" || fail "expected file(1) to say /$want/"

  case "$p" in
    linux-*)
      needed="$("$READOBJ" --needed-libs "$f" | sed -n '/^NeededLibraries \[/,/^\]/{ /[][]/d; s/^ *//p; }')"
      echo "  NEEDED: $(echo $needed)"
      exported="$("$NM" -D --defined-only "$f" | awk '$2 == "T" { print $3 }')"
      glibc="$("$OBJDUMP" -T "$f" | grep -oE 'GLIBC_[0-9]+(\.[0-9]+)+' | sed 's/GLIBC_//' | sort -uV | tail -1 || true)"
      if grep -qE 'libstdc\+\+|libc\+\+' <<<"$needed"; then fail "links a shared C++ runtime"; fi
      case "$p" in
        *-gnu)
          grep -qx 'libc.so.6' <<<"$needed" || fail "no libc.so.6 in NEEDED: not linked against glibc"
          echo "  newest glibc symbol: ${glibc:-none}"
          if [ -n "$glibc" ] && [ "$(printf '%s\n%s\n' "$glibc" "$MAX_GLIBC" | sort -V | tail -1)" != "$MAX_GLIBC" ]; then
            fail "needs glibc $glibc, newer than $MAX_GLIBC"
          fi
          ;;
        *-musl)
          # zig's musl names libc `libc.so`; musl's loader takes any libc.* as itself.
          grep -qE '^libc\.(so|musl-[a-z0-9_]+\.so\.1)$' <<<"$needed" || fail "no musl libc (libc.so or libc.musl-*) in NEEDED"
          if grep -qx 'libc.so.6' <<<"$needed" || [ -n "$glibc" ]; then fail "references glibc"; fi
          # Where this host has musl's loader for the binary's CPU (Debian's
          # `musl` package), let it resolve the binary's libraries and symbols.
          ldso="/lib/ld-musl-$(case "$p" in *-x64-*) echo x86_64 ;; *) echo aarch64 ;; esac).so.1"
          if [ -x "$ldso" ] && [ "$(uname -m)" = "$(basename "$ldso" .so.1 | sed 's/^ld-musl-//')" ]; then
            if out="$("$ldso" --list "$f" 2>&1)" && ! grep -qi error <<<"$out"; then
              echo "  musl loader: $(echo $out)"
            else
              fail "musl's loader cannot load it: $out"
            fi
          fi
          ;;
      esac
      ;;
    darwin-*)
      # --dylibs-used lists the library's own install name too; leave it out.
      id="$("$OBJDUMP" --macho --dylib-id "$f" | tail -n +2 | awk '{ print $1 }')"
      needed="$("$OBJDUMP" --macho --dylibs-used "$f" | tail -n +2 | awk '{ print $1 }' | grep -vxF "$id" || true)"
      echo "  dylibs: $(echo $needed)"
      minos="$("$OBJDUMP" --macho --private-headers "$f" | awk '$1 == "minos" { print $2; exit }')"
      echo "  minimum macOS: ${minos:-unknown}"
      if [ -z "$minos" ] || [ "$(printf '%s\n%s\n' "$minos" "$MAX_MACOS" | sort -V | tail -1)" != "$MAX_MACOS" ]; then
        fail "minimum macOS ${minos:-unknown} is newer than $MAX_MACOS (the oldest Node 20 runs on for this CPU)"
      fi
      if grep -qE 'libc\+\+|libstdc\+\+' <<<"$needed"; then fail "links a shared C++ runtime"; fi
      exported="$("$OBJDUMP" --macho --exports-trie "$f" | awk '{ print $NF }' | sed 's/^_//')"
      grep -qx '/usr/lib/libSystem.B.dylib' <<<"$needed" || fail "does not link libSystem"
      ;;
    win32-*)
      needed="$("$OBJDUMP" -p "$f" | sed -n 's/^ *DLL Name: //p')"
      echo "  DLL imports: $(echo $needed)"
      exported="$("$OBJDUMP" -p "$f" | sed -n '/^Export Table:/,/^$/p' | awk 'NF == 3 && $1 ~ /^[0-9]+$/ { print $3 }')"
      # None of these exist on a stock Windows: the MinGW runtime must be
      # static, and node.exe's napi_* are looked up at load time (dyn-symbols).
      bad="$(grep -iE '^(libstdc\+\+|libgcc_s|libwinpthread|libc\+\+|node|libnode)' <<<"$needed" || true)"
      [ -z "$bad" ] || fail "imports DLLs absent from Windows: $(echo $bad)"
      # rustc's export list reaches zig only as build-all.sh passes it; without
      # it a MinGW DLL exports every global symbol.
      n="$(grep -c . <<<"$exported" || true)"
      [ "$n" -eq 1 ] || fail "exports $n symbols, not napi_register_module_v1 alone"
      ;;
  esac
  if grep -qx 'napi_register_module_v1' <<<"$exported"; then
    echo "  exports napi_register_module_v1"
  else
    fail "does not export napi_register_module_v1"
  fi
  # The one this host can run: load it into Node (the zig-built binary, not
  # the local gcc build the tests use) and ask it which engine it has.
  if [ "$p" = linux-x64-gnu ] && [ "$(uname -m)" = x86_64 ] && command -v node >/dev/null; then
    if engine="$(node -e 'console.log(require(process.argv[1]).engine())' "$PWD/$f" 2>&1)"; then
      echo "  loads in Node $(node --version): engine() = $engine"
    else
      fail "Node cannot load it: $engine"
    fi
  fi
done

if [ "$failures" -gt 0 ]; then
  echo "check-binaries: $failures check(s) FAILED" >&2
  exit 1
fi
echo "check-binaries: ${#platforms[@]} binaries OK"
