#!/usr/bin/env bash
# bench/deploy_load.sh: the deployment of examples/deploy under load, next
# to the official TypeScript SDK v2 server, all in one run on 127.0.0.1.
#
# The servers, all serving the tool `add` (bench/servers/mcp_add_server.lua,
# node/mcp_add_server2.js), started together and idle while another runs:
#   jrpc direct       one worker, no nginx                 (lua5.4, luajit)
#   nginx + N         N workers (examples/deploy/workers.lua) behind nginx
#                     (examples/deploy/nginx.conf for N), N = 1, 2, 4
#   SDK v2            @modelcontextprotocol/server + @modelcontextprotocol/node,
#                     one Node process
# Each is driven by build/bench/httpload (tools/call over CONNECTIONS
# keep-alive connections, one request in flight on each) for SECONDS_EACH
# after a 0.5 s warm-up, in ROUNDS rounds that visit every server in turn
# (so a noisy neighbour slows them alike). The table gives the median of
# the rounds of: requests/s; p50 and p99 latency; the CPU the server's
# processes (workers and nginx) used, the client's, and the whole
# machine's busy time (every process, ours or not), in % of one core (the
# machine has `nproc` of them: where its busy share reaches that, more
# workers cannot help, and what it used beyond server and client went to
# other processes); and requests/s over the server's CPU, what a core of
# server buys whoever else shares the machine. Every request of every
# round must be answered right (httpload's exact outcomes), else the run
# fails.
# Then the 100,000-request fault and memory run: spec/deploy/fault.sh with
# WARMUP=20000 REQUESTS=100000 under each interpreter.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
export lua=lua5.4   # lib.sh's free_ports runs on it
. spec/deploy/lib.sh
ROUNDS=${ROUNDS:-5} SECONDS_EACH=${SECONDS_EACH:-2} CONNECTIONS=${CONNECTIONS:-32}
httpload=build/bench/httpload
[ -x "$httpload" ] || { echo "deploy_load: $httpload missing (make bench-tools)" >&2; exit 2; }
dir=$(mktemp -d /tmp/jrpc-load-XXXX)
started=() prefixes=()
cleanup () {
  for p in "${prefixes[@]}"; do nginx -p "$p" -c "$p/nginx.conf" -s stop 2>/dev/null || true; done
  for p in "${started[@]}"; do kill "$p" 2>/dev/null || true; done
  rm -rf "$dir"
}
trap cleanup EXIT

names=() ports=() procs=()   # per server: its label, its port, the pids doing its work
add_server () { names+=("$1"); ports+=("$2"); procs+=("$3"); }

# The port a server that bound port 0 says it listens on.
said_port () { sed -n 's|^listening on http://127.0.0.1:\([0-9]*\)/mcp$|\1|p' "$1"; }

# The lone servers bind port 0 (no race with other processes for a port).
start_direct () {
  local interp=$1 log=$dir/direct-$1.log
  "$interp" bench/servers/mcp_add_server.lua --http 127.0.0.1:0 2> "$log" &
  started+=($!)
  wait_listening "$log" 1 $!
  add_server "jrpc direct, 1 worker ($interp)" "$(said_port "$log")" "$!"
}

start_sdk () {
  local log=$dir/sdk.log
  node node/mcp_add_server2.js 0 2> "$log" &
  started+=($!)
  wait_listening "$log" 1 $!
  add_server "SDK v2 server, 1 process (node)" "$(said_port "$log")" "$!"
}

start_pool () {
  local interp=$1 n=$2 base listen prefix=$dir/nginx-$1-$2 launcher master
  base=$(free_ports $((n + 1)))
  listen=$((base + n))
  "$interp" examples/deploy/workers.lua --workers "$n" --base-port "$base" \
    --allowed-host "127.0.0.1:$listen" -- bench/servers/mcp_add_server.lua 2> "$dir/pool-$interp-$n.log" &
  launcher=$!
  started+=("$launcher")
  wait_listening "$dir/pool-$interp-$n.log" "$n" "$launcher"
  mkdir -p "$prefix"
  nginx_conf "$prefix" "$listen" "$base" "$n" > "$prefix/nginx.conf"
  nginx -p "$prefix" -c "$prefix/nginx.conf" -g 'daemon on;'
  prefixes+=("$prefix")
  master=$(cat "$prefix/nginx.pid")
  add_server "nginx + $n worker$([ "$n" = 1 ] || echo s) ($interp)" "$listen" \
    "$(worker_pids "$launcher" "$n" | tr '\n' ' ')$master $(pgrep -P "$master" | tr '\n' ' ')"
}

# CPU seconds (user + system) the processes have used so far.
cpu_seconds () {
  local ticks=0 p
  for p in "$@"; do ticks=$((ticks + $(awk '{ print $14 + $15 }' "/proc/$p/stat"))); done
  awk -v t="$ticks" -v hz="$(getconf CLK_TCK)" 'BEGIN { printf "%.3f", t / hz }'
}
# CPU seconds the whole machine has been busy (all cores, all processes).
machine_busy () {
  awk -v hz="$(getconf CLK_TCK)" '$1 == "cpu" { printf "%.3f", ($2 + $3 + $4 + $7 + $8 + $9) / hz }' /proc/stat
}
field () { printf '%s\n' "$2" | tr ' ' '\n' | sed -n "s/^$1=//p"; }
median () { printf '%s\n' "$@" | sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }

# One round of server I: "rps p50 p99 server_cpu% client_cpu% machine_cpu%
# requests_per_server_cpu_second".
measure () {
  local i=$1 out t0 t1 c0 c1 m0 m1 client
  # shellcheck disable=SC2086  # procs[i] is a list of pids
  c0=$(cpu_seconds ${procs[$i]}) m0=$(machine_busy) t0=$(date +%s.%N)
  client=$( { TIMEFORMAT='%U %S'; time "$httpload" --port "${ports[$i]}" --connections "$CONNECTIONS" \
    --seconds "$SECONDS_EACH" > "$dir/out"; } 2>&1 )
  t1=$(date +%s.%N) m1=$(machine_busy)
  # shellcheck disable=SC2086
  c1=$(cpu_seconds ${procs[$i]})
  out=$(cat "$dir/out")
  [ "$(field ok "$out")" = "$(field requests "$out")" ] \
    || { echo "deploy_load: ${names[$i]}: not every request answered right: $out" >&2; exit 1; }
  awk -v r="$(field rps "$out")" -v p50="$(field p50_ms "$out")" -v p99="$(field p99_ms "$out")" \
    -v c0="$c0" -v c1="$c1" -v m0="$m0" -v m1="$m1" -v t0="$t0" -v t1="$t1" -v client="$client" 'BEGIN {
      split(client, u, " "); w = t1 - t0
      printf "%s %s %s %.0f %.0f %.0f %.0f\n", r, p50, p99, 100 * (c1 - c0) / w, 100 * (u[1] + u[2]) / w,
        100 * (m1 - m0) / w, r * w / (c1 - c0) }'
}

for interp in lua5.4 luajit; do
  start_direct "$interp"
  for n in 1 2 4; do start_pool "$interp" "$n"; done
done
start_sdk

sdk_version=$(node -p 'require("./node/node_modules/@modelcontextprotocol/server/package.json").version')
node_adapter=$(node -p 'require("./node/node_modules/@modelcontextprotocol/node/package.json").version')
echo "deploy_load: $(date -u +%Y-%m-%d), $(nproc) cores, $(lua5.4 -v 2>&1 | cut -d' ' -f1-2), $(luajit -v | cut -d' ' -f1-2)," \
  "$(nginx -v 2>&1 | sed 's/.*: //'), node $(node --version), @modelcontextprotocol/server $sdk_version +" \
  "@modelcontextprotocol/node $node_adapter; client: build/bench/httpload, $CONNECTIONS connections," \
  "${SECONDS_EACH} s a round, median of $ROUNDS rounds"
# Unmeasured first: V8 compiles the SDK's hot code as it runs, LuaJIT
# traces the workers' (a 0.5 s warm-up a round is too short for either).
for i in "${!names[@]}"; do
  "$httpload" --port "${ports[$i]}" --connections "$CONNECTIONS" --seconds 2 --warmup 0 > /dev/null
done
declare -A results
for round in $(seq "$ROUNDS"); do
  for i in "${!names[@]}"; do results[$i,$round]=$(measure "$i"); done
done

echo "| server | requests/s | p50 ms | p99 ms | server CPU % | client CPU % | machine CPU % | requests per server CPU-second |"
echo "|---|---:|---:|---:|---:|---:|---:|---:|"
declare -A med
for i in "${!names[@]}"; do
  row="| ${names[$i]} |"
  for col in 1 2 3 4 5 6 7; do
    vals=()
    for round in $(seq "$ROUNDS"); do vals+=("$(echo "${results[$i,$round]}" | cut -d' ' -f$col)"); done
    med[$i,$col]=$(median "${vals[@]}")
    row="$row ${med[$i,$col]} |"
  done
  echo "$row"
done

# The target: one jrpc worker at 3x or more the SDK server's requests/s,
# at a lower p99 (the SDK is the last server).
sdk=$((${#names[@]} - 1))
for i in "${!names[@]}"; do
  case ${names[$i]} in "jrpc direct"*|"nginx + 1 worker "*) ;; *) continue ;; esac
  verdict=$(awk -v r="${med[$i,1]}" -v p="${med[$i,3]}" -v sr="${med[$sdk,1]}" -v sp="${med[$sdk,3]}" \
    'BEGIN { printf "%.1fx the SDK server'"'"'s requests/s, p99 %s vs %s ms: %s", r / sr, p, sp,
      (r >= 3 * sr && p < sp) ? "target reached" : "target NOT reached" }')
  echo "deploy_load: ${names[$i]}: $verdict"
done

for interp in lua5.4 luajit; do
  WARMUP=20000 REQUESTS=100000 bash spec/deploy/fault.sh "$interp"
done
