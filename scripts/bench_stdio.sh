#!/usr/bin/env bash
# scripts/bench_stdio.sh: `make bench-stdio`. The stdio servers under each of
# three clients (loadgen, Node, jrpc on luv) at 16/64/256 in flight and the
# three side by side (bench/summary.lua), latency with one in flight (Node),
# the requests that pay for the collector, memory with 10,000 in flight, and
# the plot; the Markdown goes to the terminal and to $BENCH_OUT/stdio.md,
# the plot to $BENCH_OUT/pipe.png. A failed run fails after the rest ran.
mkdir -p "$BENCH_OUT"; rc=0; : > "$BENCH_OUT/stdio.md"
for c in loadgen node jrpc; do
  NODE_CLIENT=$c lua5.4 bench/node_pipe.lua | tee -a "$BENCH_OUT/stdio.md"
  [ "${PIPESTATUS[0]}" = 0 ] || rc=1
done
for b in summary latency gc_inside memory; do
  lua5.4 bench/$b.lua | tee -a "$BENCH_OUT/stdio.md"; [ "${PIPESTATUS[0]}" = 0 ] || rc=1
done
lua5.4 bench/plot.lua || rc=1
echo "bench-stdio: tables in $BENCH_OUT/stdio.md"; exit $rc
