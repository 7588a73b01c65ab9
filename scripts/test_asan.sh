#!/usr/bin/env bash
# scripts/test_asan.sh: `make test-asan`'s run (the Makefile builds
# build/asan first and passes the sanitizer environment). Each spec file
# runs by its own busted under Lua 5.4, so a crash stops one file, not the
# run. Passes with zero reports: none in build/asan/log (ASan/LSan,
# log_path), no UBSan "runtime error" in the output. gcc's UBSan ignores
# log_path: a report aborts its process, so one in a child whose stderr a
# spec captures shows as that spec failing (exit status 134).
passed=0; failed=0; bad=; recap=
. scripts/busted_run.sh
rm -rf build/asan/log build/busted-asan-*.log; mkdir -p build/asan/log
export JRPC_SPEC_PASS=asan  # spec/once.lua: those run in make test's Lua 5.4 pass
for f in spec/*_spec.lua; do run_busted asan-$(basename $f .lua) lua5.4 /usr/bin/busted $f; done
reports=$(ls build/asan/log | wc -l)
ubsan=$(cat build/busted-asan-*.log | grep -c 'runtime error:')
for r in build/asan/log/*; do [ -e "$r" ] && { echo "== $r"; cat "$r"; }; done
echo "test-asan: $passed passed, $failed failed; $reports ASan/LSan reports, $ubsan UBSan reports"
[ -z "$bad" ] || echo "test-asan: FAILED:$bad"
[ -z "$bad" ] && [ "$reports" = 0 ] && [ "$ubsan" = 0 ]
