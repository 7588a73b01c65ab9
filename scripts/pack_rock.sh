#!/usr/bin/env bash
# scripts/pack_rock.sh ROCK_DIR ROCKSPEC: a source rock
# (ROCK_DIR/jrpc-scm-1.src.rock) packed from this checkout's working tree,
# installable offline with `luarocks install FILE`. The rockspec's
# source.url names no published release yet, so the copy packed here points
# at a tarball of the sources made on the spot.
set -e
dir=$(mkdir -p "$1" && cd "$1" && pwd); rockspec=$2
stage=$(mktemp -d /tmp/jrpc-pack-XXXX); trap 'rm -rf "$stage"' EXIT
mkdir "$stage/jrpc"; cp -R src lua bin rockspec README.md "$stage/jrpc/"
tar -C "$stage" -czf "$stage/jrpc-scm.tar.gz" jrpc
sed -e 's|^  url = .*|  url = "file://'"$stage"'/jrpc-scm.tar.gz", dir = "jrpc",|' \
  "$rockspec" > "$stage/jrpc-scm-1.rockspec"
(cd "$stage" && luarocks pack jrpc-scm-1.rockspec > pack.log 2>&1) || { cat "$stage/pack.log"; exit 1; }
mv "$stage/jrpc-scm-1.src.rock" "$dir/"; echo "rock: $dir/jrpc-scm-1.src.rock"
