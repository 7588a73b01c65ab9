#!/bin/bash
# make test-love: examples/love (a LÖVE game) against examples/tcp_server.lua.
# Starts the server on a free port, runs the game under Xvfb with a time
# bound, and passes when the game exits 0 and printed the exact summary.
set -u
want="love: 3 answers, 1 timeout, 1 error"
dir=$(mktemp -d /tmp/jrpc-love-XXXX)
server_pid=
cleanup () {
  [ -n "$server_pid" ] && kill "$server_pid" 2>/dev/null && wait "$server_pid" 2>/dev/null
  rm -rf "$dir"
}
trap cleanup EXIT

lua5.4 examples/tcp_server.lua --port 0 2>"$dir/server.log" &
server_pid=$!
port=
for _ in $(seq 1 50); do  # at most 5 s
  port=$(sed -n 's/^listening on 127\.0\.0\.1:\([0-9]*\)$/\1/p' "$dir/server.log")
  [ -n "$port" ] && break
  sleep 0.1
done
if [ -z "$port" ]; then
  echo "test-love: the server did not start:"; cat "$dir/server.log"; exit 1
fi
echo "test-love: server on 127.0.0.1:$port; xvfb-run -a love examples/love --port $port"
timeout 60 xvfb-run -a love examples/love --port "$port" >"$dir/love.out" 2>&1
rc=$?
cat "$dir/love.out"
if [ "$rc" != 0 ]; then echo "test-love: FAILED: love exited $rc"; exit 1; fi
if ! grep -qxF "$want" "$dir/love.out"; then echo "test-love: FAILED: no line \"$want\""; exit 1; fi
echo "test-love: ok"
