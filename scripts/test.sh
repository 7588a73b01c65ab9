#!/usr/bin/env bash
# scripts/test.sh: the stages of `make test` (run by the Makefile, which
# passes MAKE and SOAK_TEST_REQUESTS). Every stage runs even when an earlier
# one fails, so one run shows everything; the exit status is non-zero if any
# stage failed. Each busted run ends with its summary line; the very last
# line sums both runs as "N passed, M failed" (failures + errors).
MAKE=${MAKE:-make}
passed=0; failed=0; bad=; times=; recap=
. scripts/busted_run.sh
mkdir -p build
stage () { stage_name=$1; shift; t0=$(date +%s); "$@" || bad="$bad $stage_name"
  times="$times $stage_name $(( $(date +%s) - t0 ))s"; }
stage build $MAKE --no-print-directory WERROR=1 all embed bench-tools
stage lint $MAKE --no-print-directory lint
# Every spec under Lua 5.4 and under LuaJIT, the two runs side by side: each
# keeps about two thirds of a core busy (the rest is waiting on children,
# timers and sockets). Specs marked with spec/once.lua (their subject does
# not depend on the interpreter running busted) run in the Lua 5.4 pass only.
busted_both () {
  start_busted 5.4 lua5.4 /usr/bin/busted spec
  start_busted jit env JRPC_SPEC_PASS=jit luajit /usr/bin/busted spec
  wait
  local before=$failed
  finish_busted 5.4; finish_busted jit
  [ "$failed" = "$before" ] && [ -z "$(printf '%s' "$bad" | grep -E 'busted-(5\.4|jit)')" ]
}
stage busted-5.4+jit busted_both
stage soak $MAKE --no-print-directory soak SOAK_REQUESTS="$SOAK_TEST_REQUESTS"
stage test-rock $MAKE --no-print-directory test-rock
stage test-love $MAKE --no-print-directory test-love
stage test-nvim $MAKE --no-print-directory test-nvim
stage test-conformance $MAKE --no-print-directory test-conformance
stage test-deploy $MAKE --no-print-directory test-deploy
stage test-asan $MAKE --no-print-directory WERROR=1 test-asan
stage test-allocfail $MAKE --no-print-directory WERROR=1 test-allocfail
# memcheck and the fuzzers side by side (each keeps one core busy; they
# build disjoint trees, build/memcheck and build/fuzz), their output shown
# one after the other
valgrind_and_fuzz () {
  $MAKE --no-print-directory WERROR=1 test-valgrind > build/test-valgrind.log 2>&1 & local v=$!
  $MAKE --no-print-directory fuzz-short > build/fuzz-short.log 2>&1 & local f=$!
  local vrc=0 frc=0
  wait "$v" || vrc=$?
  wait "$f" || frc=$?
  echo "== test-valgrind"; cat build/test-valgrind.log
  echo "== fuzz-short"; cat build/fuzz-short.log
  [ "$vrc" = 0 ] || bad="$bad test-valgrind"
  [ "$frc" = 0 ] || bad="$bad fuzz-short"
  [ "$vrc" = 0 ] && [ "$frc" = 0 ]
}
stage test-valgrind+fuzz-short valgrind_and_fuzz
echo "make test: stage times:$times"
if [ -n "$bad" ]; then echo "make test: FAILED:$bad"; else echo "make test: all stages passed"; fi
if [ -n "$(printf '%s' "$recap" | tr -d '[:space:]')" ]; then echo "make test: failing tests:"; printf '%s' "$recap" | grep -v '^$'; fi
echo "$passed passed, $failed failed"
[ -z "$bad" ]
