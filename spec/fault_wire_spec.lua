-- Faults: garbage on the wire, in both directions.
--
--   jrpc as the server: a client process (spec/fault/actor.lua) pipes bytes
--   into examples/spec_server.lua; we compare the server's stdout byte for
--   byte and find its reports (on_error, to stderr) in its stderr.
--   jrpc as the client: we spawn the actor as the "server"; it reads our
--   requests and writes back what it is told.
--
-- Documented outcomes (README, src/CORE_API.md): newline framing answers a
-- line that is not JSON with -32700 and id null; Content-Length framing
-- skips a stray non-header line and reports it through on_error without an
-- answer; input that ends inside a message is reported (newline framing:
-- the last line is decoded, so -32700) and the connection closes cleanly;
-- a message over max_message_bytes (16 MiB) is dropped as it streams in and
-- answered -32600 "Message too large" with id null. In each case the next
-- valid message is served, where the framing allows it.
local F = dofile("spec/fault/support.lua")
local S = F.S

local frame = F.frame
local PARSE_ERROR = '{"jsonrpc":"2.0","error":{"code":-32700,"message":"Parse error"},"id":null}'
local TOO_LARGE = '{"jsonrpc":"2.0","error":{"code":-32600,"message":"Message too large"},"id":null}'
local BIG = 64 * 1024 * 1024

local function req(a, b, id)
  return ('{"jsonrpc":"2.0","method":"subtract","params":[%d,%d],"id":%d}'):format(a, b, id)
end
local function frame_as(json, framing)
  return framing == "lsp" and frame(json) or json .. "\n"
end
local function reply(result, id)
  return ('{"jsonrpc":"2.0","result":%d,"id":%d}'):format(result, id)
end

-- The lines of stderr that are jrpc reports.
local function reports(stderr)
  local list = {}
  for line in stderr:gmatch("[^\n]+") do
    if line:find("^jrpc: ") then list[#list + 1] = line end
  end
  return list
end

describe("fault: garbage on the wire, jrpc as the server", function()
  it("newline framing: log lines between messages are answered -32700, the messages after them normally", function()
    local status, out, err = F.serve_pipe{
      { "write", "server starting...\n" .. req(42, 23, 1) .. "\n" },
      { "write", "[INFO] {not json}\n\n" .. req(7, 2, 2) .. "\r\n" },
    }
    assert.are.equal(0, status, err)
    assert.are.equal(table.concat({ PARSE_ERROR, reply(19, 1), PARSE_ERROR, reply(5, 2) }, "\n") .. "\n", out)
    assert.are.same({
      "jrpc: invalid message: -32700 Parse error: unexpected character at byte 1 (id null)",
      "jrpc: invalid message: -32700 Parse error: unexpected character at byte 2 (id null)",
    }, reports(err))
  end)

  it("newline framing: a message cut short by the end of input is answered -32700, then a clean exit", function()
    local status, out, err = F.serve_pipe{ { "write", req(42, 23, 1) .. "\n" .. req(1, 1, 2):sub(1, 30) } }
    assert.are.equal(0, status, err)
    assert.are.equal(reply(19, 1) .. "\n" .. PARSE_ERROR .. "\n", out)
    assert.are.same({ "jrpc: invalid message: -32700 Parse error: unfinished string at byte 31 (id null)" },
      reports(err))
  end)

  it("Content-Length framing: stray lines are skipped and reported, not answered", function()
    local status, out, err = F.serve_pipe({
      { "write", "server starting...\r\n" .. frame(req(42, 23, 1)) },
      { "write", "a log line\n" .. frame(req(7, 2, 2)) },
    }, { "--framing", "lsp" })
    assert.are.equal(0, status, err)
    assert.are.equal(frame(reply(19, 1)) .. frame(reply(5, 2)), out)
    assert.are.same({
      "jrpc: invalid message: -32700 Parse error: skipped a line that is not a header (18 bytes) (id null); not answered",
      "jrpc: invalid message: -32700 Parse error: skipped a line that is not a header (10 bytes) (id null); not answered",
    }, reports(err))
  end)

  it("Content-Length framing: a body cut short, or a header with no body, at the end of input", function()
    for _, tail in ipairs{ frame(req(1, 1, 2)):sub(1, 40), "Content-Length: 40\r\n\r\n" } do
      local status, out, err = F.serve_pipe({ { "write", frame(req(42, 23, 1)) .. tail } }, { "--framing", "lsp" })
      assert.are.equal(0, status, err)
      assert.are.equal(frame(reply(19, 1)), out)
      assert.are.same({ "jrpc: invalid message: -32700 Parse error: input ended inside a message body (id null); not answered" },
        reports(err))
    end
  end)

  it("Content-Length too short: the short body is answered -32700 and the next messages are served", function()
    local bad = req(42, 23, 1)
    local status, out, err = F.serve_pipe({
      { "write", "Content-Length: " .. (#bad - 5) .. "\r\n\r\n" .. bad .. frame(req(7, 2, 2)) .. frame(req(9, 2, 3)) },
    }, { "--framing", "lsp" })
    assert.are.equal(0, status, err)
    -- the bytes after the short body run into the next header: the framer
    -- must find that header again, not skip every message from here on
    assert.are.equal(frame(PARSE_ERROR) .. frame(reply(5, 2)) .. frame(reply(7, 3)), out)
  end)

  it("Content-Length too long: the message whose header it ate is lost, the ones after it are served", function()
    local bad = req(42, 23, 1)
    local status, out, err = F.serve_pipe({
      { "write", "Content-Length: " .. (#bad + 5) .. "\r\n\r\n" .. bad .. frame(req(7, 2, 2))
        .. frame(req(9, 2, 3)) .. frame(req(10, 2, 4)) },
    }, { "--framing", "lsp" })
    assert.are.equal(0, status, err)
    assert.are.equal(frame(PARSE_ERROR) .. frame(reply(7, 3)) .. frame(reply(8, 4)), out)
  end)

  it("a header without a body mid-stream: it takes the next message's bytes as its body; the ones after are served", function()
    local status, out, err = F.serve_pipe({
      { "write", "Content-Length: 40\r\n\r\n" .. frame(req(7, 2, 2)) .. frame(req(9, 2, 3)) .. frame(req(10, 2, 4)) },
    }, { "--framing", "lsp" })
    assert.are.equal(0, status, err)
    assert.are.equal(frame(PARSE_ERROR) .. frame(reply(7, 3)) .. frame(reply(8, 4)), out)
  end)

  it("one byte per write, both framings", function()
    for _, framing in ipairs{ "ndjson", "lsp" } do
      local wrap = framing == "lsp" and frame or function(s) return s .. "\n" end
      local status, out, err = F.serve_pipe({
        { "bytewise", wrap(req(42, 23, 1)), 1 },
        { "bytewise", wrap(req(7, 2, 2)) },
      }, { "--framing", framing })
      assert.are.equal(0, status, err)
      assert.are.equal(wrap(reply(19, 1)) .. wrap(reply(5, 2)), out)
      assert.are.same({}, reports(err))
    end
  end)

  it("a 64 MiB request against the 16 MiB limit: -32600 Message too large, then the next request, both framings", function()
    for _, framing in ipairs{ "ndjson", "lsp" } do
      local head = '{"jsonrpc":"2.0","method":"subtract","params":["'
      local tail = '"],"id":1}'
      local steps
      if framing == "lsp" then
        steps = { { "write", "Content-Length: " .. (#head + BIG + #tail) .. "\r\n\r\n" .. head }, { "rep", "x", BIG },
          { "write", tail .. frame(req(7, 2, 2)) } }
      else
        steps = { { "write", head }, { "rep", "x", BIG }, { "write", tail .. "\n" .. req(7, 2, 2) .. "\n" } }
      end
      local status, out, err, took = F.serve_pipe(steps, { "--framing", framing })
      assert.are.equal(0, status, err)
      local wrap = framing == "lsp" and frame or function(s) return s .. "\n" end
      assert.are.equal(wrap(TOO_LARGE) .. wrap(reply(5, 2)), out)
      assert.are.same({ "jrpc: invalid message: -32600 Message too large: message larger than the limit of 16777216 bytes (id null)" },
        reports(err))
      assert.is_true(took < 10, "took " .. took)
    end
  end)
end)

describe("fault: garbage on the wire, jrpc as the client", function()
  after_each(S.cleanup)

  it("newline framing: log lines around replies are dropped and reported (on_debug), never answered; replies still match", function()
    S.run(function()
      local child, _, log, debug = assert(F.actor{
        { "readline" }, { "write", "starting up\n" .. reply(19, 1) .. "\n" },
        { "readline" }, { "write", "[debug] ok\n" .. reply(5, 2) .. "\n" },
        { "drain" },
      })
      assert.are.equal(19, child.peer:request("subtract", { 42, 23 }, { timeout = 5 }))
      assert.are.equal(5, child.peer:request("subtract", { 7, 2 }, { timeout = 5 }))
      assert.are.same({
        "dropped input that is not a valid message: -32700 Parse error: unexpected character at byte 1 (a client does not answer it)",
        "dropped input that is not a valid message: -32700 Parse error: unexpected character at byte 2 (a client does not answer it)",
      }, debug)
      assert.are.same({}, log)  -- routine: nothing for on_error
      assert.are.same({ 0, 0 }, { child:shutdown() })
      -- what the child read from us: the two requests, nothing else
      local sent = F.decode_all({ child:stderr_text() })
      assert.are.same({ F.decode_all{ req(42, 23, 1) }[1], F.decode_all{ req(7, 2, 2) }[1] }, sent)
    end)
  end)

  it("newline framing: a reply cut short by the child's exit: reported (on_debug), the request settles closed", function()
    S.run(function()
      local child, _, log, debug = assert(F.actor{
        { "readline" }, { "write", reply(19, 1) .. "\n" .. reply(5, 2):sub(1, 20) }, { "readline" }, { "exit", 0 },
      })
      assert.are.equal(19, child.peer:request("subtract", { 42, 23 }, { timeout = 5 }))
      local result, err = child.peer:request("subtract", { 7, 2 }, { timeout = 5 })
      assert.is_nil(result)
      assert.are.equal("closed", err.code)
      assert.are.equal("process exited with code 0", err.message)
      assert.are.same({ "dropped input that is not a valid message: -32700 Parse error: unfinished string at byte 21 (a client does not answer it)" }, debug)
      assert.are.same({}, log)
    end)
  end)

  it("Content-Length framing: stray lines skipped and reported (on_debug), a cut body or a bare header at the end reported", function()
    S.run(function()
      for _, tail in ipairs{ frame(reply(5, 2)):sub(1, 30), "Content-Length: 40\r\n\r\n" } do
        local child, _, log, debug = assert(F.actor({
          { "readframe" }, { "write", "starting up\r\n" .. frame(reply(19, 1)) },
          { "readframe" }, { "write", "more\n" .. tail }, { "exit", 0 },
        }, { framing = "lsp" }))
        assert.are.equal(19, child.peer:request("subtract", { 42, 23 }, { timeout = 5 }))
        local _, err = child.peer:request("subtract", { 7, 2 }, { timeout = 5 })
        assert.are.equal("closed", err.code)
        assert.are.equal("process exited with code 0", err.message)
        assert.are.same({
          "invalid message: -32700 Parse error: skipped a line that is not a header (11 bytes) (id null); not answered",
          "invalid message: -32700 Parse error: skipped a line that is not a header (4 bytes) (id null); not answered",
          "invalid message: -32700 Parse error: input ended inside a message body (id null); not answered",
        }, debug)
        assert.are.same({}, log)
        -- nothing was answered: the child read our two requests and nothing else
        assert.are.equal(2, #F.decode_all({ child:stderr_text() }, "lsp"))
      end
    end)
  end)

  it("Content-Length wrong (too short, too long): the replies after the broken one still arrive", function()
    S.run(function()
      local bad = reply(19, 1)
      for _, case in ipairs{
        { name = "too short", length = #bad - 5, first_lost = 1 },   -- only the broken reply is lost
        { name = "too long", length = #bad + 5, first_lost = 2 },    -- it eats the next header
      } do
        local child = assert(F.actor({
          { "readframe" }, { "readframe" }, { "readframe" }, { "readframe" },
          { "write", "Content-Length: " .. case.length .. "\r\n\r\n" .. bad .. frame(reply(5, 2))
            .. frame(reply(7, 3)) .. frame(reply(8, 4)) },
          { "drain" },
        }, { framing = "lsp" }))
        local got = {}
        for i, p in ipairs{ { 42, 23 }, { 7, 2 }, { 9, 2 }, { 10, 2 } } do
          child.peer:request("subtract", p, { timeout = 0.5 }, function(err, r) got[i] = err and err.code or r end)
        end
        assert.is_true(S.wait_until(function() return got[1] and got[2] and got[3] and got[4] end, 3))
        local want = { "timeout", 5, 7, 8 }
        if case.first_lost == 2 then want[2] = "timeout" end
        assert.are.same(want, got, case.name)
        child:kill("sigkill")
      end
    end)
  end)

  it("one byte per read, both framings", function()
    S.run(function()
      for _, framing in ipairs{ "ndjson", "lsp" } do
        local wrap = framing == "lsp" and frame or function(s) return s .. "\n" end
        local read = framing == "lsp" and "readframe" or "readline"
        local child = assert(F.actor({
          { read }, { "bytewise", wrap(reply(19, 1)), 2 }, { read }, { "bytewise", wrap(reply(5, 2)) }, { "drain" },
        }, { framing = framing }))
        local tap = F.tap(child)
        assert.are.equal(19, child.peer:request("subtract", { 42, 23 }, { timeout = 5 }))
        assert.are.equal(5, child.peer:request("subtract", { 7, 2 }, { timeout = 5 }))
        local ones = 0
        for _, chunk in ipairs(tap.into) do if #chunk == 1 then ones = ones + 1 end end
        assert.is_true(ones >= 10, framing .. ": only " .. ones .. " one-byte reads of " .. #tap.into)
        assert.are.equal(wrap(reply(19, 1)) .. wrap(reply(5, 2)), table.concat(tap.into))
        assert.are.same({ 0, 0 }, { child:shutdown() })
      end
    end)
  end)

  it("a 64 MiB message from the server: dropped as it streams, not answered, our memory stays bounded", function()
    S.run(function()
      for _, framing in ipairs{ "ndjson", "lsp" } do
        local wrap = framing == "lsp" and frame or function(s) return s .. "\n" end
        local read = framing == "lsp" and "readframe" or "readline"
        local head = '{"jsonrpc":"2.0","method":"log","params":["'
        local tail = '"]}'
        local first = framing == "lsp" and "Content-Length: " .. (#head + BIG + #tail) .. "\r\n\r\n" .. head or head
        local mem0, rss0 = F.mem(), F.rss()
        local child, _, log, debug = assert(F.actor({
          { read }, { "write", first }, { "rep", "x", BIG }, { "write", tail .. (framing == "lsp" and "" or "\n") },
          { "write", wrap(reply(19, 1)) }, { "drain" },
        }, { framing = framing }))
        local t0 = S.now()
        assert.are.equal(19, child.peer:request("subtract", { 42, 23 }, { timeout = 20 }))
        assert.is_true(S.since(t0) < 10, "took " .. S.since(t0))
        assert.are.same({ "dropped input that is not a valid message: -32600 Message too large: message larger than the limit of 16777216 bytes (a client does not answer it)" }, debug)
        assert.are.same({}, log)
        assert.are.same({ 0, 0 }, { child:shutdown() })
        -- it read our request and nothing else
        local sent = F.decode_all({ child:stderr_text() }, framing)
        assert.are.same(F.decode_all({ frame_as(req(42, 23, 1), framing) }, framing), sent)
        -- never more than the limit was held: not 64 MiB (RSS means nothing
        -- under a sanitizer: shadow memory, quarantine)
        local grown_rss = F.rss() - rss0
        if os.getenv("JRPC_SANITIZER") == nil then
          assert.is_true(grown_rss < 24 * 1024, framing .. ": RSS grew by " .. grown_rss .. " KiB")
        end
        local grown = F.mem() - mem0
        assert.is_true(grown < 1024, framing .. ": Lua memory grew by " .. grown .. " KiB after a collect")
      end
    end, 60)
  end)
end)
