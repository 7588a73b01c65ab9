#!/usr/bin/env bash
# spec/deploy/run.sh [LUA]: the deployment of examples/deploy, tested.
# 4 workers of examples/mcp/everything_server.lua (examples/deploy/workers.lua,
# one shared requestState key), nginx in front (examples/deploy/nginx.conf,
# unprivileged, its prefix in a temp dir), all on 127.0.0.1; then the
# official conformance suite's 2026-07-28 requirements through nginx: all
# 37 scored scenarios must pass, and the rounds of at least one
# input_required scenario must have reached two or more workers (their
# `worker N: tools/call NAME` lines); then the 2025-11-25 requirements,
# whose legacy session requests must each reach the worker named in the
# session id (nginx's access log). Ends with SIGTERM to the launcher:
# every worker must drain and exit 0.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
lua=${1:-lua5.4}
. spec/deploy/lib.sh
command -v nginx > /dev/null || { echo "deploy: nginx missing (make deps)" >&2; exit 2; }
dir=$(mktemp -d /tmp/jrpc-deploy-XXXX)
launcher= nginx_started=
cleanup () {
  [ -n "$nginx_started" ] && nginx -p "$dir" -c "$dir/nginx.conf" -s stop 2>/dev/null || true
  [ -n "$launcher" ] && kill "$launcher" 2>/dev/null || true
  rm -rf "$dir"
}
trap cleanup EXIT

base=$(free_ports 5)
listen=$((base + 4))
head -c 32 /dev/urandom > "$dir/state.key"
chmod 600 "$dir/state.key"
JRPC_MCP_LOG_CALLS=1 "$lua" examples/deploy/workers.lua --workers 4 --base-port "$base" \
  --state-key-file "$dir/state.key" --allowed-host "127.0.0.1:$listen" \
  -- examples/mcp/everything_server.lua 2> "$dir/workers.log" &
launcher=$!
wait_listening "$dir/workers.log" 4 "$launcher"
nginx_conf "$dir" "$listen" "$base" 4 > "$dir/nginx.conf"
nginx -p "$dir" -c "$dir/nginx.conf" -g 'daemon on;'   # forks, so its pid file says it is up
nginx_started=1
echo "deploy: 4 workers on 127.0.0.1:$base-$((base + 3)), nginx on 127.0.0.1:$listen"

out="$dir/conformance.log"
rc=0
MCP_URL="http://127.0.0.1:$listen/mcp" bash spec/mcp/conformance.sh 2026-07-28 "$lua" > "$out" 2>&1 || rc=$?
cat "$out"
[ "$rc" = 0 ] || { echo "deploy: the conformance suite failed through nginx (exit $rc)"; exit 1; }
# The scored scenarios: those of the summary not listed as "Not scored".
read -r scored passed < <(awk '
  /^=== SUMMARY ===/ { s = 1; next }
  /^Total:/ { s = 0 }
  /^Not scored/ { ns = 1; next }
  s && /^[^ ].*: [0-9]+ passed/ { name = $2; sub(/:$/, "", name); ok[name] = ($1 == "\342\234\223") }
  ns && /^  / { skip[$2] = 1 }
  END { n = 0; p = 0; for (k in ok) if (!(k in skip)) { n++; p += ok[k] } print n, p }' "$out")
echo "deploy: scored scenarios through nginx: $passed/$scored passed"
[ "$scored" = 37 ] && [ "$passed" = 37 ] || { echo "deploy: expected 37/37"; exit 1; }

# How many distinct workers ran the rounds of each input_required tool.
spread=$(sed -n 's/^worker \([0-9]*\): tools\/call \(test_input_required[a-z_]*\)$/\2 \1/p' "$dir/workers.log" \
  | sort -u | awk '{ n[$1]++ } END { for (t in n) print t, n[t] }' | sort)
echo "deploy: workers reached per input_required tool:"
printf '%s\n' "$spread" | sed 's/^/  /'
best=$(printf '%s\n' "$spread" | awk 'BEGIN { m = 0 } $2 > m { m = $2 } END { print m }')
echo "deploy: the rounds of the multi-round scenario, as the workers logged them:"
grep 'tools/call test_input_required_result_multi_round$' "$dir/workers.log" | sed 's/^/  /'
[ "$best" -ge 2 ] || { echo "deploy: no input_required scenario crossed workers"; exit 1; }

# Legacy sessions through nginx: the 2025-11-25 requirements (30 scored;
# each session's requests must reach the worker that minted it).
legacy="$dir/conformance-legacy.log"
rc=0
MCP_URL="http://127.0.0.1:$listen/mcp" bash spec/mcp/conformance.sh 2025-11-25 "$lua" > "$legacy" 2>&1 || rc=$?
sed -n '/^=== SUMMARY ===/,$p' "$legacy"
[ "$rc" = 0 ] || { echo "deploy: the 2025-11-25 suite failed through nginx (exit $rc)"; exit 1; }
# Every request naming a session went to the worker in its id (port base+N).
read -r routed misrouted < <(awk -v base="$base" '
  match($0, /sid=w[0-9]+-/) { w = substr($0, RSTART + 5, RLENGTH - 6) + 0
    ok = index($0, "upstream=127.0.0.1:" (base + w)) > 0; r += ok; m += !ok }
  END { print r + 0, m + 0 }' "$dir/access.log")
echo "deploy: 2025-11-25 through nginx: $routed requests with a session id, all to its worker ($misrouted elsewhere)"
[ "$routed" -gt 0 ] && [ "$misrouted" = 0 ] || { echo "deploy: legacy session routing broken"; exit 1; }

kill -TERM "$launcher"
wait "$launcher" && lrc=0 || lrc=$?
launcher=
grep -E '^worker [0-9]: (draining|stopped)|^workers: worker' "$dir/workers.log" | sort
[ "$lrc" = 0 ] || { echo "deploy: the launcher exited $lrc after SIGTERM"; exit 1; }
[ "$(grep -c '^worker [0-9]: stopped' "$dir/workers.log")" = 4 ] \
  || { echo "deploy: not every worker drained and stopped"; exit 1; }
echo "deploy: conformance 37/37 through nginx, input_required rounds on $best workers, graceful stop of 4"
