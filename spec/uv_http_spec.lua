-- jrpc.uv.http: an HTTP/1.1 server on luv, driven by real clients (curl, and
-- Node's http module) on 127.0.0.1: JSON responses, SSE streams, keep-alive,
-- pipelining, limits, handlers that wait, and clients that go away.
local S = dofile("spec/uv_support.lua")

local loop = S.loop

local shell = S.shell_wait

local serve = S.http_serve

describe("jrpc.uv.http", function()
  after_each(S.cleanup)

  it("answers JSON over keep-alive to curl, two requests on one connection", function()
    S.run(function()
      local seen = {}
      local server = serve(function(req, res)
        seen[#seen + 1] = req.method .. " " .. req.target .. " " .. (req.headers["content-type"] or "-") .. " " .. req.body
        res:send(200, { ["content-type"] = "application/json" }, '{"ok":' .. #seen .. '}')
      end)
      local url = ("http://127.0.0.1:%d/mcp"):format(server.port)
      local code, out = shell(("curl -s -S -H 'Content-Type: application/json' -d '{\"a\":1}' %s --next "
        .. "-s -S -d '{\"b\":2}' -H 'Content-Type: application/json' %s -w ' %%{num_connects}'"):format(url, url))
      assert.are.equal(0, code)
      assert.are.equal('{"ok":1}{"ok":2} 0', out)  -- the second request reused the connection
      assert.are.same({ 'POST /mcp application/json {"a":1}', 'POST /mcp application/json {"b":2}' }, seen)
      server:close()
    end)
  end)

  it("streams SSE events from a handler that waits between them", function()
    S.run(function()
      local server = serve(function(_, res)
        res:stream(200, {})
        for i = 1, 3 do
          res:event('{"n":' .. i .. '}')
          loop:sleep(0.05)
        end
        res:finish()
      end)
      local code, out = shell(("curl -s -S -N -D - -X POST http://127.0.0.1:%d/"):format(server.port))
      assert.are.equal(0, code)
      assert.truthy(out:lower():find("content%-type: text/event%-stream"), out)
      assert.truthy(out:lower():find("x%-accel%-buffering: no"), out)
      assert.truthy(out:find('data: {"n":1}\n\ndata: {"n":2}\n\ndata: {"n":3}\n\n', 1, true), out)
      server:close()
    end)
  end)

  it("tells a streaming handler when the client goes away", function()
    S.run(function()
      local gone = false
      local server = serve(function(_, res)
        res.on_close = function() gone = true end
        res:stream(200, {})
        res:event('{"first":true}')
        while res:event('{"tick":true}') do loop:sleep(0.02) end
      end)
      local code = shell(("curl -s -N --max-time 0.3 -X POST http://127.0.0.1:%d/ > /dev/null"):format(server.port))
      assert.are.equal(28, code)  -- curl's timeout: it hung up
      assert.is_true(S.wait_until(function() return gone end, 2))
      server:close()
    end)
  end)

  it("answers a body over the limit 413 and a handler that raises 500", function()
    S.run(function()
      local server = serve(function(req, res)
        if req.path == "/raise" then error("boom") end
        res:send(200, {}, "ok")
      end, { max_body_bytes = 1024 })
      local base = ("http://127.0.0.1:%d"):format(server.port)
      local code, out = shell(("head -c 4096 /dev/zero | curl -s -o /dev/null -w '%%{http_code}' --data-binary @- %s/big; "
        .. "curl -s -o /dev/null -w ' %%{http_code}' -X POST %s/raise; curl -s -w ' %%{http_code}' -X POST %s/fine")
        :format(base, base, base))
      assert.are.equal(0, code)
      assert.are.equal("413 500ok 200", out)  -- the last body is "ok"
      server:close()
    end)
  end)
end)
