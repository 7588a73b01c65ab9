# shellcheck shell=bash
# spec/deploy/shared.sh: what the workers behind nginx share through Redis
# (their task store and their events), shown with curl through nginx.
# Sourced by spec/deploy/run.sh once its workers (everything servers with
# --task-store-redis, --events-redis and --task-lease-ms $lease_ms) and
# nginx run; uses its $dir (nginx's access.log: the worker, by upstream
# port, of every request), $listen, $base, $launcher and $lease_ms.
#  1. a task made on one worker is read (tasks/get), answered (tasks/update)
#     and cancelled (tasks/cancel) through requests nginx sends to others;
#  2. a tool registered at run time on one worker: notifications/tools/
#     list_changed reaches a listen stream held by another (the listen
#     holds its worker, so least_conn sends the trigger elsewhere);
#  3. a worker killed (SIGKILL) while its task runs: the task is failed by
#     the others once its lease runs out ("Task lost: ...").
# Each request's worker is printed, as nginx logged it.

# shellcheck disable=SC2154  # run.sh's, checked here
: "${dir:?}" "${listen:?}" "${base:?}" "${launcher:?}" "${lease_ms:?}"
url="http://127.0.0.1:$listen/mcp"
CAPS='{"elicitation":{},"extensions":{"io.modelcontextprotocol/tasks":{}}}'
META="\"_meta\":{\"io.modelcontextprotocol/protocolVersion\":\"2026-07-28\",\"io.modelcontextprotocol/clientCapabilities\":$CAPS}"
rpc_id=0
fail () { echo "deploy: $*"; exit 1; }

# The worker that served the request to /mcp?r=TAG, in $worker: nginx logs
# each request once its reply is sent, with the upstream it used (the
# query tags our requests among any others the log gets meanwhile).
worker_of () {
  local _ line port
  for _ in $(seq 100); do
    line=$(grep -F "\"POST /mcp?r=$1 HTTP/1.1\"" "$dir/access.log" || true)
    [ -n "$line" ] && break
    sleep 0.05
  done
  # the last upstream tried (a refused one comes first: "A, B")
  port=$(printf '%s\n' "$line" | sed -n 's/.*[ =]127\.0\.0\.1:\([0-9]*\)$/\1/p')
  [ -n "$port" ] || fail "nginx logged no upstream for request r=$1"
  worker=$((port - base))
}

# post METHOD NAME PARAMS: the reply in $dir/reply, its worker in $worker.
post () {
  rpc_id=$((rpc_id + 1))
  curl -s -m 10 -o "$dir/reply" -H 'Content-Type: application/json' \
    -H 'Accept: application/json, text/event-stream' -H 'MCP-Protocol-Version: 2026-07-28' \
    -H "Mcp-Method: $1" -H "Mcp-Name: $2" \
    --data-binary "{\"jsonrpc\":\"2.0\",\"id\":$rpc_id,\"method\":\"$1\",\"params\":{$3,$META}}" "$url?r=$rpc_id" \
    || fail "$1 through nginx: curl failed"
  worker_of "$rpc_id"
}
field () { grep -o "\"$1\":\"[^\"]*\"" "$dir/reply" | head -n 1 | sed 's/.*:"\(.*\)"/\1/'; }

# A task of TOOL (ARGS) made through nginx: its id in $task, worker in $made_on.
make_task () {
  post tools/call "$1" "\"name\":\"$1\",\"arguments\":$2"
  task=$(field taskId) made_on=$worker
  [ -n "$task" ] || { cat "$dir/reply"; fail "no task from $1"; }
}
get () { post tasks/get "$1" "\"taskId\":\"$1\""; status=$(field status); }

# 1. Made on one worker, finished through others. Nginx balances each
# request on its own (least_conn: with none in flight, in turn), so a
# scenario whose finishing request lands on the worker that made the task
# proves nothing and is run again (at most 4 times).
crossed=
for _ in 1 2 3 4; do
  make_task confirm_delete '{"filename":"shared.txt"}'
  trail="made on $made_on"
  for _ in $(seq 50); do
    get "$task"; trail="$trail, get on $worker: $status"
    [ "$status" = input_required ] && break
    sleep 0.1
  done
  [ "$status" = input_required ] || fail "task $task never asked: $trail"
  post tasks/update "$task" "\"taskId\":\"$task\",\"inputResponses\":{\"confirm\":{\"action\":\"accept\",\"content\":{\"confirm\":true}}}"
  updated_on=$worker trail="$trail, update on $worker"
  for _ in $(seq 50); do
    get "$task"; trail="$trail, get on $worker: $status"
    [ "$status" = completed ] && break
    sleep 0.1
  done
  [ "$status" = completed ] || fail "task $task did not complete: $trail"
  grep -q '"text":"Deleted shared.txt"' "$dir/reply" || { cat "$dir/reply"; fail "task $task: not its result"; }
  echo "deploy: task $task (confirm_delete): $trail"
  [ "$updated_on" != "$made_on" ] && { crossed=1; break; }
done
[ -n "$crossed" ] || fail "no tasks/update landed on another worker than the task's in 4 tries"
crossed=
for _ in 1 2 3 4; do
  make_task slow_compute '{"seconds":30}'
  post tasks/cancel "$task" "\"taskId\":\"$task\""
  cancelled_on=$worker
  get "$task"
  echo "deploy: task $task (slow_compute 30 s): made on $made_on, cancel on $cancelled_on, get on $worker: $status"
  [ "$status" = cancelled ] || { cat "$dir/reply"; fail "task $task not cancelled"; }
  [ "$cancelled_on" != "$made_on" ] && { crossed=1; break; }
done
[ -n "$crossed" ] || fail "no tasks/cancel landed on another worker than the task's in 4 tries"

# 2. An event published on one worker reaches a listen stream held by another.
curl -s -N -m 30 -o "$dir/listen" -H 'Content-Type: application/json' \
  -H 'Accept: application/json, text/event-stream' -H 'MCP-Protocol-Version: 2026-07-28' \
  -H 'Mcp-Method: subscriptions/listen' \
  --data-binary "{\"jsonrpc\":\"2.0\",\"id\":\"listen-1\",\"method\":\"subscriptions/listen\",\"params\":{\"notifications\":{\"toolsListChanged\":true},$META}}" \
  "$url?r=listen" &
listener=$!
for _ in $(seq 100); do grep -q 'subscriptions/acknowledged' "$dir/listen" 2>/dev/null && break; sleep 0.05; done
grep -q 'subscriptions/acknowledged' "$dir/listen" || fail "the listen stream was not acknowledged"
post tools/call test_trigger_tool_change '"name":"test_trigger_tool_change","arguments":{}'
trigger_on=$worker
for _ in $(seq 100); do grep -q 'notifications/tools/list_changed' "$dir/listen" && break; sleep 0.05; done
kill "$listener" 2>/dev/null || true
wait "$listener" 2>/dev/null || true
worker_of listen
listen_on=$worker
echo "deploy: a tool registered on worker $trigger_on; the listen stream on worker $listen_on heard:"
grep '^data:' "$dir/listen" | sed 's/^/  /'
grep -q 'notifications/tools/list_changed' "$dir/listen" || fail "the listen on worker $listen_on heard no list_changed"
[ "$listen_on" != "$trigger_on" ] || fail "the trigger landed on the listen's own worker"

# 3. A worker killed while its task runs: the others fail the task once its
# lease has run out (lease_ms after its last renewal, at most).
mapfile -t pids < <(worker_pids "$launcher" 4)
[ "${#pids[@]}" = 4 ] || fail "expected 4 worker pids, found ${#pids[@]}"
make_task slow_compute '{"seconds":60}'
victim=$made_on
kill -KILL "${pids[$victim]}"
killed_at=$(date +%s%N)
trail=""
for _ in $(seq 100); do
  get "$task"; trail="$trail, get on $worker: $status"
  [ "$status" = working ] || break
  sleep 0.2
done
waited_ms=$((($(date +%s%N) - killed_at) / 1000000))
echo "deploy: task $task made on worker $victim, killed (SIGKILL)$trail (${waited_ms} ms)"
[ "$status" = failed ] || { cat "$dir/reply"; fail "task $task of the killed worker is $status, not failed"; }
grep -q '"message":"Task lost: the process running it stopped"' "$dir/reply" || { cat "$dir/reply"; fail "not the lost task's error"; }
echo "deploy: its error: $(grep -o '"code":-32603' "$dir/reply"), $(grep -o '"message":"Task lost[^"]*"' "$dir/reply")"
[ "$waited_ms" -le $((lease_ms + 3000)) ] || fail "the task was failed ${waited_ms} ms after the kill (lease $lease_ms ms)"
