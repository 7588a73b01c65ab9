-- bench/servers/lsp_stub.lua: a language server stub on stdin/stdout
-- (Content-Length framing), for bench/nvim_lsp.lua: it answers every
-- `textDocument/hover` with the same small hover, `shutdown` with null,
-- and leaves at `exit` or at the end of input. Both Neovim clients talk to
-- it, so what differs between their figures is the client.
--
--   luajit bench/servers/lsp_stub.lua

local script_dir = debug.getinfo(1, "S").source:match("^@(.*)[/\\][^/\\]*$") or "."
dofile(script_dir .. "/../../examples/paths.lua")  -- lua/ and build/ of this checkout

local jrpc = require "jrpc"

-- what clangd 14 answers for a documented function (a markdown hover and its range)
local HOVER = {
  contents = { kind = "markdown", value = "### function `add_numbers`  \n\n---\n→ `int`  \nParameters:  \n"
    .. "- `int a`\n- `int b`\n\nAdds two integers and returns their sum.  \n\n---\n```cpp\n"
    .. "static int add_numbers(int a, int b)\n```" },
  range = { start = { line = 3, character = 24 }, ["end"] = { line = 3, character = 35 } },
}

local loop = jrpc.uv.new(require "luv", { catch_sigpipe = true })
assert(loop:stdio{ framing = "lsp", profile = "lsp", methods = {
  ["textDocument/hover"] = function() return HOVER end,
  shutdown = function() return jrpc.null end,
  exit = function() loop:stop() end,
} })
loop:serve_forever()
