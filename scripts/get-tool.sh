#!/usr/bin/env bash
# Prints the folder of an npm package installed, with its dependencies, from
# the npm registry into a cache folder outside the repo (reused on later runs):
#   get-tool.sh verdaccio 6.10.4      ->  <cache>/tools/verdaccio@6.10.4/node_modules/verdaccio
# The install check's tools come this way, each at the exact version it pins.
set -euo pipefail
name="${1:?usage: get-tool.sh <npm package> <exact version>}"
version="${2:?usage: get-tool.sh <npm package> <exact version>}"
[[ "$version" =~ ^[0-9]+\.[0-9]+\.[0-9]+$ ]] || { echo "get-tool.sh: '$version' is not an exact version" >&2; exit 2; }
dir="${READFILE_UTF8_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/readfile-utf8}/tools/${name//\//+}@$version"
if [ ! -f "$dir/.installed" ]; then
  rm -rf "$dir"
  mkdir -p "$dir"
  echo '{ "private": true }' >"$dir/package.json"
  if ! (cd "$dir" && npm install --no-audit --no-fund --no-save --loglevel=error --ignore-scripts=false "$name@$version" >&2); then
    rm -rf "$dir"
    echo "get-tool.sh: could not install $name@$version from the npm registry" >&2
    exit 1
  fi
  touch "$dir/.installed"
fi
echo "$dir/node_modules/$name"
