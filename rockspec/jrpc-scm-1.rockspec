rockspec_format = "3.0"
package = "jrpc"
version = "scm-1"

-- No release is published yet, so this URL names no real repository. Install
-- from a checkout with `luarocks --lua-version 5.4 make` (see the README), or
-- from the source rock `make rock` packs (it points this field at a tarball
-- of the checkout), which installs offline with `luarocks install FILE`.
source = {
  url = "git+https://example.invalid/jrpc.git",
}

description = {
  summary = "JSON-RPC 2.0 for Lua, with a C core",
  detailed = [[
jrpc is a JSON-RPC 2.0 library for Lua 5.4 and LuaJIT 2.1. A sans-I/O C core
(jrpc.core, on top of the system cJSON) frames, decodes, validates and
encodes messages and keeps the table of pending request ids; a pure-Lua
layer (jrpc) dispatches to Lua handlers and runs requests and clients on
coroutines over pluggable transports.
]],
  labels = {"json-rpc", "jsonrpc", "rpc", "json", "mcp", "lsp"},
}

-- Supported: Lua 5.4 and LuaJIT 2.1 (which LuaRocks calls 5.1). PUC Lua
-- 5.1, 5.2 and 5.3 are refused by `require "jrpc"` with a clear message:
-- LuaRocks cannot tell PUC 5.1 from LuaJIT by version.
dependencies = {
  "lua >= 5.1, < 5.5",
}

external_dependencies = {
  CJSON = {
    header = "cjson/cJSON.h",
    library = "cjson",
  },
  -- llhttp 9, Node's HTTP/1.1 parser (Debian 13 and Ubuntu 24.04:
  -- libllhttp-dev; on Debian 12 `make deps` installs Debian 13's packages)
  LLHTTP = {
    header = "llhttp.h",
    library = "llhttp",
  },
  -- OpenSSL 3's libcrypto (Debian: libssl-dev): HMAC-SHA-256, RAND_bytes
  -- (jrpc.core_tls only)
  OPENSSL = {
    header = "openssl/hmac.h",
    library = "crypto",
  },
  -- and its libssl (same package): core.tls_client, TLS over memory BIOs
  LIBSSL = {
    header = "openssl/ssl.h",
    library = "ssl",
  },
  -- hiredis (Debian: libhiredis-dev): the Redis protocol (jrpc.resp only)
  HIREDIS = {
    header = "hiredis/hiredis.h",
    library = "hiredis",
  },
}

build = {
  type = "builtin",
  modules = {
    -- one translation unit: src/core.c includes the other src/*.c
    ["jrpc.core"] = {
      sources = {"src/core.c"},
      libraries = {"cjson", "llhttp"},
      incdirs = {"$(CJSON_INCDIR)", "$(CJSON_INCDIR)/cjson", "$(LLHTTP_INCDIR)", "src"},
      libdirs = {"$(CJSON_LIBDIR)", "$(LLHTTP_LIBDIR)"},
    },
    -- what needs OpenSSL (core.tls_client, core.hmac_sha256, core.random_bytes,
    -- core.equal), its own translation unit: jrpc.core loads it on first use,
    -- so a process that uses none of them never maps libssl and libcrypto
    ["jrpc.core_tls"] = {
      sources = {"src/core_tls.c"},
      libraries = {"ssl", "crypto"},
      incdirs = {"$(OPENSSL_INCDIR)", "$(LIBSSL_INCDIR)", "src"},
      libdirs = {"$(OPENSSL_LIBDIR)", "$(LIBSSL_LIBDIR)"},
    },
    -- the blocking stdio transport's bounded line read (I/O: not in the core)
    ["jrpc.lineread"] = {
      sources = {"src/io/lineread.c"},
    },
    -- RESP2 on hiredis, for jrpc.redis: its own module, so that only a
    -- process that talks to Redis maps libhiredis
    ["jrpc.resp"] = {
      sources = {"src/resp.c"},
      libraries = {"hiredis"},
      incdirs = {"$(HIREDIS_INCDIR)"},
      libdirs = {"$(HIREDIS_LIBDIR)"},
    },
    ["jrpc"] = "lua/jrpc/init.lua",
    ["jrpc.cli"] = "lua/jrpc/cli/init.lua",
    ["jrpc.cli.args"] = "lua/jrpc/cli/args.lua",
    ["jrpc.cli.call"] = "lua/jrpc/cli/call.lua",
    ["jrpc.cli.http"] = "lua/jrpc/cli/http.lua",
    ["jrpc.cli.mcp"] = "lua/jrpc/cli/mcp.lua",
    ["jrpc.cli.output"] = "lua/jrpc/cli/output.lua",
    ["jrpc.cli.run"] = "lua/jrpc/cli/run.lua",
    ["jrpc.cli.trace"] = "lua/jrpc/cli/trace.lua",
    ["jrpc.cli.transport"] = "lua/jrpc/cli/transport.lua",
    ["jrpc.client"] = "lua/jrpc/client.lua",
    ["jrpc.connection"] = "lua/jrpc/connection.lua",
    ["jrpc.errors"] = "lua/jrpc/errors.lua",
    ["jrpc.http_peer"] = "lua/jrpc/http_peer.lua",
    ["jrpc.output"] = "lua/jrpc/output.lua",
    ["jrpc.params"] = "lua/jrpc/params.lua",
    ["jrpc.log"] = "lua/jrpc/log.lua",
    ["jrpc.mcp"] = "lua/jrpc/mcp.lua",
    ["jrpc.mcp.validation"] = "lua/jrpc/mcp/validation.lua",
    ["jrpc.mcp.wire_schema"] = "lua/jrpc/mcp/wire_schema.lua",
    ["jrpc.mcp.content"] = "lua/jrpc/mcp/content.lua",
    ["jrpc.mcp.context"] = "lua/jrpc/mcp/context.lua",
    ["jrpc.mcp.methods"] = "lua/jrpc/mcp/methods.lua",
    ["jrpc.mcp.protocol"] = "lua/jrpc/mcp/protocol.lua",
    ["jrpc.mcp.registry"] = "lua/jrpc/mcp/registry.lua",
    ["jrpc.mcp.server"] = "lua/jrpc/mcp/server.lua",
    ["jrpc.mcp.session"] = "lua/jrpc/mcp/session.lua",
    ["jrpc.mcp.http"] = "lua/jrpc/mcp/http.lua",
    ["jrpc.mcp.mrtr"] = "lua/jrpc/mcp/mrtr.lua",
    ["jrpc.mcp.client"] = "lua/jrpc/mcp/client.lua",
    ["jrpc.mcp.client_call"] = "lua/jrpc/mcp/client_call.lua",
    ["jrpc.mcp.client_era"] = "lua/jrpc/mcp/client_era.lua",
    ["jrpc.mcp.client_http"] = "lua/jrpc/mcp/client_http.lua",
    ["jrpc.mcp.client_http_session"] = "lua/jrpc/mcp/client_http_session.lua",
    ["jrpc.mcp.client_input"] = "lua/jrpc/mcp/client_input.lua",
    ["jrpc.mcp.client_lists"] = "lua/jrpc/mcp/client_lists.lua",
    ["jrpc.mcp.client_listen"] = "lua/jrpc/mcp/client_listen.lua",
    ["jrpc.mcp.client_stdio"] = "lua/jrpc/mcp/client_stdio.lua",
    ["jrpc.mcp.http_headers"] = "lua/jrpc/mcp/http_headers.lua",
    ["jrpc.mcp.http_auth"] = "lua/jrpc/mcp/http_auth.lua",
    ["jrpc.mcp.http_session"] = "lua/jrpc/mcp/http_session.lua",
    ["jrpc.mcp.http_replay"] = "lua/jrpc/mcp/http_replay.lua",
    ["jrpc.mcp.listeners"] = "lua/jrpc/mcp/listeners.lua",
    ["jrpc.mcp.oauth"] = "lua/jrpc/mcp/oauth.lua",
    ["jrpc.mcp.oauth_fetch"] = "lua/jrpc/mcp/oauth_fetch.lua",
    ["jrpc.mcp.oauth_loopback"] = "lua/jrpc/mcp/oauth_loopback.lua",
    ["jrpc.mcp.oauth_parse"] = "lua/jrpc/mcp/oauth_parse.lua",
    ["jrpc.mcp.oauth_store"] = "lua/jrpc/mcp/oauth_store.lua",
    ["jrpc.mcp.tasks"] = "lua/jrpc/mcp/tasks.lua",
    ["jrpc.mcp.task_store"] = "lua/jrpc/mcp/task_store.lua",
    ["jrpc.mcp.task_store_redis"] = "lua/jrpc/mcp/task_store_redis.lua",
    ["jrpc.mcp.events"] = "lua/jrpc/mcp/events.lua",
    ["jrpc.mcp.events_redis"] = "lua/jrpc/mcp/events_redis.lua",
    ["jrpc.mcp.client_tasks"] = "lua/jrpc/mcp/client_tasks.lua",
    ["jrpc.nvim"] = "lua/jrpc/nvim.lua",
    ["jrpc.nvim.loop"] = "lua/jrpc/nvim/loop.lua",
    ["jrpc.nvim.lsp"] = "lua/jrpc/nvim/lsp.lua",
    ["jrpc.nvim.mcp"] = "lua/jrpc/nvim/mcp.lua",
    ["jrpc.peer"] = "lua/jrpc/peer.lua",
    ["jrpc.redis"] = "lua/jrpc/redis.lua",
    ["jrpc.options"] = "lua/jrpc/options.lua",
    ["jrpc.profiles"] = "lua/jrpc/profiles.lua",
    ["jrpc.schema"] = "lua/jrpc/schema.lua",
    ["jrpc.schema.annotations"] = "lua/jrpc/schema/annotations.lua",
    ["jrpc.schema.compile"] = "lua/jrpc/schema/compile.lua",
    ["jrpc.schema.cycles"] = "lua/jrpc/schema/cycles.lua",
    ["jrpc.schema.format"] = "lua/jrpc/schema/format.lua",
    ["jrpc.schema.index"] = "lua/jrpc/schema/index.lua",
    ["jrpc.schema.path"] = "lua/jrpc/schema/path.lua",
    ["jrpc.schema.regex"] = "lua/jrpc/schema/regex.lua",
    ["jrpc.schema.uri"] = "lua/jrpc/schema/uri.lua",
    ["jrpc.schema.value"] = "lua/jrpc/schema/value.lua",
    ["jrpc.schema.keywords.array"] = "lua/jrpc/schema/keywords/array.lua",
    ["jrpc.schema.keywords.logic"] = "lua/jrpc/schema/keywords/logic.lua",
    ["jrpc.schema.keywords.object"] = "lua/jrpc/schema/keywords/object.lua",
    ["jrpc.schema.keywords.ref"] = "lua/jrpc/schema/keywords/ref.lua",
    ["jrpc.schema.keywords.scalar"] = "lua/jrpc/schema/keywords/scalar.lua",
    ["jrpc.schema.keywords.unevaluated"] = "lua/jrpc/schema/keywords/unevaluated.lua",
    ["jrpc.server"] = "lua/jrpc/server.lua",
    ["jrpc.socket"] = "lua/jrpc/socket.lua",
    ["jrpc.socket.conn"] = "lua/jrpc/socket/conn.lua",
    ["jrpc.socket.net"] = "lua/jrpc/socket/net.lua",
    ["jrpc.stdio"] = "lua/jrpc/stdio.lua",
    ["jrpc.stdout"] = "lua/jrpc/stdout.lua",
    ["jrpc.uv"] = "lua/jrpc/uv.lua",
    ["jrpc.uv.co"] = "lua/jrpc/uv/co.lua",
    ["jrpc.uv.files"] = "lua/jrpc/uv/files.lua",
    ["jrpc.uv.handles"] = "lua/jrpc/uv/handles.lua",
    ["jrpc.uv.http"] = "lua/jrpc/uv/http.lua",
    ["jrpc.uv.http_client"] = "lua/jrpc/uv/http_client.lua",
    ["jrpc.uv.idle_gc"] = "lua/jrpc/uv/idle_gc.lua",
    ["jrpc.uv.busy_poll"] = "lua/jrpc/uv/busy_poll.lua",
    ["jrpc.uv.net"] = "lua/jrpc/uv/net.lua",
    ["jrpc.uv.process"] = "lua/jrpc/uv/process.lua",
    ["jrpc.uv.stdio"] = "lua/jrpc/uv/stdio.lua",
    ["jrpc.uv.stream"] = "lua/jrpc/uv/stream.lua",
    ["jrpc.uv.timers"] = "lua/jrpc/uv/timers.lua",
    ["jrpc.workers"] = "lua/jrpc/workers.lua",
  },
  -- the `jrpc` command (jrpc.cli); LuaRocks wraps it to run with the
  -- tree's interpreter and search paths. It needs luv, which the rock does
  -- not depend on (the library does not need it).
  install = {
    bin = {
      jrpc = "bin/jrpc",
    },
  },
}

test_dependencies = {
  "busted",
}

test = {
  type = "busted",
}
