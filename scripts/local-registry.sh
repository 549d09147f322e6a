#!/usr/bin/env bash
# A throwaway npm registry on 127.0.0.1: Verdaccio (from the npm registry,
# pinned, cached by get-tool.sh), its storage in <dir>, no uplinks (it serves
# only what is published to it), one user whose token <dir>/npmrc holds.
#
#   local-registry.sh start <dir>   prints the registry's URL once it answers;
#                                   writes <dir>/npmrc (registry and token) and <dir>/pid
#   local-registry.sh stop <dir>    stops the Verdaccio that start began
#
# Verdaccio needs Node 22 or newer: it runs on the pinned Node below
# (scripts/get-node.sh), whatever Node is on PATH.
set -euo pipefail
cd "$(dirname "$0")/.."
VERDACCIO_VERSION=6.10.4
VERDACCIO_NODE=26.12.1

command="${1:-}"
dir="${2:-}"
[ -n "$dir" ] || { echo "usage: local-registry.sh start|stop <dir>" >&2; exit 2; }

case "$command" in
  stop)
    if [ -f "$dir/pid" ]; then
      pid="$(cat "$dir/pid")"
      kill "$pid" 2>/dev/null || true
      for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
      kill -9 "$pid" 2>/dev/null || true
      rm -f "$dir/pid"
    fi
    exit 0
    ;;
  start) ;;
  *) echo "usage: local-registry.sh start|stop <dir>" >&2; exit 2 ;;
esac

node="$(bash scripts/get-node.sh "$VERDACCIO_NODE")"
verdaccio="$(bash scripts/get-tool.sh verdaccio "$VERDACCIO_VERSION")"
mkdir -p "$dir/storage"
port="$("$node" -e 'const s = require("net").createServer().listen(0, "127.0.0.1", () => { console.log(s.address().port); s.close() })')"
url="http://127.0.0.1:$port/"
cat >"$dir/config.yaml" <<YAML
storage: $dir/storage
auth:
  htpasswd:
    file: $dir/htpasswd
    max_users: 1
uplinks: {}
packages:
  '**':
    access: \$all
    publish: \$authenticated
    unpublish: \$authenticated
web:
  enable: false
max_body_size: 64mb
log: { type: stdout, format: pretty, level: warn }
YAML
"$node" "$verdaccio/bin/verdaccio" --config "$dir/config.yaml" --listen "127.0.0.1:$port" >"$dir/verdaccio.log" 2>&1 &
echo $! >"$dir/pid"

# Waits until it answers, then adds the user and keeps its token.
if ! token="$("$node" -e '
  const url = process.argv[1]
  const deadline = Date.now() + 60_000
  ;(async () => {
    for (;;) {
      try { if ((await fetch(url + "-/ping")).ok) break } catch {}
      if (Date.now() > deadline) throw new Error("Verdaccio did not answer in 60 s")
      await new Promise((r) => setTimeout(r, 200))
    }
    const res = await fetch(url + "-/user/org.couchdb.user:ci", {
      method: "PUT",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ name: "ci", password: "local-registry-only" }),
    })
    const body = await res.json()
    if (!body.token) throw new Error("no token: " + JSON.stringify(body))
    console.log(body.token)
  })().catch((e) => { console.error(e.message); process.exit(1) })
' "$url")"; then
  echo "local-registry: Verdaccio did not start; its log:" >&2
  cat "$dir/verdaccio.log" >&2
  bash "$0" stop "$dir"
  exit 1
fi
printf 'registry=%s\n//127.0.0.1:%s/:_authToken=%s\n' "$url" "$port" "$token" >"$dir/npmrc"
echo "$url"
