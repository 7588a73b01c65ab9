-- Run inside `nvim --clean --headless` (0.8 or later) with spec/nvim/hello.c
-- loaded (see spec/nvim/headless_test.lua): vim.lsp.start against clangd,
-- with `cmd = require("jrpc.nvim").lsp_cmd{...}` when $JRPC_LSP_MODE is
-- "jrpc", Neovim's own `cmd = {...}` when it is "native". Writes
-- "key<TAB>value" lines to $JRPC_NVIM_OUT, values as vim.json writes them.
local out = assert(os.getenv("JRPC_NVIM_OUT"), "JRPC_NVIM_OUT not set")
local mode = assert(os.getenv("JRPC_LSP_MODE"), "JRPC_LSP_MODE not set")
local lines = {}
local function put(k, v) lines[#lines + 1] = k .. "\t" .. tostring(v):gsub("\n", "\\n") end
local json = dofile(vim.fn.getcwd() .. "/spec/nvim/sorted_json.lua")
-- what vim.notify gets (Neovim reports a client that died), kept off stderr
local notified = {}
vim.notify = function(msg) notified[#notified + 1] = msg end  -- luacheck: ignore 122

local argv = { "clangd", "--log=error" }
local bufnr = vim.api.nvim_get_current_buf()
local uri = vim.uri_from_bufnr(bufnr)
local exits = {}
local cmd = mode == "jrpc" and require("jrpc.nvim").lsp_cmd(argv) or argv

local function wait(ms, cond) return vim.wait(ms, cond, 10) end

-- the request's handler's (err, result), after waiting for it
local function ask(client, method, params)
  local got
  local ok = client.request(method, params, function(err, result) got = { err = err, result = result } end, bufnr)
  assert(ok, method .. " not sent")
  assert(wait(10000, function() return got ~= nil end), method .. ": no answer")
  return got.err, got.result
end

-- server requests (spec/nvim/asking_server.lua asks them in its hover)
local function asking()
  local code_exit, shown
  local server = { "lua5.4", vim.fn.getcwd() .. "/spec/nvim/asking_server.lua" }
  local id = assert(vim.lsp.start({ name = "asking-" .. mode,
    cmd = mode == "jrpc" and require("jrpc.nvim").lsp_cmd(server, { timeout = 1 }) or server,
    root_dir = vim.fs.dirname(vim.api.nvim_buf_get_name(bufnr)),
    settings = { asking = { answer = 42 } },
    handlers = { ["window/showMessage"] = function(_, result) shown = result.message end },
    on_exit = function(code, signal) code_exit = code .. " " .. signal end }))
  local client = vim.lsp.get_client_by_id(id)
  assert(wait(10000, function() return client.initialized end), "asking: not initialized")
  local e, r = ask(client, "textDocument/hover", { textDocument = { uri = uri }, position = { line = 0, character = 0 } })
  put("asking_err", json(e))
  put("asking", json(vim.json.decode(r.contents.value)))
  -- its notifications, sent before that reply, were handled before its callback ran
  local diagnostics = vim.diagnostic.get(bufnr)
  put("asking_shown", shown)
  put("asking_diagnostics", #diagnostics .. " " .. (diagnostics[1] and diagnostics[1].message or ""))
  if mode == "jrpc" then
    -- option timeout: a request still unanswered after 1 s fails
    local terr
    assert(client.request("asking/slow", nil, function(er, res) terr = er or res end, bufnr))
    assert(wait(3000, function() return terr ~= nil end), "asking: no timeout")
    put("asking_timeout", terr.code .. " " .. terr.message .. " " .. json(terr.data))
    -- killed while its handler sleeps: the request fails with the exit
    local kerr
    assert(client.request("asking/slow", nil, function(er, res) kerr = er or res end, bufnr))
    vim.loop.kill(client.rpc.child.pid, 9)
    assert(wait(5000, function() return kerr ~= nil and code_exit ~= nil end), "asking: kill not seen")
    put("asking_killed", kerr.code .. " " .. kerr.message .. " " .. json(kerr.data))
  else
    client.stop()
  end
  assert(wait(5000, function() return code_exit ~= nil end), "asking: no exit")
  put("asking_exit", code_exit)
end

-- misuse raises; a server that cannot start is reported by vim.lsp.start
local function misuse()
  local jnvim = require "jrpc.nvim"
  put("bad_argv", select(2, pcall(jnvim.lsp_cmd, "clangd")))
  put("bad_option", select(2, pcall(jnvim.lsp_cmd, { "clangd" }, { cwdd = "/" })))
  put("no_server", tostring(vim.lsp.start({ name = "none", cmd = jnvim.lsp_cmd{ "jrpc-no-such-server" },
    root_dir = "/" })))
end

local ok, err = pcall(function()
  if mode == "jrpc" then misuse() end
  asking()
  local id = assert(vim.lsp.start({ name = "clangd-" .. mode, cmd = cmd,
    root_dir = vim.fs.dirname(vim.api.nvim_buf_get_name(bufnr)),
    on_exit = function(code, signal) exits[#exits + 1] = code .. " " .. signal end }))
  local client = vim.lsp.get_client_by_id(id)
  assert(wait(10000, function() return client.initialized end), "not initialized")
  put("hover_provider", client.server_capabilities.hoverProvider)

  local text = table.concat(vim.api.nvim_buf_get_lines(bufnr, 0, -1, false), "\n")
  local col = text:match("int main[^\n]*"):find("add_numbers", 1, true) + 2
  local at = { textDocument = { uri = uri }, position = { line = 3, character = col } }
  local e, r = ask(client, "textDocument/hover", at)
  put("hover_err", json(e)); put("hover", r.contents.value)
  e, r = ask(client, "textDocument/definition", at)
  put("definition_err", json(e)); put("definition", json(r))
  -- Neovim's empty table convention: diagnostics = {} is an array
  e, r = ask(client, "textDocument/codeAction", { textDocument = { uri = uri },
    range = { start = { line = 3, character = col - 3 }, ["end"] = { line = 3, character = col + 14 } },
    context = { diagnostics = {} } })
  put("code_action_err", json(e))
  local titles = {}
  for _, action in ipairs(r or {}) do titles[#titles + 1] = action.title end
  put("code_actions", table.concat(titles, "|"))
  -- a top-level null result is nil
  e, r = ask(client, "textDocument/hover", { textDocument = { uri = uri }, position = { line = 2, character = 0 } })
  put("null_hover", json(e) .. " " .. tostring(r))
  -- an error reply reaches the handler as {code, message}
  e = ask(client, "textDocument/hover", { textDocument = { uri = uri .. ".nope" }, position = at.position })
  put("error_reply", e and (e.code .. " " .. e.message) or "none")

  -- a request cancelled at once: its handler never runs, it is no longer pending
  local called = false
  local sent, rid = client.request("textDocument/hover", at, function() called = true end, bufnr)
  assert(sent)
  client.cancel_request(rid)
  local settled = wait(3000, function() return client.requests[rid] == nil end)
  wait(300, function() return false end)
  put("cancel", ("settled=%s called=%s"):format(settled, called))

  if mode == "jrpc" then
    -- clangd killed with requests in flight: each settles (answered, or
    -- failed with the exit), then on_exit runs
    local settled_n = 0
    local pid = client.rpc.child.pid
    for _, method in ipairs{ "textDocument/hover", "textDocument/definition", "textDocument/documentSymbol" } do
      assert(client.request(method, at, function() settled_n = settled_n + 1 end, bufnr))
    end
    vim.loop.kill(pid, 9)
    assert(wait(5000, function() return settled_n == 3 and #exits > 0 end), "kill: not all settled")
    put("killed_settled", settled_n)
    put("killed_exit", table.concat(exits, ","))
    put("closing", client.rpc.is_closing())
    -- nothing more can be sent: request and notify return false
    put("after_close", ("%s %s"):format(client.rpc.request("textDocument/hover", at, function() end),
      client.rpc.notify("textDocument/didSave", { textDocument = { uri = uri } })))
    put("stderr_kept", #client.rpc.child:stderr_text())
  else
    client.stop()
    assert(wait(5000, function() return #exits > 0 end), "no exit")
    put("stop_exit", table.concat(exits, ","))
  end
end)
if not ok then put("error", err) end
put("notified", table.concat(notified, "|"))
vim.fn.writefile(lines, out)
vim.cmd(ok and "qall!" or "cquit! 3")
