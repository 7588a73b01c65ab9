-- A server that logs to stdout between its replies and crashes on any line
-- that is not a request (node/logging_server.js): jrpc as its client never
-- answers the log lines, so all 200 requests succeed and it never crashes.
local S = dofile("spec/uv_support.lua")

describe("jrpc client -> a node server that logs to stdout (node/logging_server.js)", function()
  after_each(S.cleanup)

  for _, profile in ipairs{ "jsonrpc", "mcp" } do
    it("profile " .. profile .. ": 200 requests in flight all succeed; the server never crashes", function()
      S.run(function()
        local logs = {}
        local child = assert(S.spawn{ cmd = "node", args = { "node/logging_server.js" }, profile = profile,
          stderr = "pipe", on_debug = function(m) logs[#logs + 1] = m end })
        local done, ok = 0, 0
        for i = 1, 200 do
          child.peer:request("subtract", { i * 3, i }, { timeout = 10 }, function(err, result)
            done = done + 1
            if err == nil and result == 2 * i then ok = ok + 1 end
          end)
        end
        assert.is_true(S.wait_until(function() return done == 200 end, 10))
        assert.are.equal(200, ok)
        assert.are.same({ 0, 0 }, { child:shutdown() })
        assert.are.equal("", child:stderr_text())
        assert.are.equal(200, #logs)
        assert.truthy(logs[1]:find("^dropped input that is not a valid message: %-32700 Parse error"), logs[1])
      end)
    end)
  end
end)
