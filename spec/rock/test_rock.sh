#!/usr/bin/env bash
# spec/rock/test_rock.sh: the LuaRocks routes of the README, each into a
# fresh tree, each checked by spec/rock_smoke.lua with the search paths
# that `luarocks path` prints (nothing else):
#   1. Lua 5.4:  luarocks --lua-version 5.4 make
#   2. LuaJIT:   luarocks --lua-version 5.1 make LUA_INCDIR=<luajit headers>
#      and PUC Lua 5.1 on that same tree is refused with a clear message
#   3. offline:  `make rock` packs a source rock from this checkout, then
#      luarocks --lua-version 5.4 install <file>.src.rock, no network
# and in each tree the installed `jrpc` command (LuaRocks' wrapper of
# bin/jrpc) makes one call to examples/spec_server.lua (cli_smoke).
# LuaRocks builds in its current directory, so each build runs in a
# throw-away copy of the sources. Ends with "test-rock: ok".
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
root=$PWD
rockspec=rockspec/jrpc-scm-1.rockspec
work=$(mktemp -d /tmp/jrpc-rock-XXXX)
trap 'rm -rf "$work"' EXIT
cjson_inc=$(pkg-config --variable=includedir libcjson)
cjson_lib=$(pkg-config --variable=libdir libcjson)
luajit_inc=$(pkg-config --variable=includedir luajit)/luajit-2.1
[ -f "$luajit_inc/lua.h" ] || luajit_inc=$(pkg-config --cflags-only-I luajit | sed 's/^-I//; s/ .*//')

# smoke LUA_VERSION INTERPRETER TREE: run rock_smoke.lua with `luarocks path`
smoke () {
  local out
  out=$(cd "$3" && env -u LUA_PATH -u LUA_CPATH -u LUA_PATH_5_4 -u LUA_CPATH_5_4 -u LUA_INIT -u LUA_INIT_5_4 \
    bash -c "eval \"\$(luarocks --lua-version $1 path --tree '$3')\" && $2 '$root/spec/rock_smoke.lua' '$3'" 2>&1) || true
  printf '%s\n' "$out"
  [ "$(printf '%s\n' "$out" | tail -n 1)" = "rock ok" ] || { echo "test-rock: $2 FAILED" >&2; exit 1; }
}

# cli_smoke LUA_VERSION INTERPRETER TREE: the tree's `jrpc` runs with
# INTERPRETER and, with only `luarocks path` for search paths, calls the
# spec server (which loads this checkout itself) over --stdio.
cli_smoke () {
  local wrapper=$3/bin/jrpc out
  grep -q "exec '[^']*/$2' " "$wrapper" || { cat "$wrapper"; echo "test-rock: $wrapper does not run $2" >&2; exit 1; }
  out=$(cd "$3" && env -u LUA_PATH -u LUA_CPATH -u LUA_PATH_5_4 -u LUA_CPATH_5_4 -u LUA_INIT -u LUA_INIT_5_4 \
    bash -c "eval \"\$(luarocks --lua-version $1 path --tree '$3')\" && '$wrapper' call --stdio 'lua5.4 $root/examples/spec_server.lua' subtract '[42,23]'" 2>&1) || true
  [ "$out" = 19 ] || { printf '%s\n' "$out"; echo "test-rock: $wrapper call FAILED" >&2; exit 1; }
  echo "test-rock: $2: jrpc call --stdio ... subtract [42,23] -> $out"
  # and `jrpc mcp` (jrpc.cli.mcp and the MCP client, from the tree)
  out=$(cd "$3" && env -u LUA_PATH -u LUA_CPATH -u LUA_PATH_5_4 -u LUA_CPATH_5_4 -u LUA_INIT -u LUA_INIT_5_4 \
    bash -c "eval \"\$(luarocks --lua-version $1 path --tree '$3')\" && '$wrapper' mcp --stdio 'lua5.4 $root/examples/mcp/everything_server.lua' call test_simple_text" 2>&1) || true
  [ "$out" = "This is a simple text response for testing." ] || { printf '%s\n' "$out"; echo "test-rock: $wrapper mcp FAILED" >&2; exit 1; }
  echo "test-rock: $2: jrpc mcp --stdio ... call test_simple_text -> $out"
}

# build VERSION TREE [VAR=VALUE...]: luarocks make from a copy of the sources
build () {
  local version=$1 tree=$2; shift 2
  local copy; copy=$(mktemp -d "$work/src-XXXX")
  cp -R src lua bin rockspec "$copy"/
  (cd "$copy" && set -x && luarocks --lua-version "$version" make "$rockspec" --tree "$tree" \
    CJSON_INCDIR="$cjson_inc" CJSON_LIBDIR="$cjson_lib" "$@") > "$work/build-$version.log" 2>&1 \
    || { cat "$work/build-$version.log"; echo "test-rock: luarocks $version make FAILED" >&2; exit 1; }
}

echo "test-rock: 1. luarocks --lua-version 5.4 make"
build 5.4 "$work/t54"
smoke 5.4 lua5.4 "$work/t54"
cli_smoke 5.4 lua5.4 "$work/t54"

echo "test-rock: 2. luarocks --lua-version 5.1 make LUA_INCDIR=$luajit_inc (LuaJIT)"
# LuaRocks' wrapper of `jrpc` runs the interpreter it finds for 5.1, which
# is PUC lua5.1 when that is installed too (jrpc refuses it): a config file
# names LuaJIT instead (see the README).
printf 'lua_interpreter = "luajit"\n' > "$work/luajit-config.lua"
LUAROCKS_CONFIG="$work/luajit-config.lua" build 5.1 "$work/tjit" LUA_INCDIR="$luajit_inc"
smoke 5.1 luajit "$work/tjit"
cli_smoke 5.1 luajit "$work/tjit"
if command -v lua5.1 > /dev/null; then
  refused=$(cd "$work/tjit" && bash -c "eval \"\$(luarocks --lua-version 5.1 path --tree '$work/tjit')\" && lua5.1 -e 'require \"jrpc\"'" 2>&1 || true)
  case "$refused" in
    *"jrpc needs Lua 5.4 or LuaJIT 2.1; PUC Lua 5.1 is not supported"*) echo "test-rock: PUC Lua 5.1 refused: ok" ;;
    *) printf '%s\n' "$refused"; echo "test-rock: PUC Lua 5.1 was not refused" >&2; exit 1 ;;
  esac
fi

echo "test-rock: 3. a packed source rock, installed offline"
make --no-print-directory rock ROCK_DIR="$work/pack" > "$work/pack.log" 2>&1 || { cat "$work/pack.log"; exit 1; }
rock=$(ls "$work"/pack/jrpc-scm-1.src.rock)
(cd "$work" && luarocks --lua-version 5.4 install --only-server=/nonexistent --tree "$work/tpack" "$rock" \
  CJSON_INCDIR="$cjson_inc" CJSON_LIBDIR="$cjson_lib") > "$work/install.log" 2>&1 \
  || { cat "$work/install.log"; echo "test-rock: install of the source rock FAILED" >&2; exit 1; }
smoke 5.4 lua5.4 "$work/tpack"
cli_smoke 5.4 lua5.4 "$work/tpack"
echo "test-rock: ok"
