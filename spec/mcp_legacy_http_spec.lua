-- jrpc.mcp's legacy (2025-11-25) Streamable HTTP session, driven by curl on
-- 127.0.0.1: `initialize` mints MCP-Session-Id, later requests need it
-- (400 without, 404 unknown), notifications and responses are 202, a
-- server-to-client request goes out on the call's own SSE stream and its
-- answer POSTed back reaches the waiting handler, DELETE ends the session.
local S = dofile("spec/uv_support.lua")
local jrpc = require "jrpc"
local mcp = require "jrpc.mcp"

local loop = S.loop

local shell = S.shell_wait

local function new_server(opts)
  local srv = mcp.server{ name = "legacy-http-spec", version = "1.0.0" }
  srv:tool{ name = "echo", description = "echo", handler = function(args) return args.text or "none" end }
  srv:tool{ name = "sample", description = "asks the client's model", handler = function(_, ctx)
    local result, err = ctx:request("sampling/createMessage", { maxTokens = 10,
      messages = { { role = "user", content = { type = "text", text = "hi" } } } })
    if not result then error(err.message, 0) end
    return "model said " .. result.content.text
  end }
  return assert(srv:serve_http(loop, { port = 0, max_sessions = opts and opts.max_sessions,
    peer = { on_error = function() end } }))
end

local CURL = "curl -s -m 5 -H 'Content-Type: application/json' -H 'Accept: application/json, text/event-stream' "

-- POST `body` (with `extra` curl arguments); returns status, headers, body.
local function post(port, body, extra)
  local cmd = (CURL .. "-D - -o - -w '\\n%%{http_code}' %s --data-binary '%s' http://127.0.0.1:%d/mcp")
    :format(extra or "", body, port)
  local _, out = shell(cmd)
  local text, status = out:match("^(.*)\n(%d+)$")
  local head, rest = text:match("^(.-)\r\n\r\n(.*)$")
  return tonumber(status), head or "", rest or text
end

local INIT = '{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25",'
  .. '"capabilities":{"sampling":{}},"clientInfo":{"name":"spec","version":"1"}}}'

local function session(port)
  local status, head, body = post(port, INIT)
  assert.are.equal(200, status)
  assert.are.equal("2025-11-25", jrpc.decode(body).result.protocolVersion)
  local sid = head:lower():match("mcp%-session%-id: (%x+)")
  assert.are.equal(32, #sid)
  return sid, ("-H 'MCP-Session-Id: %s' -H 'MCP-Protocol-Version: 2025-11-25'"):format(sid)
end

describe("jrpc.mcp legacy Streamable HTTP session", function()
  after_each(S.cleanup)

  it("mints a session, wants it on later requests, ends it on DELETE", function()
    S.run(function()
      local http = new_server()
      local sid, with = session(http.port)
      assert.are.equal(202, (post(http.port, '{"jsonrpc":"2.0","method":"notifications/initialized"}', with)))
      local call = '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hi"}}}'
      local status, _, body = post(http.port, call, with)
      assert.are.equal(200, status)
      assert.are.equal("hi", jrpc.decode(body).result.content[1].text)
      assert.are.equal(400, (post(http.port, call, "-H 'MCP-Protocol-Version: 2025-11-25'")))
      assert.are.equal(404, (post(http.port, call, "-H 'MCP-Session-Id: 00ff'")))
      local _, out = shell(("curl -s -m 5 -o /dev/null -w '%%{http_code}' http://127.0.0.1:%d/mcp"):format(http.port))
      assert.are.equal("405", out)
      _, out = shell(("curl -s -m 5 -o /dev/null -w '%%{http_code}' -X DELETE -H 'MCP-Session-Id: %s' "
        .. "http://127.0.0.1:%d/mcp"):format(sid, http.port))
      assert.are.equal("204", out)
      assert.are.equal(404, (post(http.port, call, with)))
      http:close()
    end)
  end)

  it("ends the least recently used session when the table is full", function()
    S.run(function()
      local http = new_server{ max_sessions = 1 }
      local _, first = session(http.port)
      local _, second = session(http.port)
      local ping = '{"jsonrpc":"2.0","id":1,"method":"ping"}'
      assert.are.equal(404, (post(http.port, ping, first)))
      assert.are.equal(200, (post(http.port, ping, second)))
      http:close()
    end)
  end)

  it("sends a sampling request on the call's stream and routes the POSTed answer back", function()
    S.run(function()
      local http = new_server()
      local _, with = session(http.port)
      local url = ("http://127.0.0.1:%d/mcp"):format(http.port)
      local f = os.tmpname()
      -- the call streams in the background; its sampling request's id is
      -- read from the stream, the answer POSTed with it, then the call ends
      local cmd = table.concat({
        (CURL .. "-N %s --data-binary '%s' %s > %s &"):format(with,
          '{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"sample","arguments":{}}}', url, f),
        "for i in 1 2 3 4 5 6 7 8 9 10; do grep -q sampling " .. f .. " && break; sleep 0.2; done",
        ("id=$(sed -n '/sampling/s/.*\"id\":\\([0-9]*\\).*/\\1/p' %s)"):format(f),
        (CURL .. "-o /dev/null -w '%%{http_code}\\n' %s --data-binary "
          .. "'{\"jsonrpc\":\"2.0\",\"id\":'$id',\"result\":{\"role\":\"assistant\","
          .. "\"content\":{\"type\":\"text\",\"text\":\"yes\"},\"model\":\"m\"}}' %s"):format(with, url),
        "wait", "cat " .. f, "rm -f " .. f }, "\n")
      local _, out = shell(cmd)
      assert.matches("^202\n", out)
      assert.matches('"method":"sampling/createMessage"', out, 1, true)
      assert.matches("model said yes", out, 1, true)
      http:close()
    end)
  end)
end)
