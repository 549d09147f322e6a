#!/usr/bin/env bash
# Prints the path of a Bun or Deno binary taken from the npm registry (Bun's
# `@oven/bun-<os>-<arch>`, Deno's `@deno/<os>-<arch>` package) and unpacked into
# a cache folder outside the repo (reused on later runs), for the checks under
# those runtimes (scripts/test-runtime.js, scripts/install-check.sh) and the
# bench's comparisons with them (benchmark/runtimes.js).
#   get-runtime.sh bun          the version the checks pin (below)
#   get-runtime.sh deno 2.9.6   that exact version
#   get-runtime.sh bun latest   the newest published today
set -euo pipefail
runtime="${1:-}"
case "$runtime" in
  bun) pinned=1.4.5 ;;
  deno) pinned=2.9.6 ;;
esac
case "$runtime-$(uname -s)-$(uname -m)" in
  bun-Linux-x86_64) pkg=@oven/bun-linux-x64 bin=bin/bun ;;
  bun-Linux-aarch64) pkg=@oven/bun-linux-aarch64 bin=bin/bun ;;
  bun-Darwin-arm64) pkg=@oven/bun-darwin-aarch64 bin=bin/bun ;;
  bun-Darwin-x86_64) pkg=@oven/bun-darwin-x64 bin=bin/bun ;;
  deno-Linux-x86_64) pkg=@deno/linux-x64-glibc bin=deno ;;
  deno-Linux-aarch64) pkg=@deno/linux-arm64-glibc bin=deno ;;
  deno-Darwin-arm64) pkg=@deno/darwin-arm64 bin=deno ;;
  deno-Darwin-x86_64) pkg=@deno/darwin-x64 bin=deno ;;
  *) echo "get-runtime.sh: usage: get-runtime.sh bun|deno [version|latest]; no package known for '$runtime' on $(uname -s) $(uname -m)" >&2; exit 2 ;;
esac
version="${2:-$pinned}"
[ "$version" != latest ] || version="$(npm view "$pkg" version)"
if ! [[ "$version" =~ ^[0-9]+\.[0-9]+\.[0-9]+$ ]]; then
  echo "get-runtime.sh: expected a version such as $pinned, got '$version'" >&2
  exit 2
fi
dir="${READFILE_UTF8_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/readfile-utf8}/$runtime/$version"
if [ ! -x "$dir/package/$bin" ]; then
  mkdir -p "$dir"
  if ! ( cd "$dir" && npm pack "$pkg@$version" --silent >/dev/null && tar xzf ./*.tgz && rm -f ./*.tgz ); then
    rm -rf "$dir"
    echo "get-runtime.sh: could not fetch $pkg@$version from the npm registry" >&2
    exit 1
  fi
fi
echo "$dir/package/$bin"
