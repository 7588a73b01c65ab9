-- Interop with jayson 5.0.0 over TCP on 127.0.0.1, as real node processes:
--   * a jrpc client (loop:connect) against node/jayson_server.js;
--   * node/jayson_client.js against a jrpc server (loop:listen).
-- jayson's TCP transport is newline-delimited JSON both ways (it splits its
-- input on "\n" outside strings and ends each reply with "\n"), which is
-- jrpc's default ndjson framing; its client opens one connection per call.
-- Checked: results, batches, and the error codes and messages exactly as
-- each side produces them.
local jrpc = require "jrpc"
local uv = require "luv"

local S = dofile("spec/uv_support.lua")
local loop = S.loop

-- {======================================================================
-- A node script whose stdout is JSON lines (not JSON-RPC): plain luv
-- =======================================================================

-- Start `node args...`; its stdout lines are decoded into proc.lines.
-- The callbacks only store what they get: an error raised in a luv
-- callback would end the whole busted process.
local function start_node(args)
  local proc = { lines = {}, stdin = uv.new_pipe(false), stdout = uv.new_pipe(false) }
  local partial = ""
  local handle, err = uv.spawn("node", { args = args, stdio = { proc.stdin, proc.stdout, 2 } },
    function(code, signal)
      proc.code, proc.signal = code, signal
      proc.handle:close()
    end)
  if not handle then
    proc.stdin:close(); proc.stdout:close()
    error("cannot start node: " .. tostring(err))
  end
  proc.handle = handle
  proc.stdout:read_start(function(_, chunk)
    if chunk == nil then return proc.stdout:close() end  -- end (or error)
    local lines = {}
    partial = S.split_lines(partial .. chunk, lines)
    for _, line in ipairs(lines) do
      proc.lines[#proc.lines + 1] = jrpc.decode(line) or { undecodable = line }
    end
  end)
  return proc
end

-- Close its stdin (our scripts exit at the end of their input or when
-- done); SIGKILL it if it has not exited within 2 s.
local function stop_node(proc)
  if proc == nil then return end
  if not proc.stdin:is_closing() then proc.stdin:close() end
  loop:run(function()
    if S.wait_until(function() return proc.code ~= nil end, 2) then return end
    proc.handle:kill("sigkill")
    S.wait_until(function() return proc.code ~= nil end, 2)
  end)
  if not proc.stdout:is_closing() then proc.stdout:close() end
end

-- The report line for `step`, or nil.
local function report(proc, step)
  for _, line in ipairs(proc.lines) do
    if line.step == step then return line end
  end
end

local function steps_of(proc)
  local steps = {}
  for i, line in ipairs(proc.lines) do steps[i] = line.step or line.port or line.undecodable end
  return steps
end

-- }======================================================================

describe("jrpc client -> jayson TCP server (node/jayson_server.js)", function()
  local node, conn

  before_each(function()
    node = start_node{ "node/jayson_server.js" }
  end)

  after_each(function()
    if conn then conn:close() end
    stop_node(node)
    node, conn = nil, nil
  end)

  -- Connect once the server has printed its port.
  local function connect()
    return loop:run(function()
      assert(S.wait_until(function() return node.lines[1] ~= nil end, 5), "jayson server printed no port")
      local port = assert(node.lines[1].port, "no port in the first line")
      conn = assert(loop:connect{ host = "127.0.0.1", port = port, timeout = 5 })
      return conn.peer
    end)
  end

  it("answers calls; its errors arrive with jayson's codes, messages and data", function()
    local peer = connect()
    loop:run(function()
      assert.equal(5, peer:request("add", { 2, 3 }))
      assert.equal(42, peer:request("add", { a = 40, b = 2 }))
      assert.same({ s = 'é\n"x\\', n = jrpc.null }, peer:request("echo", { s = 'é\n"x\\', n = jrpc.null }))
      local big = string.rep("é∑😀\n\"", 30000)  -- 330,000 bytes: many TCP reads each way
      assert.same({ big }, peer:request("echo", { big }))
      local result, err = peer:request("add", { a = 1 })
      assert.is_nil(result)
      assert.same({ code = -32602, message = "Invalid method parameter(s)" }, err)
      err = select(2, peer:request("nope", {}))
      assert.same({ code = -32601, message = "Method not found" }, err)
      err = select(2, peer:request("fail", { tag = "t" }))
      assert.same({ code = -32000, message = "custom failure", data = { tag = "t", list = { 1, 2 } } }, err)
      err = select(2, peer:request("throws", {}))
      assert.same({ code = -32603, message = "Internal error" }, err)
    end)
  end)

  it("sends notifications and batches; batch answers come back in call order", function()
    local peer = connect()
    loop:run(function()
      assert.is_true(peer:notify("note", { n = 1 }))
      local answers = peer:batch{
        { "add", { 1, 2 } },
        { "note", { n = 2 }, notify = true },
        { "nope", {} },
        { "add", { a = "x", b = 1 } },
        { "throws", {} },
        { "fail", { tag = "b" } },
        { "add", { 10, 20 } },
      }
      assert.same({
        { result = 3 },
        { error = { code = -32601, message = "Method not found" } },
        { error = { code = -32602, message = "Invalid method parameter(s)" } },
        { error = { code = -32603, message = "Internal error" } },
        { error = { code = -32000, message = "custom failure", data = { tag = "b", list = { 1, 2 } } } },
        { result = 30 },
      }, answers)
      -- one stream, read in order: both notifications arrived before this call
      assert.same({ { n = 1 }, { n = 2 } }, peer:request("notes", {}))
    end)
  end)

  it("settles a pending request with \"closed\" when the server goes away", function()
    local peer = connect()
    loop:run(function()
      local result, err = peer:request("vanish", {})  -- the server exits without a reply
      assert.is_nil(result)
      assert.same({ code = "closed", message = "connection closed by the other side" }, err)
      assert.is_true(conn:closed())
      assert.is_true(S.wait_until(function() return node.code ~= nil end, 3))
      assert.equal(3, node.code)
    end)
  end)
end)

describe("jayson TCP client (node/jayson_client.js) -> jrpc server (loop:listen)", function()
  local node, server

  after_each(function()
    stop_node(node)
    if server then server:close() end
    node, server = nil, nil
  end)

  it("gets jrpc's results, batch answers and exact errors", function()
    local notes, logs, accepted = {}, {}, 0
    server = assert(loop:listen{
      host = "127.0.0.1", port = 0, timeout = 5,
      on_error = function(msg) logs[#logs + 1] = msg end,
      methods = {
        fail = function(p) jrpc.error(-32000, "custom failure", { tag = p.tag, list = jrpc.array{ 1, 2 } }) end,
        throws = function() error("boom") end,
        note = function(p) notes[#notes + 1] = p end,
      },
      on_peer = function(conn)
        accepted = accepted + 1
        conn.peer:method("add", function(p) return p.a + p.b end, jrpc.params{ "a:number", "b:number" })
      end,
    })
    assert.is_true(server.port > 0)
    node = start_node{ "node/jayson_client.js", tostring(server.port) }
    loop:run(function()
      assert.is_true(S.wait_until(function() return report(node, "done") or node.code end, 10),
        "jayson client did not finish")
      -- jayson ends each connection after its reply; the notifications may land last
      assert.is_true(S.wait_until(function() return next(server.connections) == nil and #notes == 2 end, 3))
    end)
    assert.same({ "add_positional", "add_named", "invalid_params", "not_found", "custom_error",
      "throws", "generated_id", "notification", "batch", "done" }, steps_of(node))
    local function response(step) return report(node, step).response end
    assert.same({ jsonrpc = "2.0", id = 1, result = 5 }, response("add_positional"))
    assert.same({ jsonrpc = "2.0", id = "two", result = 42 }, response("add_named"))
    assert.same({ jsonrpc = "2.0", id = 3,
      error = { code = -32602, message = 'Invalid params: "b" is required' } }, response("invalid_params"))
    assert.same({ jsonrpc = "2.0", id = 4, error = { code = -32601, message = "Method not found" } },
      response("not_found"))
    assert.same({ jsonrpc = "2.0", id = 5,
      error = { code = -32000, message = "custom failure", data = { tag = "t", list = { 1, 2 } } } },
      response("custom_error"))
    assert.same({ jsonrpc = "2.0", id = 6, error = { code = -32603, message = "Internal error" } },
      response("throws"))
    local generated = report(node, "generated_id")
    assert.is_string(generated.sent_id)  -- jayson's own (a UUID), echoed exactly
    assert.same({ jsonrpc = "2.0", id = generated.sent_id, result = 2 }, generated.response)
    assert.same({ step = "notification" }, report(node, "notification"))
    assert.same({
      { jsonrpc = "2.0", id = "b1", result = 3 },
      { jsonrpc = "2.0", id = "b2", error = { code = -32601, message = "Method not found" } },
      { jsonrpc = "2.0", id = "b3", error = { code = -32602, message = 'Invalid params: "a" must be a number' } },
      { jsonrpc = "2.0", id = "b4", error = { code = -32603, message = "Internal error" } },
      { jsonrpc = "2.0", id = "b5",
        error = { code = -32000, message = "custom failure", data = { tag = "b", list = { 1, 2 } } } },
      { jsonrpc = "2.0", id = "b6", result = 30 },
    }, response("batch"))
    -- (two connections: which one is read first is the kernel's business)
    table.sort(notes, function(a, b) return a.n < b.n end)
    assert.same({ { n = 1 }, { n = 2 } }, notes)
    assert.equal(9, accepted)  -- one connection per call, and one for the batch
    -- the raising handler was logged (twice: alone and in the batch), nothing else
    assert.equal(2, #logs, table.concat(logs, "\n"))
    for _, msg in ipairs(logs) do assert.matches('^method "throws" failed: .*boom', msg) end
  end)
end)
