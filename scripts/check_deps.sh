#!/bin/sh
# scripts/check_deps.sh LUA MODULE...: run by make before it compiles an ABI's
# modules. Looks for each header and library the named modules need
# (core: cJSON and llhttp; core_tls: OpenSSL; resp: hiredis; all: the Lua
# headers of LUA, "lua5.4" or "luajit") the way the build will, and reports
# every missing one with the Debian package that provides it, then fails; a
# missing dependency would otherwise show as a raw compiler error.
#
# Environment (from the Makefile): CC, PKG_CONFIG, CFLAGS (the build's
# compile flags for this ABI), CJSON_LIBS, LLHTTP_LIBS, TLS_LIBS, HIREDIS_LIBS.
# Each probe adds the package's own pkg-config flags, so that a missing
# package does not hide another one that pkg-config names together.

lua=$1; shift
: "${CC:=cc}" "${PKG_CONFIG:=pkg-config}"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/jrpc-deps-XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
missing=
packages=

# report WHAT PACKAGE [NOTE]
report () {
  echo "make: missing $1: install $2${3:+ ($3)}" >&2
  missing=1
  case " $packages " in *" $2 "*) ;; *) packages="$packages $2" ;; esac
}

# compiles PC LIBS SOURCE: SOURCE builds as a shared object with the
# build's flags, PC's pkg-config flags and LIBS.
compiles () {
  printf '%s\n' "$3" > "$tmp/probe.c"
  pc_flags=
  [ -z "$1" ] || pc_flags=$($PKG_CONFIG --cflags "$1" 2>/dev/null)
  # shellcheck disable=SC2086  # flag lists are split on purpose
  $CC $CFLAGS $pc_flags -fPIC -shared -o "$tmp/probe.so" \
    "$tmp/probe.c" $2 > /dev/null 2>&1
}

cc_word=${CC%% *}
if ! command -v "$cc_word" > /dev/null 2>&1; then
  report "C compiler $cc_word" gcc
  echo "make: install the packages above, then run make again" >&2
  exit 1
fi
command -v "$PKG_CONFIG" > /dev/null 2>&1 || report "$PKG_CONFIG" pkg-config

case $lua in
  lua5.4)
    compiles lua5.4 "" '#include <lua.h>
#if LUA_VERSION_NUM != 504
#error not Lua 5.4
#endif' || report "lua.h of Lua 5.4" liblua5.4-dev ;;
  luajit)
    compiles luajit "" '#include <luajit.h>' || report "luajit.h (LuaJIT)" libluajit-5.1-dev ;;
  *) echo "check_deps.sh: unknown Lua '$lua'" >&2; exit 2 ;;
esac

for module in "$@"; do
  case $module in
    core)
      compiles libcjson "$CJSON_LIBS" '#include <cjson/cJSON.h>' \
        || report "cjson/cJSON.h or $CJSON_LIBS" libcjson-dev
      compiles "" "$LLHTTP_LIBS" '#include <llhttp.h>' \
        || report "llhttp.h or $LLHTTP_LIBS" libllhttp-dev \
          "Debian 13, Ubuntu 24.04; Debian 12 has none: make deps-llhttp installs Debian 13's" ;;
    core_tls)
      compiles libssl "$TLS_LIBS" '#include <openssl/ssl.h>' \
        || report "openssl/ssl.h or $TLS_LIBS" libssl-dev ;;
    lineread) ;;
    resp)
      compiles "" "${HIREDIS_LIBS:--lhiredis}" '#include <hiredis/hiredis.h>' \
        || report "hiredis/hiredis.h or ${HIREDIS_LIBS:--lhiredis}" libhiredis-dev ;;
    *) echo "check_deps.sh: unknown module '$module'" >&2; exit 2 ;;
  esac
done

[ -z "$missing" ] && exit 0
echo "make: Debian:  sudo apt-get install$packages" >&2
if [ "$lua" = lua5.4 ]; then
  echo "make: for Neovim only, 'make nvim' builds just its modules (LuaJIT; no Lua 5.4 needed)" >&2
fi
exit 1
