# Makefile -- development build and test gate of jrpc (GNU make).
# `make help` lists the targets. LuaRocks does not use this file: it builds
# from rockspec/jrpc-scm-1.rockspec. The longer programs the targets run are
# in scripts/; CONTRIBUTING.md describes the stages.
#
# Overridable: CC, CFLAGS (default -O2), CPPFLAGS, LDFLAGS, LIBFLAG,
# PKG_CONFIG, LUA54_CFLAGS, LUAJIT_CFLAGS, CJSON_LIBS, CRYPTO_CFLAGS,
# CRYPTO_LIBS, SSL_LIBS, LLHTTP_LIBS, HIREDIS_LIBS, WERROR=1.
# The modules are not linked against liblua: the interpreter provides the symbols.

SHELL := /bin/bash
.DEFAULT_GOAL := all
.DELETE_ON_ERROR:

CC ?= cc
CFLAGS ?= -O2
PKG_CONFIG ?= pkg-config
WERROR ?= 0

# Recursive (=) on purpose: pkg-config runs when a recipe needs the value,
# that is after `make deps` has installed it. One package per call, quiet:
# a missing one is reported by scripts/check_deps.sh (build/%/deps.ok), and
# must not take the others' flags with it.
pc = $(strip $(shell $(PKG_CONFIG) $(1) $(2) 2>/dev/null))
LUA54_CFLAGS ?= $(strip $(call pc,--cflags,lua5.4) $(call pc,--cflags,libcjson))
LUAJIT_CFLAGS ?= $(strip $(call pc,--cflags,luajit) $(call pc,--cflags,libcjson))
CJSON_LIBS ?= $(or $(call pc,--libs,libcjson),-lcjson)
# OpenSSL 3's libcrypto (HMAC, RAND_bytes, CRYPTO_memcmp) and libssl
# (core.tls_client: TLS over memory BIOs, src/tls.c)
CRYPTO_CFLAGS ?= $(call pc,--cflags,libcrypto)
CRYPTO_LIBS ?= $(or $(call pc,--libs,libcrypto),-lcrypto)
SSL_LIBS ?= $(or $(call pc,--libs,libssl),-lssl)
# llhttp 9 (Node's HTTP/1.1 parser; Debian 13's libllhttp-dev, which
# `make deps` installs on Debian 12 too: see deps-llhttp)
LLHTTP_LIBS ?= -lllhttp
CORE_LIBS = $(CJSON_LIBS) $(LLHTTP_LIBS)
# hiredis (Debian's libhiredis-dev), for jrpc.resp alone (src/resp.c): the
# Redis protocol's reader and command formatter, used by jrpc.redis
HIREDIS_LIBS ?= $(or $(call pc,--libs,hiredis),-lhiredis)
# jrpc.core_tls (src/core_tls.c: tls.c, crypto.c) alone links OpenSSL;
# jrpc.core loads it on first use, so the core itself maps no OpenSSL.
TLS_LIBS = $(SSL_LIBS) $(CRYPTO_LIBS)

ifeq ($(shell uname -s),Darwin)
LIBFLAG ?= -bundle -undefined dynamic_lookup
else
LIBFLAG ?= -shared
endif

WARNINGS := -std=c99 -Wall -Wextra -Wshadow -Wstrict-prototypes -Wmissing-prototypes
JR_CFLAGS = $(WARNINGS) -fPIC -fvisibility=hidden $(if $(filter 1,$(WERROR)),-Werror)

# Per-ABI include flags, selected by the pattern stem (5.4 or jit).
ABI_CFLAGS_5.4 = $(LUA54_CFLAGS) $(CRYPTO_CFLAGS)
ABI_CFLAGS_jit = $(LUAJIT_CFLAGS) $(CRYPTO_CFLAGS)

# The core is one translation unit: src/core.c includes the other src/*.c,
# so any src/*.c or src/*.h change rebuilds both modules (but src/resp.c,
# the module jrpc.resp, which includes none of them).
CORE_SRC := src/core.c
CORE_DEPS := $(filter-out src/resp.c,$(wildcard src/*.c src/*.h))
MODULES := build/5.4/jrpc/core.so build/jit/jrpc/core.so \
  build/5.4/jrpc/core_tls.so build/jit/jrpc/core_tls.so \
  build/5.4/jrpc/lineread.so build/jit/jrpc/lineread.so \
  build/5.4/jrpc/resp.so build/jit/jrpc/resp.so
# Neovim's require finds C modules at lua/?.so in each runtimepath entry:
# `make` (a plugin manager's build step) copies the LuaJIT builds there, so
# the checkout works as a plugin. Lua 5.4 never looks there (its default
# cpath has ./?.so, not ./lua/?.so; the specs and examples put build/5.4 first).
NVIM_MODULES := lua/jrpc/core.so lua/jrpc/core_tls.so lua/jrpc/lineread.so

ABI_FLAGS = $(CPPFLAGS) $(CFLAGS) $(JR_CFLAGS) $(ABI_CFLAGS_$*)
LINK_FLAGS = $(LIBFLAG) $(LDFLAGS) $(CORE_LIBS)

# (procps: pgrep, with which spec/deploy/lib.sh finds the launcher's workers)
DEB_PACKAGES := lua5.4 liblua5.4-dev luajit libluajit-5.1-dev lua5.1 libcjson-dev \
  lua-busted lua-check luarocks lua-cjson lua-dkjson lua-luv pkg-config gcc make valgrind \
  clang libclang-rt-14-dev llvm libssl-dev openssl libhiredis-dev \
  love xvfb xauth lua-socket lua-cqueues neovim clangd nginx gnuplot-nox procps redis-server
LLHTTP_APT ?= build/apt-trixie
LLHTTP_DEBS := libllhttp9.2 libllhttp-dev
# Debian 13's Neovim (0.10) for test-nvim, unpacked here (spec/nvim/debian13.sh)
NVIM_DEBIAN13 ?= build/nvim-debian13

ROCKSPEC := rockspec/jrpc-scm-1.rockspec
ROCK_DIR ?= build/rock
LINT_DIRS = $(wildcard lua spec examples bench fuzz)
# Lua files without a .lua name, which luacheck does not find in a directory
LINT_FILES = bin/jrpc

NODE_STAMP := node/node_modules/.package-lock.json
# The official MCP conformance suite needs Node 22 (Node 20 cannot load it):
# both come from npm, pinned in node/conformance/package-lock.json.
CONFORMANCE_STAMP := node/conformance/node_modules/.package-lock.json

BENCH_TOOLS := build/bench/loadgen build/bench/null_server build/bench/httpload
BENCH_OUT ?= build/bench/out
export BENCH_OUT

SOAK_REQUESTS ?= 1000000
SOAK_INFLIGHT ?= 256
SOAK_TOLERANCE_KIB ?= 1024
SOAK_LUAS ?= lua5.4 luajit
SOAK_TEST_REQUESTS ?= 200000

# The sanitizer and memcheck builds of the core (build/asan, build/memcheck),
# and the environment test-asan runs its specs in (see scripts/test_asan.sh).
SAN_FLAGS := -O1 -g -fno-omit-frame-pointer -fno-sanitize-recover=all \
  -fsanitize=address,undefined,float-cast-overflow
ABI_CFLAGS_asan = $(LUA54_CFLAGS) $(CRYPTO_CFLAGS) $(SAN_FLAGS)
ABI_CFLAGS_memcheck = $(LUA54_CFLAGS) $(CRYPTO_CFLAGS) -g
ASAN_LUA := build/asan/bin/lua5.4
ASAN_DEPS = all embed bench-tools node-deps build/asan/jrpc/core.so build/asan/jrpc/core_tls.so \
  build/asan/jrpc/lineread.so build/asan/jrpc/resp.so $(ASAN_LUA)
MEMCHECK_MODULES := build/memcheck/jrpc/core.so build/memcheck/jrpc/core_tls.so \
  build/memcheck/jrpc/lineread.so build/memcheck/jrpc/resp.so
ASAN_ENV = PATH="$(CURDIR)/build/asan/bin:$$PATH" \
  JRPC_CPATH_5_4="$(CURDIR)/build/asan/?.so" JRPC_SANITIZER=asan \
  ASAN_OPTIONS=detect_leaks=1:abort_on_error=1:strict_string_checks=1:detect_stack_use_after_return=1:log_path=$(CURDIR)/build/asan/log/asan \
  LSAN_OPTIONS=suppressions=$(CURDIR)/spec/sanitizers/lsan.supp:print_suppressions=0 \
  UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1:abort_on_error=1
# the two "scale" tests spend 80 s in Lua loops under valgrind; they run under test-asan
VALGRIND_SPECS = $(wildcard spec/core_*_spec.lua) spec/pending_spec.lua \
  spec/peer_spec.lua spec/params_spec.lua spec/resp_spec.lua
VALGRIND_SKIP ?= scale

FUZZ_CC ?= clang
FUZZ_TARGETS := ndjson lsp message encode http http_client mcp
FUZZ_SECONDS ?= 60
FUZZ_BINS := $(FUZZ_TARGETS:%=build/fuzz/fuzz_%)
FUZZ_CFLAGS ?= -g -O1 -fno-omit-frame-pointer
FUZZ_SAN := -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all
FUZZ_SHORT_SECONDS ?= 5

.PHONY: all help deps deps-llhttp deps-no-nginx-service node-deps conformance-deps \
  lint nvim test test-rock rock check-rockspec test-love test-nvim test-conformance test-deploy \
  test-asan test-valgrind test-allocfail soak bench bench-stdio bench-nvim bench-tools example embed \
  fuzz fuzz-build fuzz-short clean FORCE

# {====================================================================
# The targets. A `## ` comment after a target is what `make help` prints.
# =====================================================================
all: $(MODULES) $(NVIM_MODULES) ## build/5.4 and build/jit: jrpc.core, jrpc.core_tls, jrpc.lineread, jrpc.resp (LuaJIT's core ones copied to lua/jrpc/ for Neovim)

nvim: $(NVIM_MODULES) ## only what Neovim loads: the LuaJIT builds, in lua/jrpc/ (no Lua 5.4 headers needed)

help: ## this list
	@awk -F':.*## ' '/^[a-z][a-z0-9-]*:.*## / { printf "  %-22s %s\n", $$1, $$2 }' $(firstword $(MAKEFILE_LIST))

deps: ## install the Debian packages the build and the tests need (as root; only what is missing)
	@MAKE="$(MAKE)" bash scripts/deps.sh $(DEB_PACKAGES)

deps-llhttp: ## llhttp 9 (libllhttp-dev): from apt, or Debian 13's packages on Debian 12
	@bash scripts/deps_llhttp.sh $(LLHTTP_APT) $(LLHTTP_DEBS)

deps-no-nginx-service: ## stop a system nginx the Debian package started (test-deploy runs its own)
	@bash scripts/stop_system_nginx.sh

node-deps: $(NODE_STAMP) ## the real peers the interop specs talk to: npm ci into node/node_modules

conformance-deps: $(CONFORMANCE_STAMP) ## the official MCP conformance suite and Node 22, from npm

lint: ## luacheck over lua spec examples bench fuzz and bin/jrpc
	luacheck --no-color $(LINT_DIRS) $(LINT_FILES)

test: deps node-deps ## the whole gate: every stage below, then "N passed, M failed" (scripts/test.sh)
	@MAKE="$(MAKE)" SOAK_TEST_REQUESTS=$(SOAK_TEST_REQUESTS) bash scripts/test.sh

test-rock: check-rockspec ## the README's LuaRocks routes (5.4, LuaJIT, a source rock offline) into fresh trees
	@bash spec/rock/test_rock.sh

rock: check-rockspec ## build/rock/jrpc-scm-1.src.rock, packed from this checkout
	@bash scripts/pack_rock.sh $(ROCK_DIR) $(ROCKSPEC)

check-rockspec: ## every lua/jrpc/**/*.lua is a module of the rockspec
	@ROCKSPEC=$(ROCKSPEC) lua5.4 scripts/check_rockspec.lua

test-love: all ## examples/love (LÖVE, LuaSocket) against examples/tcp_server.lua under Xvfb
	@bash spec/love/run.sh

# Both Neovims run even when the first fails; either failing fails the target.
test-nvim: all $(NVIM_DEBIAN13)/bin/nvim ## real nvim --headless (Debian 12's 0.7 and Debian 13's 0.10): LSP with clangd, the examples/nvim plugins
	@command -v nvim >/dev/null && command -v clangd >/dev/null \
	  || { echo "test-nvim: needs nvim and clangd (make deps)" >&2; exit 1; }
	@rc=0; \
	echo "== test-nvim: nvim (Debian 12, 0.7)"; \
	JRPC_NVIM=nvim JRPC_NVIM_VERSION=0.7 lua5.4 /usr/bin/busted --pattern=headless_test spec/nvim || rc=1; \
	echo "== test-nvim: $(NVIM_DEBIAN13)/bin/nvim (Debian 13, 0.10)"; \
	JRPC_NVIM=$(CURDIR)/$(NVIM_DEBIAN13)/bin/nvim JRPC_NVIM_VERSION=0.10 \
	  lua5.4 /usr/bin/busted --pattern=headless_test spec/nvim || rc=1; \
	exit $$rc

test-conformance: all conformance-deps ## the MCP conformance suite, server and client, both eras, both interpreters
	bash spec/mcp/conformance.sh 2026-07-28 lua5.4
	bash spec/mcp/conformance.sh 2026-07-28 luajit
	bash spec/mcp/conformance.sh 2025-11-25 lua5.4
	bash spec/mcp/conformance.sh 2025-11-25 luajit
	bash spec/mcp/conformance_client.sh 2026-07-28 lua5.4
	bash spec/mcp/conformance_client.sh 2026-07-28 luajit
	bash spec/mcp/conformance_client.sh 2025-11-25 lua5.4
	bash spec/mcp/conformance_client.sh 2025-11-25 luajit

test-deploy: all conformance-deps build/bench/httpload ## 4 workers behind nginx and a redis-server: the suite through it (tasks included), tasks and events across workers, then one killed under load
	timeout 90 bash spec/deploy/run.sh lua5.4
	timeout 90 bash spec/deploy/run.sh luajit
	timeout 60 bash spec/deploy/fault.sh lua5.4
	timeout 60 bash spec/deploy/fault.sh luajit

test-asan: $(ASAN_DEPS) ## every spec file under Lua 5.4 against build/asan (ASan + UBSan + LSan)
	@$(ASAN_ENV) bash scripts/test_asan.sh

test-valgrind: $(MEMCHECK_MODULES) ## the core, pending, peer, params and resp specs under valgrind memcheck
	@VALGRIND_SPECS="$(VALGRIND_SPECS)" VALGRIND_SKIP="$(VALGRIND_SKIP)" bash scripts/test_valgrind.sh

test-allocfail: build/allocfail ## the core session with each allocation failing in turn
	ASAN_OPTIONS=abort_on_error=1 build/allocfail spec/host/allocfail.lua

soak: all bench-tools ## SOAK_REQUESTS (1000000) through a pipe per interpreter; fails if the server's RSS grows
	@SOAK_LUAS="$(SOAK_LUAS)" SOAK_REQUESTS=$(SOAK_REQUESTS) SOAK_INFLIGHT=$(SOAK_INFLIGHT) \
	  SOAK_TOLERANCE_KIB=$(SOAK_TOLERANCE_KIB) bash scripts/soak.sh

bench: all bench-tools node-deps $(NVIM_DEBIAN13)/bin/nvim ## every benchmark: in process, instructions, pipe, bench-stdio, MCP over HTTP, lsp_cmd in Neovim
	lua5.4 bench/run.lua
	luajit bench/run.lua
	bash bench/instructions.sh lua5.4
	bash bench/instructions.sh luajit
	lua5.4 bench/pipe.lua
	$(MAKE) --no-print-directory bench-stdio
	bash bench/deploy_load.sh
	mkdir -p $(BENCH_OUT) && lua5.4 bench/http_edges.lua | tee $(BENCH_OUT)/http_edges.md
	$(MAKE) --no-print-directory bench-nvim

bench-nvim: all $(NVIM_DEBIAN13)/bin/nvim ## jrpc.nvim.lsp_cmd against vim.lsp.rpc in headless Neovim 0.10: build/bench/out/nvim_lsp.md
	lua5.4 bench/nvim_lsp.lua

bench-stdio: all bench-tools node-deps ## three clients at 16/64/256 in flight, latency, GC, memory, plot: build/bench/out
	@bash scripts/bench_stdio.sh

bench-tools: $(BENCH_TOOLS) ## build/bench: loadgen, null_server, httpload

example: deps all ## the JSON-RPC 2.0 specification's examples through examples/spec_server.lua
	lua5.4 examples/spec_server.lua < examples/spec_examples.ndjson

embed: build/embed ## build/embed: a C host embedding Lua 5.4 that drives jrpc per frame

fuzz: deps fuzz-build ## each libFuzzer target (fuzz/) for FUZZ_SECONDS (60)
	@FUZZ_SECONDS=$(FUZZ_SECONDS) bash fuzz/run.sh $(FUZZ_TARGETS)

fuzz-build: $(FUZZ_BINS) ## build/fuzz/fuzz_<target> with clang

fuzz-short: fuzz-build ## each fuzz target for 5 s: the make test stage (make fuzz: 60 s each)
	@FUZZ_SECONDS=$(FUZZ_SHORT_SECONDS) bash fuzz/run.sh $(FUZZ_TARGETS)

clean: ## remove build/ and the modules copied to lua/jrpc/
	rm -rf build
	rm -f src/*.o $(NVIM_MODULES)
# }====================================================================

# {====================================================================
# How the files are made.
# =====================================================================
# A running Neovim has the installed module mapped: writing over it in
# place (same inode) changes the code under the editor, which then dies
# (SIGBUS, SIGSEGV). The copy is written beside it and renamed over it, so
# the editor keeps the old file (inode) and the next start loads the new one.
lua/jrpc/%.so: build/jit/jrpc/%.so
	@mkdir -p $(@D)
	tmp=$@.new$$$$; cp $< $$tmp && mv -f $$tmp $@ || { rm -f $$tmp; exit 1; }

# Rebuild when the command line changes (e.g. WERROR=1 after a plain build):
# flags.txt is rewritten only when its content differs.
build/%/flags.txt: FORCE
	@mkdir -p $(@D)
	@printf '%s\n' '$(CC) $(ABI_FLAGS) $(LINK_FLAGS)' | cmp -s - $@ \
	  || printf '%s\n' '$(CC) $(ABI_FLAGS) $(LINK_FLAGS)' > $@

# The old module is removed first: a failed build must not leave a stale
# core.so behind for the tests to load.
build/%/jrpc/core.so: $(CORE_DEPS) build/%/flags.txt build/%/deps.ok
	@mkdir -p $(@D) && rm -f $@
	$(CC) $(ABI_FLAGS) -o $@ $(CORE_SRC) $(LINK_FLAGS)

# jrpc.core_tls: the same layers as the core, its own translation unit,
# linked against libssl and libcrypto (src/core_tls.c).
build/%/jrpc/core_tls.so: $(CORE_DEPS) build/%/flags.txt build/%/deps.ok
	@mkdir -p $(@D) && rm -f $@
	$(CC) $(ABI_FLAGS) -o $@ src/core_tls.c $(LIBFLAG) $(LDFLAGS) $(TLS_LIBS)

# jrpc.lineread: the blocking stdio transport's bounded line read (I/O,
# so not in the core); no cJSON.
build/%/jrpc/lineread.so: src/io/lineread.c build/%/flags.txt build/%/deps.ok
	@mkdir -p $(@D) && rm -f $@
	$(CC) $(ABI_FLAGS) -o $@ $< $(LIBFLAG) $(LDFLAGS)

# jrpc.resp: RESP2 on hiredis (src/resp.c), for jrpc.redis; its own
# dependency check, so that `make nvim` and the core need no hiredis.
build/%/jrpc/resp.so: src/resp.c build/%/flags.txt build/%/deps-resp.ok
	@mkdir -p $(@D) && rm -f $@
	$(CC) $(ABI_FLAGS) -o $@ $< $(LIBFLAG) $(LDFLAGS) $(HIREDIS_LIBS)

# Before an ABI's first compile (and again when its flags change), every
# header and library its modules need is looked for; what is missing is
# reported with the Debian package that provides it (scripts/check_deps.sh).
LUA_PC_jit = luajit
LUA_PC_5.4 = lua5.4
LUA_PC_asan = lua5.4
LUA_PC_memcheck = lua5.4
CHECK_DEPS := $(dir $(firstword $(MAKEFILE_LIST)))scripts/check_deps.sh

build/%/deps.ok: build/%/flags.txt $(CHECK_DEPS)
	@CC='$(CC)' PKG_CONFIG='$(PKG_CONFIG)' CFLAGS='$(ABI_FLAGS)' CJSON_LIBS='$(CJSON_LIBS)' \
	  LLHTTP_LIBS='$(LLHTTP_LIBS)' TLS_LIBS='$(TLS_LIBS)' \
	  sh $(CHECK_DEPS) $(LUA_PC_$*) core core_tls lineread
	@touch $@

build/%/deps-resp.ok: build/%/flags.txt $(CHECK_DEPS)
	@CC='$(CC)' PKG_CONFIG='$(PKG_CONFIG)' CFLAGS='$(ABI_FLAGS)' HIREDIS_LIBS='$(HIREDIS_LIBS)' \
	  sh $(CHECK_DEPS) $(LUA_PC_$*) resp
	@touch $@

$(NVIM_DEBIAN13)/bin/nvim: spec/nvim/debian13.sh
	@rm -f $@
	sh spec/nvim/debian13.sh $(NVIM_DEBIAN13)

FORCE:

.PRECIOUS: build/%/flags.txt build/%/deps.ok build/%/deps-resp.ok

$(NODE_STAMP): node/package.json node/package-lock.json
	cd node && npm ci --no-audit --no-fund

$(CONFORMANCE_STAMP): node/conformance/package.json node/conformance/package-lock.json
	cd node/conformance && npm ci --no-audit --no-fund

build/bench/loadgen: bench/loadgen.c
build/bench/null_server: bench/servers/null_server.c
build/bench/httpload: bench/httpload.c

$(BENCH_TOOLS):
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(CFLAGS) $(WARNINGS) $(if $(filter 1,$(WERROR)),-Werror) -o $@ $< $(LDFLAGS)

# lua5.4 with gcc's ASan and UBSan runtimes (scripts/asan_lua.sh)
$(ASAN_LUA): build/asan/flags.txt
	@mkdir -p $(@D)
	@bash scripts/asan_lua.sh $@ $(CC)

# Built with ASan, so a bad access on an error path is a crash; not with
# UBSan, which would stop every run at the first report (test-asan covers
# undefined behaviour).
build/allocfail: spec/host/allocfail.c $(CORE_DEPS) build/5.4/flags.txt
	@mkdir -p $(@D) && rm -f $@
	$(CC) $(CPPFLAGS) -O1 -g -fsanitize=address -fno-omit-frame-pointer $(WARNINGS) \
	  $(if $(filter 1,$(WERROR)),-Werror) -Isrc $(shell $(PKG_CONFIG) --cflags lua5.4 libcjson) \
	  $(CRYPTO_CFLAGS) -o $@ $< src/core_tls.c $(LDFLAGS) $(shell $(PKG_CONFIG) --libs lua5.4) \
	  $(CORE_LIBS) $(TLS_LIBS) -lm

# Linked against liblua; depends on build/5.4/flags.txt to rebuild when CC,
# CFLAGS or WERROR change.
build/embed: examples/embed/embed.c build/5.4/flags.txt
	@mkdir -p $(@D) && rm -f $@
	$(CC) $(CPPFLAGS) $(CFLAGS) $(WARNINGS) $(if $(filter 1,$(WERROR)),-Werror) \
	  $(shell $(PKG_CONFIG) --cflags lua5.4) -o $@ $< $(LDFLAGS) $(shell $(PKG_CONFIG) --libs lua5.4)

# Each fuzz target compiles src/core.c and src/core_tls.c in with
# fuzz/host.c and links Lua 5.4, cJSON, llhttp and OpenSSL; fuzz_mcp also
# runs the Lua of lua/jrpc/ and fuzz/*.lua, loaded at run time from this
# checkout (JRPC_ROOT), so editing them needs no rebuild. fuzz/run.sh seeds
# each from fuzz/corpus/<target>/ and fails on a crash, a leak, a timeout or
# a broken invariant (the input is left in build/fuzz/artifacts/).
build/fuzz/fuzz_%: fuzz/fuzz_%.c fuzz/host.c fuzz/host.h $(CORE_DEPS)
	@mkdir -p $(@D) && rm -f $@
	$(FUZZ_CC) $(FUZZ_CFLAGS) $(FUZZ_SAN) $(WARNINGS) $(if $(filter 1,$(WERROR)),-Werror) \
	  -DJRPC_ROOT='"$(CURDIR)"' \
	  $(shell $(PKG_CONFIG) --cflags lua5.4 libcjson) $(CRYPTO_CFLAGS) -o $@ $< fuzz/host.c $(CORE_SRC) \
	  src/core_tls.c $(shell $(PKG_CONFIG) --libs lua5.4) $(CORE_LIBS) $(TLS_LIBS) -lm
# }====================================================================
