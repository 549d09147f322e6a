#!/usr/bin/env bash
# Prints the path of a Bun binary taken from the npm registry's `@oven/bun-<os>-<arch>`
# package and unpacked into a cache folder outside the repo (reused on later runs),
# for the bench's comparison with Bun (benchmark/runtimes.js) and the checks
# under Bun (scripts/runtime-check.mjs, scripts/install-check.sh).
#   get-bun.sh         the version the checks pin (BUN_VERSION below)
#   get-bun.sh 1.4.5   that exact version
#   get-bun.sh latest  the newest published today
set -euo pipefail
BUN_VERSION=1.4.5
case "$(uname -s)-$(uname -m)" in
  Linux-x86_64) pkg=bun-linux-x64 ;;
  Linux-aarch64) pkg=bun-linux-aarch64 ;;
  Darwin-arm64) pkg=bun-darwin-aarch64 ;;
  Darwin-x86_64) pkg=bun-darwin-x64 ;;
  *) echo "get-bun.sh: no Bun package known for $(uname -s) $(uname -m)" >&2; exit 1 ;;
esac
version="${1:-$BUN_VERSION}"
[ "$version" != latest ] || version="$(npm view "@oven/$pkg" version)"
if ! [[ "$version" =~ ^[0-9]+\.[0-9]+\.[0-9]+$ ]]; then
  echo "get-bun.sh: expected a version such as 1.4.5, got '$version'" >&2
  exit 2
fi
dir="${READFILE_UTF8_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/readfile-utf8}/bun/$version"
if [ ! -x "$dir/package/bin/bun" ]; then
  mkdir -p "$dir"
  if ! ( cd "$dir" && npm pack "@oven/$pkg@$version" --silent >/dev/null && tar xzf oven-*.tgz && rm -f oven-*.tgz ); then
    rm -rf "$dir"
    echo "get-bun.sh: could not fetch @oven/$pkg@$version from the npm registry" >&2
    exit 1
  fi
fi
echo "$dir/package/bin/bun"
