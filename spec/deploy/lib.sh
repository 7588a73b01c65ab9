# shellcheck shell=bash
# spec/deploy/lib.sh: what the deployment scripts share (sourced by
# spec/deploy/run.sh, spec/deploy/fault.sh and bench/deploy_load.sh, from
# the repository root, with $lua set to the interpreter free_ports runs on).

# A port p such that p..p+COUNT-1 are free now: each bound and listened on
# by luv, then released. From 20000-32767, under Linux's ephemeral range
# (32768-60999), where any outgoing connection may hold a port: libuv's
# bind sets SO_REUSEADDR, so bind alone passes on such a port, and the
# server's listen then fails with EADDRINUSE. Seeded by the shell: LuaJIT's
# math.random starts the same way every run, so two runs at once (both
# interpreters' tests, two checkouts) would keep picking the same ports.
free_ports () {
  COUNT=$1 SEED=$((RANDOM * 32768 + RANDOM)) "${lua:?the caller sets lua}" -e '
    local uv, n = require "luv", tonumber(os.getenv("COUNT"))
    math.randomseed(tonumber(os.getenv("SEED")))
    for _ = 1, 200 do
      local base, ok = math.random(20000, 32767 - n), true
      local held = {}
      for i = 0, n - 1 do
        local t = uv.new_tcp(); held[#held + 1] = t
        if not (t:bind("127.0.0.1", base + i) and t:listen(1, function() end)) then ok = false; break end
      end
      for _, t in ipairs(held) do t:close() end
      uv.run("nowait")
      if ok then print(base); return end
    end
    os.exit(1)'
}

# Wait until LOG has COUNT "listening on" lines (a server each), while PID
# lives; else print LOG and fail.
wait_listening () {
  local log=$1 count=$2 pid=$3
  for _ in $(seq 100); do
    [ "$(grep -c '^listening on' "$log" || true)" = "$count" ] && return 0
    kill -0 "$pid" 2>/dev/null || { cat "$log" >&2; echo "deploy: the servers exited" >&2; return 1; }
    sleep 0.1
  done
  cat "$log" >&2
  echo "deploy: not all $count servers listen" >&2
  return 1
}

# examples/deploy/nginx.conf (written for 4 workers) for N of them, with
# its placeholders filled: PREFIX, LISTEN, workers on BASE..BASE+N-1. For
# N < 4 the lines naming workers N..3 go and the session-id map matches
# 0..N-1 only, so the file stays the one the README shows.
nginx_conf () {
  local prefix=$1 listen=$2 base=$3 n=$4
  local drop='' i
  for i in $(seq "$n" 3); do drop="$drop/@W$i@/d;"; done
  sed -e "$drop" -e "s|\[0-3\]|[0-$((n - 1))]|" -e "s|@PREFIX@|$prefix|g" -e "s|@LISTEN@|$listen|g" \
    -e "s|@W0@|$base|g" -e "s|@W1@|$((base + 1))|g" -e "s|@W2@|$((base + 2))|g" \
    -e "s|@W3@|$((base + 3))|g" examples/deploy/nginx.conf
}

# The pids of the launcher's workers, one a line, in worker order (their
# command lines name `--worker I`).
worker_pids () {
  local launcher=$1 n=$2 i
  for i in $(seq 0 $((n - 1))); do
    pgrep -P "$launcher" -f -- "--worker $i( |\$)"
  done
}

# VmRSS of PID in kB.
rss_kib () { awk '/^VmRSS:/ { print $2 }' "/proc/$1/status"; }
