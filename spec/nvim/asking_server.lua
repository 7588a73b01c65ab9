#!/usr/bin/env lua5.4
--- A small language server for spec/nvim/lsp_cmd.lua (lua5.4, luv): its
-- hover asks the editor four server requests and answers with what came
-- back, as JSON text, so the spec sees how each was answered:
-- workspace/configuration, window/workDoneProgress/create,
-- workspace/workspaceFolders and a method no editor knows. Before it
-- answers it sends window/showMessage and textDocument/publishDiagnostics.
-- asking/slow answers after 30 s (a request in flight when it is killed).
local root = debug.getinfo(1, "S").source:match("^@(.*)/spec/nvim/[^/]*$") or "."
dofile(root .. "/examples/paths.lua")

local jrpc = require "jrpc"

local function ask(peer, method, params)
  local result, err = peer:request(method, params, { timeout = 5 })
  if err then return { error = { code = err.code, message = err.message } } end
  return { result = result }
end

local loop = jrpc.uv.new(require "luv", { catch_sigpipe = true })
assert(loop:stdio{ profile = "lsp", methods = {
  initialize = function() return { capabilities = { hoverProvider = true } } end,
  initialized = function() end,
  ["textDocument/didOpen"] = function() end,
  ["textDocument/hover"] = function(params, ctx)
    local peer = ctx.peer
    peer:notify("window/showMessage", { type = 3, message = "asking: a message" })
    peer:notify("textDocument/publishDiagnostics", { uri = params.textDocument.uri, diagnostics = {
      { range = { start = { line = 0, character = 0 }, ["end"] = { line = 0, character = 3 } },
        severity = 2, message = "asking: a diagnostic" } } })
    local answers = {
      configuration = ask(peer, "workspace/configuration", { items = { { section = "asking" } } }),
      progress = ask(peer, "window/workDoneProgress/create", { token = "asking-1" }),
      folders = ask(peer, "workspace/workspaceFolders", nil),
      unknown = ask(peer, "asking/unknownMethod", { x = 1 }),
    }
    return { contents = { kind = "plaintext", value = jrpc.encode(answers) } }
  end,
  ["asking/slow"] = function() loop:sleep(30) return "late" end,
  shutdown = function() return jrpc.null end,
  exit = function() os.exit(0) end,
} })
loop:serve_forever()
