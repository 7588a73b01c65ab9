#!/usr/bin/env bash
# bench/instructions.sh [LUA]: instructions per message (callgrind) for the
# request round trip of bench/run.lua, jrpc next to the lua-cjson loop.
# Each figure is (count at 2N - count at N) / N, so start-up cancels out.
set -euo pipefail
cd "$(dirname "$0")/.."
LUA=${1:-lua5.4}
N=${IR_MESSAGES:-20000}

count() {  # impl message messages -> total instructions
  valgrind --tool=callgrind --callgrind-out-file=/dev/null \
    "$LUA" bench/count_step.lua "$1" "$2" "$3" 2>&1 |
    sed -n 's/.*Collected : \([0-9]*\).*/\1/p'
}

per_message() {
  local a b
  a=$(count "$1" "$2" "$N")
  b=$(count "$1" "$2" $((2 * N)))
  echo $(((b - a) / N))
}

echo "## Instructions per request round trip ($LUA, callgrind)"
echo
echo "| message | jrpc | lua-cjson loop | lua-cjson / jrpc |"
echo "| --- | ---: | ---: | ---: |"
# declared: positional params for a handler behind a jrpc.params
# declaration (checked and handed over named); the lua-cjson loop, which has
# none, takes the same message as plain positional params
for msg in positional named declared; do
  j=$(per_message jrpc_loop "$msg")
  c=$(per_message cjson_loop "$msg")
  echo "| $msg | $j | $c | $(awk -v c="$c" -v j="$j" 'BEGIN { printf "%.2f", c / j }') |"
done

# Pipelined: reads of 16 messages with a new id each (bench/count_pipelined.lua),
# what a server and a client do per message under load; the making of the
# input is counted on its own and taken off.
count_pipelined() {  # mode messages -> total instructions
  valgrind --tool=callgrind --callgrind-out-file=/dev/null \
    "$LUA" bench/count_pipelined.lua "$1" "$2" 2>&1 |
    sed -n 's/.*Collected : \([0-9]*\).*/\1/p'
}
pipelined_per_message() {
  local a b
  a=$(count_pipelined "$1" "$N")
  b=$(count_pipelined "$1" $((2 * N)))
  echo $(((b - a) / N))
}
echo
echo "## Instructions per message in reads of 16 ($LUA, callgrind, the input's making taken off)"
echo
echo "| side | jrpc |"
echo "| --- | ---: |"
for side in server client; do
  echo "| $side | $(($(pipelined_per_message "$side") - $(pipelined_per_message "${side}_input"))) |"
done
echo "| client, from coroutines | $(($(pipelined_per_message client_co) - $(pipelined_per_message client_input))) |"
