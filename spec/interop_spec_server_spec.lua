-- A jrpc client (jrpc.uv, loop:spawn) driving examples/spec_server.lua as a
-- child process, under Lua 5.4 and LuaJIT, in both framings: 1,000
-- requests in flight at once, each from its own coroutine, and every reply
-- matched to its request (distinct operands, each result checked).

local S = dofile("spec/uv_support.lua")
local loop = S.loop
local N = 1000
local pack = table.pack or function(...) return { n = select("#", ...), ... } end

-- Request i: positional or named params with distinct operands; every
-- 100th lacks its subtrahend and must get its own -32602.
local function params_of(i)
  if i % 100 == 0 then return { minuend = i } end
  if i % 2 == 1 then return { 3 * i, i } end
  return { minuend = 5 * i, subtrahend = i }
end

local function expected(i)
  if i % 100 == 0 then
    return { n = 2, nil, { code = -32602, message = 'Invalid params: "subtrahend" is required' } }
  end
  return { n = 1, i % 2 == 1 and 2 * i or 4 * i }
end

for _, interpreter in ipairs{ "lua5.4", "luajit" } do
  for _, framing in ipairs{ "ndjson", "lsp" } do
    describe("examples/spec_server.lua under " .. interpreter .. ", " .. framing .. " framing", function()
      local child

      after_each(function()
        if child and child.exit_code == nil then loop:run(function() child:shutdown(1) end) end
        child = nil
      end)

      it("answers 1,000 concurrent requests from coroutines, each with its own result", function()
        local replies, done = {}, 0
        local in_flight, exit_code = loop:run(function()
          child = assert(loop:spawn{ cmd = interpreter, stderr = "pipe", framing = framing, timeout = 10,
            args = { "examples/spec_server.lua", "--framing", framing } })
          for i = 1, N do
            coroutine.wrap(function()
              replies[i] = pack(child.peer:request("subtract", params_of(i)))
              done = done + 1
            end)()
          end
          local pending = child.peer:stats().pending  -- all sent before any reply is read
          assert.is_true(S.wait_until(function() return done == N end, 10), done .. " of " .. N .. " settled")
          return pending, child:shutdown(2)
        end)
        assert.equal(N, in_flight)
        for i = 1, N do
          assert.same(expected(i), replies[i], "request " .. i)
        end
        assert.equal(0, exit_code)
        assert.equal("", child:stderr_text())
        local stats = child.peer:stats()
        assert.equal(N, stats.settled)
        assert.equal(0, stats.unmatched)
      end)
    end)
  end
end
