-- Replies larger than max_message_bytes (issue 27, point 8). A real child
-- process (spec/fault/actor.lua, spawned with jrpc's own loop:spawn) answers
-- our requests with exactly the bytes a step list says; we check that a
-- reply over the limit never leaves its request waiting: it settles at once
-- with -32600 "reply too large: ...", and the connection goes on working.
-- The requests carry no timeout: a request left waiting fails the spec by
-- the watchdog of S.run, not by a timeout that would hide it.
local F = dofile("spec/fault/support.lua")
local S = F.S

local LIMIT = 64 * 1024
local BIG = 100 * 1024  -- bytes of payload in an over-limit reply

local function frame_as(json, framing)
  return framing == "lsp" and F.frame(json) or json .. "\n"
end

local function reply(result, id)
  return ('{"jsonrpc":"2.0","result":%d,"id":%d}'):format(result, id)
end

-- Steps that write one message `head .. ("x"):rep(n) .. tail`, framed,
-- streamed in blocks (the body is never one string in the child).
local function big_message(framing, head, n, tail)
  if framing == "lsp" then
    return { "write", "Content-Length: " .. (#head + n + #tail) .. "\r\n\r\n" .. head }, { "rep", "x", n },
      { "write", tail }
  end
  return { "write", head }, { "rep", "x", n }, { "write", tail .. "\n" }
end

local function steps(list)
  local out = {}
  for _, s in ipairs(list) do
    if type(s[1]) == "table" then
      for _, t in ipairs(s) do out[#out + 1] = t end
    else
      out[#out + 1] = s
    end
  end
  return out
end

local function too_large_message(framing, size, all)
  local msg
  if framing == "lsp" then
    msg = ("reply too large: %d bytes, limit %d bytes (max_message_bytes)"):format(size, LIMIT)
  else
    msg = ("reply too large: more than %d bytes, limit %d bytes (max_message_bytes)"):format(LIMIT, LIMIT)
  end
  if all then msg = msg .. "; its id could not be read, so every pending request failed" end
  return msg
end

-- `child.peer:request` with a callback; returns a table that gets `done`,
-- `result` and `err` when the request settles.
local function start_request(child, method, params)
  local out = {}
  child.peer:request(method, params, nil, function(err, result)
    out.result, out.err, out.done = result, err, true
  end)
  return out
end

describe("a reply over max_message_bytes (a real child process)", function()
  after_each(S.cleanup)

  for _, framing in ipairs{ "ndjson", "lsp" } do
    local read = framing == "lsp" and "readframe" or "readline"

    it(framing .. ": the request it answers settles at once with the error; the next request works", function()
      S.run(function()
        local head, tail = '{"jsonrpc":"2.0","id":1,"result":{"symbols":"', '"}}'
        local child, _, log = assert(F.actor(steps{
          { read }, { big_message(framing, head, BIG, tail) },
          { read }, { "write", frame_as(reply(5, 2), framing) },
          { "drain" },
        }, { framing = framing, max_message_bytes = LIMIT }))
        local t0 = S.now()
        local result, err = child.peer:request("textDocument/documentSymbol", { uri = "file:///big.ts" })
        assert.is_true(S.since(t0) < 5, "took " .. S.since(t0))
        assert.is_nil(result)
        assert.are.equal(-32600, err.code)
        local size = #head + BIG + #tail
        assert.are.equal(too_large_message(framing, size), err.message)
        assert.are.same({ size = framing == "lsp" and size or nil, limit = LIMIT }, err.data)
        -- the peer keeps answering, the stream is in sync
        assert.are.equal(5, child.peer:request("subtract", { 7, 2 }))
        assert.are.equal(0, child.peer:stats().pending)
        assert.are.same({}, log)
        assert.are.same({ 0, 0 }, { child:shutdown() })
        -- we sent the two requests and nothing else (no cancel: it was answered)
        local sent = F.decode_all({ child:stderr_text() }, framing)
        assert.are.same({ "textDocument/documentSymbol", "subtract" }, { sent[1].method, sent[2].method })
        assert.are.equal(2, #sent)
      end)
    end)

    it(framing .. ": a reply whose id comes after its result settles every pending request, which are cancelled", function()
      S.run(function()
        -- gopls writes {"jsonrpc","result","id"}: the id is out of reach
        local head, tail = '{"jsonrpc":"2.0","result":["', '"],"id":2}'
        local child = assert(F.actor(steps{
          { read }, { read }, { big_message(framing, head, BIG, tail) },
          { read }, { read }, { read }, { "write", frame_as(reply(5, 3), framing) },
          { "drain" },
        }, { framing = framing, max_message_bytes = LIMIT, profile = "lsp" }))
        local a = start_request(child, "a")
        local b = start_request(child, "b")
        assert.is_true(S.wait_until(function() return a.done and b.done end, 5))
        for _, r in ipairs{ a, b } do
          assert.is_nil(r.result)
          assert.are.equal(-32600, r.err.code)
          assert.are.equal(too_large_message(framing, #head + BIG + #tail, true), r.err.message)
        end
        assert.are.equal(5, child.peer:request("subtract", { 7, 2 }))
        assert.are.same({ 0, 0 }, { child:shutdown() })
        -- both were cancelled ($/cancelRequest: the lsp profile), then came the third request
        local sent = F.decode_all({ child:stderr_text() }, framing)
        assert.are.equal(5, #sent)
        local cancelled = { sent[3].params.id, sent[4].params.id }
        table.sort(cancelled)
        assert.are.same({ "$/cancelRequest", "$/cancelRequest", "subtract" }, { sent[3].method, sent[4].method, sent[5].method })
        assert.are.same({ 1, 2 }, cancelled)
      end)
    end)

    it(framing .. ": an over-limit notification settles nothing; the pending request gets its reply", function()
      S.run(function()
        local head, tail = '{"jsonrpc":"2.0","method":"textDocument/publishDiagnostics","params":{"d":"', '"}}'
        local child, _, log, debug = assert(F.actor(steps{
          { read }, { big_message(framing, head, BIG, tail) }, { "write", frame_as(reply(19, 1), framing) },
          { "drain" },
        }, { framing = framing, max_message_bytes = LIMIT }))
        assert.are.equal(19, child.peer:request("subtract", { 42, 23 }))
        assert.are.same({}, log)
        assert.are.same({ "dropped input that is not a valid message: -32600 Message too large: "
          .. "message larger than the limit of 65536 bytes (a client does not answer it)" }, debug)
        assert.are.same({ 0, 0 }, { child:shutdown() })
        assert.are.equal(1, #F.decode_all({ child:stderr_text() }, framing))
      end)
    end)
  end

  it("a peer with role = \"server\" does not answer an over-limit reply either (nobody answers a reply)", function()
    S.run(function()
      local head, tail = '{"jsonrpc":"2.0","id":1,"result":"', '"}'
      local child, _, log = assert(F.actor(steps{
        { "readline" }, { big_message("ndjson", head, BIG, tail) }, { "drain" },
      }, { max_message_bytes = LIMIT, role = "server" }))
      local result, err = child.peer:request("m")
      assert.is_nil(result)
      assert.are.equal(too_large_message("ndjson"), err.message)
      assert.are.same({ 0, 0 }, { child:shutdown() })
      assert.are.equal(1, #F.decode_all({ child:stderr_text() }, "ndjson"))  -- our request only
      -- a server reports it as a fault
      assert.are.same({ "invalid message: -32600 Message too large: message larger than the limit of 65536 bytes "
        .. "(id null); not answered" }, log)
    end)
  end)

  it("a request that timed out before its over-limit reply came is not settled twice", function()
    S.run(function()
      local head, tail = '{"jsonrpc":"2.0","id":1,"result":"', '"}'
      local child = assert(F.actor(steps{
        { "readframe" }, { "sleep", 300 }, { big_message("lsp", head, BIG, tail) },
        { "readframe" }, { "readframe" }, { "write", F.frame(reply(5, 2)) }, { "drain" },
      }, { framing = "lsp", profile = "lsp", max_message_bytes = LIMIT }))
      local result, err = child.peer:request("slow", nil, { timeout = 0.05 })
      assert.is_nil(result)
      assert.are.equal("timeout", err.code)
      assert.are.equal(5, child.peer:request("subtract", { 7, 2 }))
      assert.are.equal(1, child.peer:stats().unmatched)
      assert.are.same({ 0, 0 }, { child:shutdown() })
    end)
  end)
end)

describe("profile lsp: the default limit (64 MiB)", function()
  after_each(S.cleanup)

  local N = 23 * 1000 * 1000  -- about the 22.8 MB documentSymbol reply of issue 27
  local head, tail = '{"jsonrpc":"2.0","id":1,"result":{"data":"', '"}}'

  it("a 23 MB reply is received whole", function()
    S.run(function()
      local child, _, log = assert(F.actor(steps{
        { "readframe" }, { big_message("lsp", head, N, tail) }, { "drain" },
      }, { profile = "lsp" }))
      local result, err = child.peer:request("textDocument/documentSymbol", { uri = "file:///big.ts" })
      assert.is_nil(err)
      assert.are.equal(N, #result.data)
      assert.are.equal(("x"):rep(64), result.data:sub(1, 64))
      assert.are.same({}, log)
      assert.are.same({ 0, 0 }, { child:shutdown() })
    end, 30)
  end)

  it("the core's 16 MiB, given explicitly, drops it and settles the request with the error", function()
    S.run(function()
      local child = assert(F.actor(steps{
        { "readframe" }, { big_message("lsp", head, N, tail) }, { "drain" },
      }, { profile = "lsp", max_message_bytes = 16 * 1024 * 1024 }))
      local result, err = child.peer:request("textDocument/documentSymbol", { uri = "file:///big.ts" })
      assert.is_nil(result)
      assert.are.equal(-32600, err.code)
      assert.are.equal(("reply too large: %d bytes, limit 16777216 bytes (max_message_bytes)"):format(#head + N + #tail),
        err.message)
      assert.are.same({ 0, 0 }, { child:shutdown() })
    end, 30)
  end)
end)

describe("codec:oversize(): what the first bytes of a dropped message say", function()
  local core = require "jrpc.core"
  local pad = ("x"):rep(300)
  local cases = {
    -- body, kind, id, the event's rawid (a call's clean id is answered)
    { '{"jsonrpc":"2.0","id":7,"result":["' .. pad .. '"]}', "response", "7", "null" },
    { '{"id":"ab-1","jsonrpc":"2.0","error":{"code":1,"message":"' .. pad .. '"}}', "response", '"ab-1"', "null" },
    { '{"jsonrpc":"2.0","result":["' .. pad .. '"],"id":7}', "response", nil, "null" },
    { '{"jsonrpc":"2.0","id":"a\\u0062","result":["' .. pad .. '"]}', "response", nil, "null" },  -- escaped: not clean
    { '{"jsonrpc":"2.0","id":1.5,"result":["' .. pad .. '"]}', "response", nil, "null" },          -- not an integer
    { '{"id":1,"id":2,"result":["' .. pad .. '"]}', "response", nil, "null" },                     -- given twice
    { '{"jsonrpc":"2.0","id":3,"method":"m","params":["' .. pad .. '"]}', "call", "3", "3" },
    { '{"jsonrpc":"2.0","method":"m","params":["' .. pad .. '"],"id":3}', "call", nil, "null" },
    { '{"jsonrpc":"2.0","id":3,"x":["' .. pad .. '"]}', nil, "3", "null" },                        -- kind unknown
    { '[{"jsonrpc":"2.0","id":3,"result":"' .. pad .. '"}]', nil, nil, "null" },                   -- a batch
    { 'log line ' .. pad, "junk", nil, "null" },
  }

  for _, framing in ipairs{ "ndjson", "lsp" } do
    it(framing .. ": kind and id, the same however the bytes arrive; the stream stays in sync", function()
      for _, case in ipairs(cases) do
        local body, kind, id, rawid = case[1], case[2], case[3], case[4]
        local wire = frame_as(body, framing) .. frame_as('{"jsonrpc":"2.0","result":1,"id":9}', framing)
        for _, step in ipairs{ #wire, 1, 7, 64 } do
          local c = core.codec{ framing = framing, max_message_bytes = 100 }
          local events, info = {}, nil
          for i = 1, #wire, step do
            local ev = { c:next(wire:sub(i, i + step - 1)) }
            while ev[1] ~= nil do
              events[#events + 1] = ev
              if ev[1] == "invalid" then info = c:oversize() end
              ev = { c:next() }
            end
          end
          local what = framing .. " " .. body:sub(1, 40) .. " in steps of " .. step
          assert.are.same({ "invalid", -32600, "Message too large", rawid, true,
            "message larger than the limit of 100 bytes" }, events[1], what)
          assert.are.same({ "result", 9, 1, 9 }, events[2], what)
          assert.are.equal(2, #events, what)
          assert.are.same({ limit = 100, size = framing == "lsp" and #body or nil, kind = kind, id = id }, info, what)
        end
      end
    end)
  end

  it("is nothing before any message was dropped", function()
    local c = core.codec{}
    assert.are.equal(0, select("#", c:oversize()))
  end)
end)
