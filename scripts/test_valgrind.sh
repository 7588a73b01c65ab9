#!/usr/bin/env bash
# scripts/test_valgrind.sh: `make test-valgrind`'s run. VALGRIND_SPECS under
# memcheck against build/memcheck, zero errors and no definite leak; tests
# whose names match VALGRIND_SKIP are left out. No suppressions.
# --keep-debuginfo: lua_close unloads the core before the leak check.
command -v valgrind >/dev/null || { echo "test-valgrind: no valgrind (make deps)" >&2; exit 1; }
log=build/memcheck/valgrind.log; rm -f $log
echo "== valgrind memcheck: busted $VALGRIND_SPECS${VALGRIND_SKIP:+ (not '$VALGRIND_SKIP')}"
JRPC_CPATH_5_4="$(pwd)/build/memcheck/?.so" valgrind --tool=memcheck --error-exitcode=1 \
  --leak-check=full --errors-for-leak-kinds=definite --keep-debuginfo=yes --log-file=$log \
  lua5.4 /usr/bin/busted ${VALGRIND_SKIP:+--filter-out="$VALGRIND_SKIP"} $VALGRIND_SPECS
rc=$?
grep -q 'ERROR SUMMARY: 0 errors' $log || { cat $log; rc=1; }
grep -E 'in use at exit|definitely lost|All heap blocks|ERROR SUMMARY' $log | sed 's/^==[0-9]*== /test-valgrind: /'
exit $rc
