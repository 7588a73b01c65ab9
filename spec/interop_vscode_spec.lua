-- Interop with vscode-jsonrpc 10.0.0 (the library under VS Code's language
-- client), as real node processes over stdio with Content-Length framing:
--   * a jrpc client (jrpc.uv, loop:spawn) driving node/vscode_server.js;
--   * node/vscode_client.js driving spec/interop_lsp_server.lua (jrpc).
-- Both ways: results and errors as the other library words them, requests
-- back to the caller while its request is open, notifications, and LSP
-- cancellation ($/cancelRequest answered -32800).
local jrpc = require "jrpc"

local S = dofile("spec/uv_support.lua")
local loop = S.loop
local INTERPRETER = rawget(_G, "jit") and "luajit" or "lua5.4"

-- {======================================================================
-- jrpc client -> vscode-jsonrpc server
-- =======================================================================

-- The server logs each message it reads or writes on stderr as a JSON line
-- {"dir":"in"|"out","msg":...}: what went over the wire, as it saw it.
local function wire_log()
  local log, partial = { ["in"] = {}, out = {} }, ""
  function log.feed(chunk)
    local lines = {}
    partial = S.split_lines(partial .. chunk, lines)
    for _, line in ipairs(lines) do
      local entry = jrpc.decode(line)
      if type(entry) == "table" and log[entry.dir] then table.insert(log[entry.dir], entry.msg) end
    end
  end
  -- the first message in direction `dir` for which match(msg) is true
  function log.find(dir, match)
    for _, msg in ipairs(log[dir]) do
      if match(msg) then return msg end
    end
  end
  return log
end

describe("jrpc client -> vscode-jsonrpc server (node/vscode_server.js)", function()
  local child, wire, seen

  before_each(function()
    wire, seen = wire_log(), { names = {}, noted = {}, cancels = {}, logs = {}, debug = {} }
    child = assert(loop:spawn{
      cmd = "node", args = { "node/vscode_server.js" },
      framing = "lsp", profile = "lsp", timeout = 5, stderr = wire.feed,
      on_error = function(msg) table.insert(seen.logs, msg) end,
      on_debug = function(msg) table.insert(seen.debug, msg) end,
      methods = {
        ["client/name"] = function(p, ctx)
          table.insert(seen.names, { id = ctx.id, params = p })
          return "jrpc:" .. p.asked
        end,
        noted = function(p) table.insert(seen.noted, p) end,
        ["observed/cancel"] = function(p) table.insert(seen.cancels, p) end,
      },
    })
  end)

  after_each(function()
    if child and child.exit_code == nil then loop:run(function() child:shutdown(1) end) end
    child = nil
  end)

  it("gets results, and errors exactly as vscode-jsonrpc makes them", function()
    loop:run(function()
      local peer = child.peer
      assert.equal(5, peer:request("add", { a = 2, b = 3 }))
      local result, err = peer:request("nope", { x = 1 })
      assert.is_nil(result)
      assert.same({ code = -32601, message = "Unhandled method nope" }, err)
      err = select(2, peer:request("fail", { tag = "f" }))
      assert.same({ code = -32001, message = "custom failure", data = { tag = "f", list = { 1, 2 } } }, err)
      err = select(2, peer:request("throw", {}))
      assert.same({ code = -32603, message = "Request throw failed with message: boom" }, err)
    end)
    assert.same({}, seen.logs)
  end)

  it("exchanges large multi-byte messages (Content-Length counts bytes)", function()
    local text = string.rep("é∑😀\n\"", 30000)  -- 330,000 bytes, 150,000 UTF-16 units
    loop:run(function()
      assert.same({ s = text }, child.peer:request("echo", { s = text }))
    end)
  end)

  it("answers the server's request back while its own request is open", function()
    loop:run(function()
      assert.equal("hello jrpc:lua", child.peer:request("greet", { who = "lua" }))
    end)
    -- vscode-jsonrpc numbers its requests from 0
    assert.same({ { id = 0, params = { asked = "lua" } } }, seen.names)
  end)

  it("sends and receives notifications", function()
    loop:run(function()
      assert.is_true(child.peer:notify("note", { n = 1 }))
      assert.is_true(child.peer:notify("note", { n = 2 }))
      assert.is_true(S.wait_until(function() return #seen.noted == 2 end, 3), "no noted notifications")
    end)
    assert.same({ { echo = { n = 1 }, count = 1 }, { echo = { n = 2 }, count = 2 } }, seen.noted)
    assert.same({ { jsonrpc = "2.0", method = "note", params = { n = 1 } },
                  { jsonrpc = "2.0", method = "note", params = { n = 2 } } }, wire["in"])
  end)

  it("cancels a request the server sits on: $/cancelRequest, the server answers -32800", function()
    loop:run(function()
      local peer, settled = child.peer, nil
      local id = peer:request("wait", { tag = "w" }, nil, function(err, result)
        settled = { err = err, result = result }
      end)
      local function is_wait(msg) return msg.method == "wait" end
      assert.is_true(S.wait_until(function() return wire.find("in", is_wait) ~= nil end, 3))
      assert.is_true(peer:cancel(id))
      -- ours settles at once, without waiting for the server
      assert.equal("cancelled", settled.err.code)
      assert.is_nil(settled.result)
      assert.is_true(S.wait_until(function() return #seen.cancels == 1 end, 3), "the server saw no cancel")
      assert.same({ tag = "w", cancelled = true }, seen.cancels[1])
      -- its late -32800 reply reaches us and is dropped, not answered
      assert.is_true(S.wait_until(function() return peer:stats().unmatched == 1 end, 3))
      -- routine: on_debug sees it, on_error does not
      assert.same({ "response to unknown or settled request id " .. id .. " dropped" }, seen.debug)
      assert.same({}, seen.logs)
      assert.same({ jsonrpc = "2.0", method = "$/cancelRequest", params = { id = id } },
        wire.find("in", function(msg) return msg.method == "$/cancelRequest" end))
      assert.same({ jsonrpc = "2.0", id = id, error = { code = -32800, message = "Request cancelled" } },
        wire.find("out", function(msg) return msg.id == id end))
      assert.equal(7, peer:request("add", { a = 3, b = 4 }))
    end)
  end)

  it("tells the server when a request times out; the server answers -32800", function()
    loop:run(function()
      local result, err = child.peer:request("wait", { tag = "t" }, { timeout = 0.2 })
      assert.is_nil(result)
      assert.same({ code = "timeout", message = "request timed out" }, err)
      assert.is_true(S.wait_until(function() return #seen.cancels == 1 end, 3), "the server saw no cancel")
      assert.same({ tag = "t", cancelled = true }, seen.cancels[1])
      assert.is_true(S.wait_until(function() return child.peer:stats().unmatched == 1 end, 3))
    end)
    assert.equal(1, #seen.debug)
    assert.matches("^response to unknown or settled request id %d+ dropped$", seen.debug[1])
    assert.same({}, seen.logs)
  end)

  it("sees the server exit when its stdin closes", function()
    local code, signal = loop:run(function() return child:shutdown(2) end)
    assert.equal(0, code)
    assert.equal(0, signal)
    assert.is_true(child:closed())
  end)
end)

-- }======================================================================

-- {======================================================================
-- vscode-jsonrpc client -> jrpc server
-- =======================================================================

local function slurp(path)
  local f = io.open(path, "rb")
  if not f then return "" end
  local s = f:read("a")
  f:close()
  return s
end

-- Run node/vscode_client.js against the jrpc server in `mode`; returns its
-- report as a list of step names and a map step -> report, plus stderr.
-- coreutils timeout guards the spec should node itself hang.
local function run_vscode_client(mode)
  local errfile = os.tmpname()
  local cmd = ("timeout -k 2 20 node node/vscode_client.js %s spec/interop_lsp_server.lua %s 2>%s")
    :format(INTERPRETER, mode, errfile)
  local pipe = assert(io.popen(cmd))
  local steps, by_step = {}, {}
  for line in pipe:lines() do
    local report = assert(jrpc.decode(line), line)
    steps[#steps + 1] = report.step
    by_step[report.step] = report
  end
  pipe:close()
  local stderr = slurp(errfile)
  os.remove(errfile)
  return steps, by_step, stderr
end

for _, mode in ipairs{ "uv", "blocking" } do
  describe("vscode-jsonrpc client -> jrpc server (" .. mode .. " stdio, " .. INTERPRETER .. ")", function()
    it("is called, called back, notified and cancelled, with the answers vscode-jsonrpc sees", function()
      local steps, got, stderr = run_vscode_client(mode)
      assert.same({ "sum_named", "sum_positional", "invalid_params", "not_found", "custom_error",
        "throws", "ask", "noted", "blocked", "cancel", "saw_cancel", "after_cancel", "exit", "responses" },
        steps, stderr)
      assert.equal(5, got.sum_named.result)
      assert.equal(42, got.sum_positional.result)
      assert.same({ code = -32602, message = 'Invalid params: "b" is required' }, got.invalid_params.error)
      assert.same({ code = -32601, message = "Method not found" }, got.not_found.error)
      assert.same({ code = -32001, message = "custom failure", data = { tag = "f", list = { 1, 2 } } },
        got.custom_error.error)
      -- a handler that raises leaks nothing: no message text, no data
      assert.same({ code = -32603, message = "Internal error" }, got.throws.error)
      -- the server asked the client back (client/name) before answering
      assert.equal("hello vscode:vs", got.ask.result)
      assert.same({ echo = { n = 1 }, count = 1 }, got.noted.params)
      -- cancelled while the handler waited in client/block: -32800, and the
      -- handler, once woken, saw ctx:cancelled()
      assert.same({ tag = "h" }, got.blocked.params)
      assert.same({ code = -32800, message = "Request cancelled" }, got.cancel.error)
      assert.same({ tag = "h", cancelled = true }, got.saw_cancel.params)
      assert.equal(2, got.after_cancel.result)
      assert.same({ step = "exit", code = 0, signal = jrpc.null }, got.exit)
      -- 9 requests, each answered exactly once (the cancelled one too)
      assert.same({ step = "responses", count = 9, more_than_once = 0 }, got.responses)
      -- the server logged the raising handler, and nothing else
      assert.matches('^jrpc: method "throw" failed: [^\n]*: boom\n$', stderr)
    end)
  end)
end

-- }======================================================================
