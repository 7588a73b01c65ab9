# Makefile -- development build of jrpc (GNU make).
#
# LuaRocks does not use this file: it builds from rockspec/jrpc-scm-1.rockspec.
#
#   make            build/5.4/jrpc/core.so and build/jit/jrpc/core.so
#   make deps       install the Debian packages the build and tests need (as root)
#   make lint       luacheck
#   make test       deps, build with -Werror, lint, busted on Lua 5.4 and LuaJIT,
#                   test-rock; the last line is "N passed, M failed"
#   make test-rock  luarocks make into a temporary tree and smoke-test it
#   make check-rockspec   every lua/jrpc/**/*.lua is listed in the rockspec
#   make bench      build, then bench/run.lua (Lua 5.4, LuaJIT) and bench/pipe.lua
#   make example    the JSON-RPC 2.0 spec examples through examples/spec_server.lua
#   make embed      build/embed: a C host with Lua 5.4 embedded, driving jrpc per frame
#   make clean
#
# Overridable: CC, CFLAGS (default -O2), CPPFLAGS, LDFLAGS, LIBFLAG,
# PKG_CONFIG, LUA54_CFLAGS, LUAJIT_CFLAGS, CJSON_LIBS, WERROR=1.
# The module is not linked against liblua: the interpreter provides the symbols.

SHELL := /bin/bash
.DEFAULT_GOAL := all
.DELETE_ON_ERROR:

CC ?= cc
CFLAGS ?= -O2
PKG_CONFIG ?= pkg-config
WERROR ?= 0

# Recursive (=) on purpose: pkg-config runs when a recipe needs the value,
# that is after `make deps` has installed it.
LUA54_CFLAGS ?= $(shell $(PKG_CONFIG) --cflags lua5.4 libcjson)
LUAJIT_CFLAGS ?= $(shell $(PKG_CONFIG) --cflags luajit libcjson)
CJSON_LIBS ?= $(shell $(PKG_CONFIG) --libs libcjson)

ifeq ($(shell uname -s),Darwin)
LIBFLAG ?= -bundle -undefined dynamic_lookup
else
LIBFLAG ?= -shared
endif

WARNINGS := -std=c99 -Wall -Wextra -Wshadow -Wstrict-prototypes -Wmissing-prototypes
JR_CFLAGS = $(WARNINGS) -fPIC -fvisibility=hidden $(if $(filter 1,$(WERROR)),-Werror)

# Per-ABI include flags, selected by the pattern stem (5.4 or jit).
ABI_CFLAGS_5.4 = $(LUA54_CFLAGS)
ABI_CFLAGS_jit = $(LUAJIT_CFLAGS)

# The core is one translation unit: src/core.c includes the other src/*.c,
# so any src/*.c or src/*.h change rebuilds both modules.
CORE_SRC := src/core.c
CORE_DEPS := $(wildcard src/*.c src/*.h)
MODULES := build/5.4/jrpc/core.so build/jit/jrpc/core.so

ABI_FLAGS = $(CPPFLAGS) $(CFLAGS) $(JR_CFLAGS) $(ABI_CFLAGS_$*)
LINK_FLAGS = $(LIBFLAG) $(LDFLAGS) $(CJSON_LIBS)

DEB_PACKAGES := lua5.4 liblua5.4-dev luajit libluajit-5.1-dev libcjson-dev \
  lua-busted lua-check luarocks lua-cjson lua-dkjson lua-luv pkg-config gcc make

ROCKSPEC := rockspec/jrpc-scm-1.rockspec
LINT_DIRS = $(wildcard lua spec examples bench)

.PHONY: all deps node-deps lint test test-rock check-rockspec bench example embed clean FORCE

all: $(MODULES)

# Rebuild when the command line changes (e.g. WERROR=1 after a plain build):
# flags.txt is rewritten only when its content differs.
build/%/flags.txt: FORCE
	@mkdir -p $(@D)
	@printf '%s\n' '$(CC) $(ABI_FLAGS) $(LINK_FLAGS)' | cmp -s - $@ \
	  || printf '%s\n' '$(CC) $(ABI_FLAGS) $(LINK_FLAGS)' > $@

# The old module is removed first: a failed build must not leave a stale
# core.so behind for the tests to load.
build/%/jrpc/core.so: $(CORE_DEPS) build/%/flags.txt
	@mkdir -p $(@D) && rm -f $@
	$(CC) $(ABI_FLAGS) -o $@ $(CORE_SRC) $(LINK_FLAGS)

FORCE:

.PRECIOUS: build/%/flags.txt

# {====================================================================
# deps: Debian packages, installed only when some are missing
# =====================================================================
deps:
	@missing=; \
	for p in $(DEB_PACKAGES); do \
	  dpkg -s "$$p" 2>/dev/null | grep -q '^Status: install ok installed' || missing="$$missing $$p"; \
	done; \
	if [ -z "$$missing" ]; then echo "deps: all present"; exit 0; fi; \
	echo "deps: installing$$missing"; \
	if [ "$$(id -u)" = 0 ]; then sudo=; \
	elif command -v sudo >/dev/null 2>&1; then sudo=sudo; \
	else echo "deps: not root and no sudo; install as root:$$missing" >&2; exit 1; fi; \
	$$sudo apt-get update && \
	$$sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends $$missing
# }====================================================================

# {====================================================================
# node-deps: the real peers we test against (vscode-jsonrpc, jayson,
# json-rpc-2.0), pinned in node/package-lock.json, installed into the
# git-ignored node/node_modules; quick when already installed.
# =====================================================================
NODE_STAMP := node/node_modules/.package-lock.json

node-deps: $(NODE_STAMP)

$(NODE_STAMP): node/package.json node/package-lock.json
	cd node && npm ci --no-audit --no-fund
# }====================================================================

lint:
	luacheck --no-color $(LINT_DIRS)

# {====================================================================
# test: every stage (build with -Werror, lint, busted 5.4, busted jit,
# test-rock) runs even when an earlier one fails, so one run shows
# everything; the exit status is non-zero if any stage failed.  Each busted
# run ends with its summary line (repeated after busted's failure details);
# the very last line sums both runs as "N passed, M failed" (failures +
# errors; a busted run that printed no summary counts as one failure).
# =====================================================================
# Shell function used by the test recipe (exported, then eval'd).
define BUSTED_RUN_SH
run_busted () {
  name=$$1; shift; log=build/busted-$$name.log
  echo "== busted ($$name): $$*"
  "$$@" 2>&1 | tee "$$log"; rc=$${PIPESTATUS[0]}
  plain=$$(sed 's/\x1b\[[0-9;]*m//g' "$$log")
  sum=$$(printf '%s\n' "$$plain" | grep -E '^[0-9]+ success(es)? / [0-9]+ failures? / [0-9]+ errors? / [0-9]+ pending' | tail -n 1)
  if [ -n "$$sum" ]; then
    last=$$(printf '%s\n' "$$plain" | grep -v '^[[:space:]]*$$' | tail -n 1)
    [ "$$last" = "$$sum" ] || echo "$$sum"
    set -- $$sum
    passed=$$((passed + $$1)); failed=$$((failed + $$4 + $$7))
  else
    echo "busted ($$name): no summary line (busted could not run)"
    failed=$$((failed + 1)); rc=1
  fi
  [ "$$rc" = 0 ] || bad="$$bad busted-$$name"
}
endef
export BUSTED_RUN_SH

test: deps node-deps
	@passed=0; failed=0; bad=; eval "$$BUSTED_RUN_SH"; mkdir -p build; \
	$(MAKE) --no-print-directory WERROR=1 all embed bench-tools || bad="$$bad build"; \
	$(MAKE) --no-print-directory lint || bad="$$bad lint"; \
	run_busted 5.4 lua5.4 /usr/bin/busted spec; \
	run_busted jit luajit /usr/bin/busted spec; \
	$(MAKE) --no-print-directory test-rock || bad="$$bad test-rock"; \
	if [ -n "$$bad" ]; then echo "make test: FAILED:$$bad"; else echo "make test: all stages passed"; fi; \
	echo "$$passed passed, $$failed failed"; \
	[ -z "$$bad" ]
# }====================================================================

# {====================================================================
# test-rock: `luarocks make` into a fresh tree, then a plain lua5.4 that
# sees only that tree (plus the defaults) must load and use the module.
# LuaRocks builds in its current directory (it leaves src/core.o and
# jrpc/core.so there), so it runs in a throw-away copy of the sources.
# =====================================================================
test-rock: check-rockspec
	@set -e; \
	tree=$$(mktemp -d /tmp/jrpc-rock-XXXX); copy=$$(mktemp -d /tmp/jrpc-rock-src-XXXX); \
	trap 'rm -rf "$$tree" "$$copy"' EXIT; \
	cp -R src lua rockspec "$$copy"/; \
	incdir=$$($(PKG_CONFIG) --variable=includedir libcjson 2>/dev/null || true); \
	libdir=$$($(PKG_CONFIG) --variable=libdir libcjson 2>/dev/null || true); \
	echo "test-rock: luarocks make in a copy of src/ lua/ rockspec/ ($$copy), tree $$tree"; \
	(cd "$$copy" && set -x && luarocks --lua-version 5.4 make $(ROCKSPEC) --tree "$$tree" \
	  $${incdir:+CJSON_INCDIR=$$incdir} $${libdir:+CJSON_LIBDIR=$$libdir}); \
	out=$$(cd "$$tree" && env -u LUA_PATH_5_4 -u LUA_CPATH_5_4 -u LUA_INIT -u LUA_INIT_5_4 \
	  LUA_PATH="$$tree/share/lua/5.4/?.lua;$$tree/share/lua/5.4/?/init.lua;;" \
	  LUA_CPATH="$$tree/lib/lua/5.4/?.so;;" \
	  lua5.4 "$(CURDIR)/spec/rock_smoke.lua" "$$tree" 2>&1) || true; \
	printf '%s\n' "$$out"; \
	[ "$$(printf '%s\n' "$$out" | tail -n 1)" = "rock ok" ] || { echo "test-rock: FAILED" >&2; exit 1; }

# Every lua/jrpc/**/*.lua must be a module of the rockspec, under its
# dotted name (init.lua -> its directory), and every listed path must exist.
define CHECK_ROCKSPEC_LUA
local env = {}
local chunk = assert(loadfile(os.getenv("ROCKSPEC"), "t", env))
chunk()
local mods = assert(env.build and env.build.modules, "rockspec has no build.modules")
local listed, bad = {}, 0
for name, v in pairs(mods) do
  if type(v) == "string" then
    listed[v] = name
    local f = io.open(v, "r")
    if f then f:close() else print("rockspec: module " .. name .. ": no file " .. v); bad = bad + 1 end
  end
end
local p = assert(io.popen("find lua/jrpc -name '*.lua' 2>/dev/null | LC_ALL=C sort"))
for file in p:lines() do
  local want = file:gsub("^lua/", ""):gsub("%.lua$$", ""):gsub("/init$$", ""):gsub("/", ".")
  if listed[file] ~= want then
    print(("rockspec: %s must be listed as [%q] = %q"):format(file, want, file)); bad = bad + 1
  end
end
p:close()
if bad > 0 then os.exit(1) end
print("check-rockspec: ok")
endef
export CHECK_ROCKSPEC_LUA

check-rockspec:
	@ROCKSPEC=$(ROCKSPEC) lua5.4 -e "$$CHECK_ROCKSPEC_LUA"
# }====================================================================

# {====================================================================
# bench-tools: the load generator of bench/pipe.lua and the null server
# that measures its ceiling; plain C99 programs in build/bench/.
# =====================================================================
BENCH_TOOLS := build/bench/loadgen build/bench/null_server

.PHONY: bench-tools
bench-tools: $(BENCH_TOOLS)

build/bench/loadgen: bench/loadgen.c
build/bench/null_server: bench/servers/null_server.c

$(BENCH_TOOLS):
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(CFLAGS) $(WARNINGS) $(if $(filter 1,$(WERROR)),-Werror) -o $@ $< $(LDFLAGS)
# }====================================================================

bench: all bench-tools node-deps
	lua5.4 bench/run.lua
	luajit bench/run.lua
	lua5.4 bench/pipe.lua

example: all
	lua5.4 examples/spec_server.lua < examples/spec_examples.ndjson

# embed: build/embed, a C host embedding Lua 5.4 that drives jrpc from its
# own 60 frames/s loop (examples/embed/). It is linked against liblua; it
# depends on build/5.4/flags.txt to rebuild when CC, CFLAGS or WERROR change.
embed: build/embed

build/embed: examples/embed/embed.c build/5.4/flags.txt
	@mkdir -p $(@D) && rm -f $@
	$(CC) $(CPPFLAGS) $(CFLAGS) $(WARNINGS) $(if $(filter 1,$(WERROR)),-Werror) \
	  $(shell $(PKG_CONFIG) --cflags lua5.4) -o $@ $< $(LDFLAGS) $(shell $(PKG_CONFIG) --libs lua5.4)

clean:
	rm -rf build
	rm -f src/*.o
