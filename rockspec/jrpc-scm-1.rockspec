rockspec_format = "3.0"
package = "jrpc"
version = "scm-1"

source = {
  url = "git+https://example.invalid/jrpc.git",
}

description = {
  summary = "JSON-RPC 2.0 for Lua, with a C core",
  detailed = [[
jrpc is a JSON-RPC 2.0 library for Lua 5.4 and LuaJIT. A sans-I/O C core
(jrpc.core, on top of the system cJSON) frames, decodes, validates and
encodes messages and keeps the table of pending request ids; a pure-Lua
layer (jrpc) dispatches to Lua handlers and runs requests and clients on
coroutines over pluggable transports.
]],
  labels = {"json-rpc", "jsonrpc", "rpc", "json", "mcp", "lsp"},
}

dependencies = {
  "lua >= 5.1",
}

external_dependencies = {
  CJSON = {
    header = "cjson/cJSON.h",
    library = "cjson",
  },
}

build = {
  type = "builtin",
  modules = {
    -- one translation unit: src/core.c includes the other src/*.c
    ["jrpc.core"] = {
      sources = {"src/core.c"},
      libraries = {"cjson"},
      incdirs = {"$(CJSON_INCDIR)", "$(CJSON_INCDIR)/cjson", "src"},
      libdirs = {"$(CJSON_LIBDIR)"},
    },
    -- the blocking stdio transport's bounded line read (I/O: not in the core)
    ["jrpc.lineread"] = {
      sources = {"src/io/lineread.c"},
    },
    ["jrpc"] = "lua/jrpc/init.lua",
    ["jrpc.client"] = "lua/jrpc/client.lua",
    ["jrpc.errors"] = "lua/jrpc/errors.lua",
    ["jrpc.output"] = "lua/jrpc/output.lua",
    ["jrpc.params"] = "lua/jrpc/params.lua",
    ["jrpc.log"] = "lua/jrpc/log.lua",
    ["jrpc.nvim"] = "lua/jrpc/nvim.lua",
    ["jrpc.peer"] = "lua/jrpc/peer.lua",
    ["jrpc.profiles"] = "lua/jrpc/profiles.lua",
    ["jrpc.server"] = "lua/jrpc/server.lua",
    ["jrpc.stdio"] = "lua/jrpc/stdio.lua",
    ["jrpc.uv"] = "lua/jrpc/uv.lua",
    ["jrpc.uv.co"] = "lua/jrpc/uv/co.lua",
    ["jrpc.uv.files"] = "lua/jrpc/uv/files.lua",
    ["jrpc.uv.handles"] = "lua/jrpc/uv/handles.lua",
    ["jrpc.uv.net"] = "lua/jrpc/uv/net.lua",
    ["jrpc.uv.process"] = "lua/jrpc/uv/process.lua",
    ["jrpc.uv.stdio"] = "lua/jrpc/uv/stdio.lua",
    ["jrpc.uv.stream"] = "lua/jrpc/uv/stream.lua",
    ["jrpc.uv.timers"] = "lua/jrpc/uv/timers.lua",
    ["jrpc.workers"] = "lua/jrpc/workers.lua",
  },
}

test_dependencies = {
  "busted",
}

test = {
  type = "busted",
}
