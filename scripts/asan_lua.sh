#!/usr/bin/env bash
# scripts/asan_lua.sh OUT CC: writes OUT, a lua5.4 that runs with the ASan
# and UBSan runtimes of the compiler CC (which must be gcc). Not LD_PRELOAD,
# so that what it starts (node, luajit, sh, our C tools) does not inherit
# them: the stock lua5.4 is started by its own ld.so with --preload;
# --argv0 keeps arg[-1] pointing at OUT, so the specs' lua5.4 children are
# this launcher too (it comes first in PATH under make test-asan).
out=$1; cc=$2
lua=$(command -v lua5.4) || { echo "test-asan: no lua5.4 (make deps)" >&2; exit 1; }
ldso=$(readelf -l "$lua" | sed -n 's/.*program interpreter: \(.*\)]$/\1/p')
asan=$($cc -print-file-name=libasan.so); ubsan=$($cc -print-file-name=libubsan.so)
for f in "$ldso" "$asan" "$ubsan"; do
  [ -e "$f" ] || { echo "test-asan: '$f' not found (CC=$cc must be gcc)" >&2; exit 1; }
done
printf '%s\n' '#!/bin/sh' "# written by make: lua5.4 with the ASan and UBSan runtimes of $cc" \
  "exec $ldso --argv0 \"\$0\" --preload \"$asan $ubsan\" $lua \"\$@\"" > "$out"
chmod +x "$out"
