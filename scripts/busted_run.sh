# scripts/busted_run.sh: run_busted (and start_busted/finish_busted, the
# same in the background), sourced by scripts/test.sh and
# scripts/test_asan.sh (not run by itself).
#
# run_busted NAME CMD...: runs one busted command, its output shown and kept
# in build/busted-NAME.log, and adds to the caller's counters: passed and
# failed (failures + errors, read from busted's summary line; a run that
# printed none counts as one failure), bad (the names of failed runs) and
# recap (the failing tests' headers: file @ line, name, first line of the
# message, for the recap at the very end, where a CI log's tail shows them).
# Busted prints its summary line before the failure details; it is repeated
# at the end so the last line of a run is its summary.
run_busted () {
  name=$1; shift; log=build/busted-$name.log
  echo "== busted ($name): $*"
  "$@" 2>&1 | tee "$log"; rc=${PIPESTATUS[0]}
  count_busted "$name" "$rc"
}

# start_busted NAME CMD...: the same run in the background, its output kept
# in build/busted-NAME.log only; finish_busted NAME (after `wait`) shows
# that log and counts it as run_busted does. Two runs side by side do not
# mix their output.
start_busted () {
  name=$1; shift; log=build/busted-$name.log
  rm -f "$log.rc"
  { echo "== busted ($name): $*"; "$@"; } > "$log" 2>&1 && echo 0 > "$log.rc" || echo $? > "$log.rc" &
}
finish_busted () {
  name=$1; log=build/busted-$name.log
  cat "$log"
  count_busted "$name" "$(cat "$log.rc" 2>/dev/null || echo 1)"
  rm -f "$log.rc"
}

# count_busted NAME RC: the counting of run_busted, from build/busted-NAME.log.
count_busted () {
  name=$1; rc=$2; log=build/busted-$name.log
  plain=$(sed 's/\x1b\[[0-9;]*m//g' "$log")
  sum=$(printf '%s\n' "$plain" | grep -E '^[0-9]+ success(es)? / [0-9]+ failures? / [0-9]+ errors? / [0-9]+ pending' | tail -n 1)
  if [ -n "$sum" ]; then
    last=$(printf '%s\n' "$plain" | grep -v '^[[:space:]]*$' | tail -n 1)
    [ "$last" = "$sum" ] || echo "$sum"
    set -- $sum
    passed=$((passed + $1)); failed=$((failed + $4 + $7))
  else
    echo "busted ($name): no summary line (busted could not run)"
    failed=$((failed + 1)); rc=1
  fi
  [ "$rc" = 0 ] || bad="$bad busted-$name"
  recap="$recap$(printf '%s\n' "$plain" | grep -A2 -E '^(Failure|Error) (->|→)' | grep -v '^--$' | sed "s/^/  busted-$name: /")
"
}
