#!/usr/bin/env bash
# Prints the path of a Deno binary taken from the npm registry's `@deno/<os>-<arch>`
# package and unpacked into a cache folder outside the repo (reused on later runs),
# for the checks under Deno (scripts/runtime-check.mjs, scripts/install-check.sh)
# and the bench's runs under Deno (benchmark/runtimes.js).
#   get-deno.sh         the version the checks pin (DENO_VERSION below)
#   get-deno.sh 2.9.6   that exact version
#   get-deno.sh latest  the newest published today
set -euo pipefail
DENO_VERSION=2.9.6
case "$(uname -s)-$(uname -m)" in
  Linux-x86_64) pkg=linux-x64-glibc ;;
  Linux-aarch64) pkg=linux-arm64-glibc ;;
  Darwin-arm64) pkg=darwin-arm64 ;;
  Darwin-x86_64) pkg=darwin-x64 ;;
  *) echo "get-deno.sh: no Deno package known for $(uname -s) $(uname -m)" >&2; exit 1 ;;
esac
version="${1:-$DENO_VERSION}"
[ "$version" != latest ] || version="$(npm view "@deno/$pkg" version)"
if ! [[ "$version" =~ ^[0-9]+\.[0-9]+\.[0-9]+$ ]]; then
  echo "get-deno.sh: expected a version such as 2.9.6, got '$version'" >&2
  exit 2
fi
dir="${READFILE_UTF8_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/readfile-utf8}/deno/$version"
if [ ! -x "$dir/package/deno" ]; then
  mkdir -p "$dir"
  if ! ( cd "$dir" && npm pack "@deno/$pkg@$version" --silent >/dev/null && tar xzf deno-*.tgz && rm -f deno-*.tgz ); then
    rm -rf "$dir"
    echo "get-deno.sh: could not fetch @deno/$pkg@$version from the npm registry" >&2
    exit 1
  fi
fi
echo "$dir/package/deno"
