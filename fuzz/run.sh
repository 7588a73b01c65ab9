#!/usr/bin/env bash
# fuzz/run.sh TARGET... -- run each libFuzzer target of build/fuzz/ for
# FUZZ_SECONDS (default 60), one after the other (never two at once), and
# print per target: executions, exec/s, coverage (cov: edges, ft: features).
#
# The seeds of fuzz/corpus/<target>/ and the past crashes of
# fuzz/regress/<target>_* are copied into the working corpus
# build/fuzz/corpus/<target>/ (kept between runs, never committed), so the
# repository's files are not modified. A crash, leak, timeout or invariant
# violation leaves its input in build/fuzz/artifacts/ and the run fails
# (libFuzzer's exit status is not 0); the last lines of the log are shown.
# Run from the repository root (the Makefile does).
set -u

seconds=${FUZZ_SECONDS:-60}
bin=build/fuzz
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=0}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}

# longest input per target: the LSP framer needs room for header lines
# past its 8192-byte limit
max_len () {
  case $1 in
    lsp) echo 20000 ;;
    *) echo 4096 ;;
  esac
}

failed=
for t in "$@"; do
  exe=$bin/fuzz_$t
  work=$bin/corpus/fuzz_$t
  log=$bin/fuzz_$t.log
  mkdir -p "$work" "$bin/artifacts"
  cp -p fuzz/corpus/fuzz_$t/* "$work"/ 2>/dev/null
  cp -p fuzz/regress/"$t"_* "$work"/ 2>/dev/null  # past crashes: replayed first
  # a target's own tokens (fuzz/<target>.dict) come with the JSON ones
  dict=fuzz/json.dict
  if [ -f fuzz/$t.dict ]; then
    dict=$bin/fuzz_$t.dict
    cat fuzz/json.dict fuzz/$t.dict > "$dict"
  fi
  echo "== fuzz_$t: ${seconds}s, corpus $work ($(ls "$work" | wc -l) files)"
  "$exe" -max_total_time="$seconds" -print_final_stats=1 -timeout=10 \
    -rss_limit_mb=2048 -max_len="$(max_len "$t")" -dict="$dict" \
    -artifact_prefix="$bin/artifacts/fuzz_$t-" "$work" > "$log" 2>&1
  rc=$?
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n 1)
  rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -n 1)
  cov=$(grep -a -o 'cov: [0-9]* ft: [0-9]*' "$log" | tail -n 1)
  printf 'fuzz_%s: %s executions, %s exec/s, %s (exit %d)\n' \
    "$t" "${execs:-?}" "${rate:-?}" "${cov:-cov: ? ft: ?}" "$rc"
  if [ "$rc" != 0 ]; then
    echo "fuzz_$t: FAILED; log $log, input in $bin/artifacts/:"
    grep -a -v '^#[0-9]' "$log" | tail -n 40
    failed="$failed fuzz_$t"
  fi
done
if [ -n "$failed" ]; then
  echo "fuzz: FAILED:$failed"
  exit 1
fi
echo "fuzz: all targets ran clean"
