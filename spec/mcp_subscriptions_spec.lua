-- jrpc.mcp change notifications: `subscriptions/listen` (2026-07-28) and
-- the legacy list_changed / resources/updated (2025-11-25).
--   * stdio, a real child: examples/mcp/notes_server.lua (docs/mcp.md's
--     snippet) on luv, and the same snippet on the blocking jrpc.stdio;
--   * Streamable HTTP on 127.0.0.1, curl as the client: the listen POST's
--     SSE stream, keep-alive comments, a closed stream freeing its
--     listener, the graceful end, a legacy session's GET stream;
--   * an in-process peer, where the server's own count tells what it holds.
local S = dofile("spec/uv_support.lua")
local files = dofile("spec/files.lua")
local jrpc = require "jrpc"
local mcp = require "jrpc.mcp"

local loop = S.loop

local SUB = "io.modelcontextprotocol/subscriptionId"
local SERVER_INFO_KEY = "io.modelcontextprotocol/serverInfo"
local ACK = "notifications/subscriptions/acknowledged"
local TOOLS_CHANGED = "notifications/tools/list_changed"
local PROMPTS_CHANGED = "notifications/prompts/list_changed"
local RESOURCES_CHANGED = "notifications/resources/list_changed"
local UPDATED = "notifications/resources/updated"

local function modern_meta()
  return { ["io.modelcontextprotocol/protocolVersion"] = "2026-07-28",
    ["io.modelcontextprotocol/clientCapabilities"] = jrpc.object() }
end

-- docs/mcp.md's snippet: the Lua block of its change-notifications subsection.
local function readme_snippet()
  local doc = files.read("docs/mcp.md")
  return assert(doc:match("\n### Change notifications[^\n]*\n.-\n```lua\n(.-)```\n"),
    "docs/mcp.md: no snippet under ### Change notifications")
end

-- {======================================================================
-- stdio: a child process, with a jrpc peer (profile mcp) as the client
-- =======================================================================

-- The child for `transport`: the example itself on luv, or the same
-- snippet served by the blocking jrpc.stdio.
local function notes_child(transport)
  if transport == "luv" then
    return assert(S.spawn{ cmd = S.INTERP, args = { "examples/mcp/notes_server.lua" }, profile = "mcp",
      on_error = function() end })
  end
  local script, n = readme_snippet():gsub('server:serve_stdio%(require%("jrpc"%)%.uv%.new%(require "luv"%)%)',
    "server:serve_stdio()")
  assert(n == 1, "the snippet no longer ends with serve_stdio on luv")
  local dir = S.tmpdir()
  local path = dir .. "/notes_blocking.lua"
  files.write(path, 'dofile("examples/paths.lua")\n' .. script)
  return assert(S.spawn{ cmd = S.INTERP, args = { path }, profile = "mcp", on_error = function() end }), dir
end

-- Record, in arrival order, every change notification and every answer to
-- a listen: `{kind = method | "result", id = subscription or request id, ...}`.
local function recorder(peer)
  local log = {}
  for _, method in ipairs{ ACK, TOOLS_CHANGED, PROMPTS_CHANGED, RESOURCES_CHANGED, UPDATED } do
    peer:method(method, function(params, rpc)
      log[#log + 1] = { kind = method, id = rpc.meta and rpc.meta[SUB], params = params }
    end)
  end
  local function listen(notifications)
    local id
    id = peer:request("subscriptions/listen", { _meta = modern_meta(), notifications = notifications }, nil,
      function(err, result) log[#log + 1] = { kind = "result", id = id, err = err, result = result } end)
    return id
  end
  -- the entries for subscription `id`
  local function of(id)
    local out = {}
    for _, e in ipairs(log) do if e.id == id then out[#out + 1] = e end end
    return out
  end
  return log, listen, of
end

local function call(peer, name, args, legacy)
  local params = { name = name, arguments = args or jrpc.object() }
  if not legacy then params._meta = modern_meta() end
  local result, err = peer:request("tools/call", params, { timeout = 5 })
  assert(result, err and err.message)
  return result.content[1].text
end

local function ack(id, notifications)
  return { kind = ACK, id = id, params = { notifications = notifications } }
end
local function changed(method, id) return { kind = method, id = id, params = {} } end
local function updated(id, uri) return { kind = UPDATED, id = id, params = { uri = uri } } end

describe("jrpc.mcp change notifications", function()
  after_each(S.cleanup)

  it("docs/mcp.md: examples/mcp/notes_server.lua is the snippet, word for word", function()
    local example = files.read("examples/mcp/notes_server.lua")
    local snippet = readme_snippet()
    assert.are.equal(snippet, example:sub(-#snippet))
  end)

  for _, transport in ipairs{ "luv", "blocking" } do
    describe("over stdio (" .. transport .. ")", function()
      it("acknowledges first, tags, filters, notifies add/remove and updates, and a cancel ends the stream", function()
        S.run(function()
          local child, dir = notes_child(transport)
          local peer = child.peer
          local log, listen, of = recorder(peer)
          local a = listen{ toolsListChanged = true, resourceSubscriptions = { "notes://all" } }
          local b = listen{ promptsListChanged = true }
          assert.is_true(S.wait_until(function() return #of(a) == 1 and #of(b) == 1 end))
          assert.same({ ack(a, { toolsListChanged = true, resourceSubscriptions = { "notes://all" } }) }, of(a))
          assert.same({ ack(b, { promptsListChanged = true }) }, of(b))

          -- the first note registers clear_notes: list_changed, then updated
          assert.are.equal("1 notes", call(peer, "add_note", { text = "one" }))
          assert.are.equal("2 notes", call(peer, "add_note", { text = "two" }))
          assert.are.equal("cleared", call(peer, "clear_notes"))
          assert.same({ ack(a, { toolsListChanged = true, resourceSubscriptions = { "notes://all" } }),
            changed(TOOLS_CHANGED, a), updated(a, "notes://all"), updated(a, "notes://all"),
            changed(TOOLS_CHANGED, a), updated(a, "notes://all") }, of(a))

          -- cancelled: a's stream ends (no result from the server, nothing
          -- more on it), while c, opened after, hears the next change
          assert.is_true(peer:cancel(a, "done"))
          local c = listen{ toolsListChanged = true }
          assert.is_true(S.wait_until(function() return #of(c) == 1 end))
          assert.are.equal("1 notes", call(peer, "add_note", { text = "three" }))
          assert.same({ ack(c, { toolsListChanged = true }), changed(TOOLS_CHANGED, c) }, of(c))
          local after_cancel = of(a)
          assert.are.equal(7, #after_cancel)
          assert.are.equal("result", after_cancel[7].kind)
          assert.are.equal("cancelled", after_cancel[7].err.code)  -- settled here, not answered there
          -- b asked for prompts only: three tool changes, none for b
          assert.same({ ack(b, { promptsListChanged = true }) }, of(b))

          -- stdin closes: on luv the open listens end with their result
          -- (then the process exits at once); the blocking one just closes
          local t0 = S.now()
          assert.are.equal(0, (child:shutdown(3)))
          if transport == "luv" then
            assert.is_true(S.since(t0) < 1, "the listens held the process open")
            local ends = { of(b)[2], of(c)[3] }
            for i, id in ipairs{ b, c } do
              assert.are.equal("result", ends[i].kind)
              assert.is_nil(ends[i].err)
              assert.same({ resultType = "complete", _meta = { [SUB] = id,
                [SERVER_INFO_KEY] = { name = "notes", version = "1.0.0" } } }, ends[i].result)
            end
          else
            assert.are.equal("closed", of(b)[2].err.code)
            assert.are.equal("closed", of(c)[3].err.code)
          end
          -- 3 acks, 5 changes on a, its cancel, 1 change on c, b's and c's ends
          assert.are.equal(12, #log)
          if dir then S.rmdir(dir) end
        end)
      end)

      it("tells a legacy connection: list_changed, and resources/updated while subscribed", function()
        S.run(function()
          local child, dir = notes_child(transport)
          local peer = child.peer
          local log = recorder(peer)
          local init = assert(peer:request("initialize", { protocolVersion = "2025-11-25",
            capabilities = jrpc.object(), clientInfo = { name = "spec", version = "1" } }, { timeout = 5 }))
          assert.same({ tools = { listChanged = true }, resources = { subscribe = true, listChanged = true },
            logging = {} }, init.capabilities)
          assert(peer:notify("notifications/initialized"))
          assert.same({}, assert(peer:request("resources/subscribe", { uri = "notes://all" }, { timeout = 5 })))
          assert.are.equal("1 notes", call(peer, "add_note", { text = "one" }, true))
          assert.same({ { kind = TOOLS_CHANGED }, { kind = UPDATED, params = { uri = "notes://all" } } }, log)
          assert.same({}, assert(peer:request("resources/unsubscribe", { uri = "notes://all" }, { timeout = 5 })))
          assert.are.equal("cleared", call(peer, "clear_notes", nil, true))
          assert.same({ kind = TOOLS_CHANGED }, log[3])
          assert.is_nil(log[4])
          -- listen is modern only: on a legacy connection without _meta, unknown
          local _, err = peer:request("subscriptions/listen", { notifications = { toolsListChanged = true } },
            { timeout = 5 })
          assert.are.equal(-32601, err.code)
          assert.are.equal(0, (child:shutdown(3)))
          if dir then S.rmdir(dir) end
        end)
      end)
    end)
  end
end)

-- }======================================================================

-- {======================================================================
-- Streamable HTTP, curl as the client
-- =======================================================================

local HEADERS = "-H 'Content-Type: application/json' -H 'Accept: application/json, text/event-stream' "

local function listen_body(id, notifications)
  return assert(jrpc.encode{ jsonrpc = "2.0", id = id, method = "subscriptions/listen",
    params = { _meta = modern_meta(), notifications = notifications } })
end

-- Run `cmd` in a coroutine of its own; returns the function that waits
-- for it and gives its exit status and stdout.
local function background(cmd)
  local done
  coroutine.wrap(function()
    local code, out = S.shell_wait(cmd)
    done = { code = code, out = out }
  end)()
  return function()
    assert(S.wait_until(function() return done ~= nil end, 8), "curl did not end: " .. cmd)
    return done.code, done.out
  end
end

-- A listen POST held open by curl for at most `seconds`.
local function curl_listen(port, id, notifications, seconds)
  return background(("curl -s -N -m %s %s -H 'MCP-Protocol-Version: 2026-07-28' "
    .. "-H 'Mcp-Method: subscriptions/listen' --data-binary '%s' http://127.0.0.1:%d/mcp")
    :format(seconds, HEADERS, listen_body(id, notifications), port))
end

-- The SSE body: its messages (decoded `data:` lines) and its keep-alive comments.
local function sse(out)
  local messages, comments = {}, 0
  for line in out:gmatch("[^\r\n]+") do
    if line:sub(1, 6) == "data: " then messages[#messages + 1] = assert(jrpc.decode(line:sub(7)))
    elseif line == ": keep-alive" then comments = comments + 1 end
  end
  return messages, comments
end

local function note(method, id, params)
  params = params or {}
  params._meta = { [SUB] = id }
  return { jsonrpc = "2.0", method = method, params = params }
end

local INFO = { name = "subs-http-spec", version = "1.0.0" }

local function http_server(opts)
  local srv = mcp.server(INFO)
  srv:tool{ name = "echo", description = "echo", handler = function(args) return args.text or "none" end }
  srv:resource{ uri = "mem://r", name = "r", handler = function() return "R" end }
  local o = { port = 0, peer = { on_error = function() end } }
  for k, v in pairs(opts or {}) do o[k] = v end
  return srv, assert(srv:serve_http(loop, o))
end

describe("jrpc.mcp subscriptions/listen over Streamable HTTP", function()
  after_each(S.cleanup)

  it("streams the acknowledgement, the changes asked for and keep-alives; closing frees the listener", function()
    S.run(function()
      local srv, http = http_server{ listen_keep_alive = 0.2 }
      local tools = curl_listen(http.port, 7, { toolsListChanged = true }, 1.2)
      local prompts = curl_listen(http.port, 8, { promptsListChanged = true }, 1.2)
      assert.is_true(S.wait_until(function() return srv:listeners_count() == 2 end))
      srv:tool{ name = "later", description = "added while listened to", handler = function() return "" end }
      assert.is_true(srv:remove_tool("later"))
      assert.is_false(srv:remove_tool("later"))  -- not registered: no change, no notification
      srv:prompt{ name = "p", description = "added", handler = function() return "p" end }
      local code, out = tools()
      assert.are.equal(28, code)  -- curl's timeout: the server held the stream open
      local messages, comments = sse(out)
      assert.same({ note(ACK, 7, { notifications = { toolsListChanged = true } }), note(TOOLS_CHANGED, 7),
        note(TOOLS_CHANGED, 7) }, messages)
      assert.is_true(comments >= 3, "keep-alive comments: " .. comments)
      code, out = prompts()
      assert.are.equal(28, code)
      assert.same({ note(ACK, 8, { notifications = { promptsListChanged = true } }), note(PROMPTS_CHANGED, 8) },
        (sse(out)))
      -- the streams closed: their listeners are gone from the server's set at
      -- once (looked at directly: counting would sweep them itself)
      assert.is_true(S.wait_until(function() return next(srv.listeners.streams) == nil end, 2))
      assert.are.equal(0, (srv:listeners_count()))
      http:close()
    end)
  end)

  it("ends a stream with its result on end_subscriptions, and sends resources/updated for its URIs", function()
    S.run(function()
      local srv, http = http_server()
      local wait = curl_listen(http.port, 9, { resourceSubscriptions = { "mem://r" } }, 5)
      assert.is_true(S.wait_until(function() return srv:listeners_count() == 1 end))
      srv:resource_updated("mem://other")  -- not subscribed
      srv:resource_updated("mem://r")
      srv:resource{ uri = "mem://s", name = "s", handler = function() return "S" end }  -- not asked for
      srv:end_subscriptions()
      local code, out = wait()
      assert.are.equal(0, code)  -- the server ended it, well before curl's timeout
      assert.same({ note(ACK, 9, { notifications = { resourceSubscriptions = { "mem://r" } } }),
        note(UPDATED, 9, { uri = "mem://r" }),
        { jsonrpc = "2.0", id = 9, result = { resultType = "complete", _meta = { [SUB] = 9,
          [SERVER_INFO_KEY] = INFO } } } }, (sse(out)))
      assert.are.equal(0, (srv:listeners_count()))
      http:close()
    end)
  end)

  it("ends its listen streams with their result when the HTTP server shuts down, then drains", function()
    S.run(function()
      local srv, http = http_server()
      local wait = curl_listen(http.port, 4, { toolsListChanged = true }, 5)
      assert.is_true(S.wait_until(function() return srv:listeners_count() == 1 end))
      local t0, drained = S.now(), false
      http:shutdown{ grace = 5, on_done = function() drained = true end }
      local code, out = wait()
      assert.are.equal(0, code)  -- ended by the server, not cut at the grace nor by curl's timeout
      local messages = sse(out)
      assert.same({ jsonrpc = "2.0", id = 4, result = { resultType = "complete", _meta = { [SUB] = 4,
        [SERVER_INFO_KEY] = INFO } } }, messages[#messages])
      assert.is_true(S.wait_until(function() return drained end, 2))
      assert.is_true(S.since(t0) < 2, "drained only after " .. S.since(t0) .. " s")
      assert.are.equal(0, (srv:listeners_count()))
    end)
  end)

  it("sends a legacy session's list_changed and resources/updated on its GET stream", function()
    S.run(function()
      local srv, http = http_server()
      local init = '{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25",'
        .. '"capabilities":{},"clientInfo":{"name":"spec","version":"1"}}}'
      local _, head = S.shell_wait(("curl -s -m 5 -D - -o /dev/null %s --data-binary '%s' http://127.0.0.1:%d/mcp")
        :format(HEADERS, init, http.port))
      local sid = assert(head:lower():match("mcp%-session%-id: (%x+)"))
      local with = ("-H 'MCP-Session-Id: %s' -H 'MCP-Protocol-Version: 2025-11-25'"):format(sid)
      local function post(body)
        local _, out = S.shell_wait(("curl -s -m 5 -o - -w '%%{http_code}' %s %s --data-binary '%s' "
          .. "http://127.0.0.1:%d/mcp"):format(HEADERS, with, body, http.port))
        return out
      end
      assert.are.equal("202", post('{"jsonrpc":"2.0","method":"notifications/initialized"}'))
      assert.matches("200$", post('{"jsonrpc":"2.0","id":1,"method":"resources/subscribe","params":{"uri":"mem://r"}}'))
      local get = background(("curl -s -N -m 1 -H 'Accept: text/event-stream' %s http://127.0.0.1:%d/mcp")
        :format(with, http.port))
      loop:sleep(0.3)  -- the GET stream is open by then
      srv:tool{ name = "later", description = "added", handler = function() return "" end }
      srv:resource_updated("mem://other")
      srv:resource_updated("mem://r")
      local _, out = get()
      assert.same({ { jsonrpc = "2.0", method = TOOLS_CHANGED },
        { jsonrpc = "2.0", method = UPDATED, params = { uri = "mem://r" } } }, (sse(out)))
      assert.same({ 0, 1 }, { srv:listeners_count() })
      S.shell_wait(("curl -s -m 5 -o /dev/null -X DELETE %s http://127.0.0.1:%d/mcp"):format(with, http.port))
      assert.same({ 0, 0 }, { srv:listeners_count() })  -- the session ended: not a listener any more
      http:close()
    end)
  end)
end)

-- }======================================================================

-- {======================================================================
-- In process: what the server holds
-- =======================================================================

-- A served peer; `send(msg)` feeds it one message and returns what came
-- out since the last look, as `take()` does.
local function connection(srv)
  local out = {}
  local peer = jrpc.peer{ profile = "mcp", role = "server", on_error = function() end,
    send = function(bytes) for line in bytes:gmatch("[^\n]+") do out[#out + 1] = assert(jrpc.decode(line)) end end }
  srv:attach(peer)
  local function take()
    local got = out
    out = {}
    return got
  end
  local function send(msg)
    msg.jsonrpc = "2.0"
    peer:receive(assert(jrpc.encode(msg)) .. "\n")
    return take()
  end
  return peer, send, take
end

local function listen_msg(id, notifications)
  return { id = id, method = "subscriptions/listen", params = { _meta = modern_meta(), notifications = notifications } }
end

describe("jrpc.mcp listeners, in process", function()
  it("refuses a malformed filter with -32602", function()
    local srv = mcp.server(INFO)
    local _, send = connection(srv)
    for i, notifications in ipairs{ "all", { toolsListChanged = "yes" }, { resourceSubscriptions = { 1 } } } do
      local out = send(listen_msg(i, notifications))
      assert.are.equal(-32602, out[1].error.code)
    end
    local out = send{ id = 4, method = "subscriptions/listen", params = { _meta = modern_meta() } }
    assert.are.equal(-32602, out[1].error.code)  -- notifications is required
    assert.same({ 0, 0 }, { srv:listeners_count() })
  end)

  it("notifies template changes, ends streams on end_subscriptions, forgets cancelled and closed ones", function()
    local srv = mcp.server(INFO)
    local _, send = connection(srv)
    assert.same({ note(ACK, 1, { notifications = { resourcesListChanged = true } }) },
      send(listen_msg(1, { resourcesListChanged = true })))
    local _, send2, out2 = connection(srv)
    send2(listen_msg("x", { resourcesListChanged = true }))
    assert.same({ 2, 0 }, { srv:listeners_count() })
    srv:resource_template{ uri_template = "mem://t/{id}", name = "t", handler = function() return "" end }
    assert.same({ note(RESOURCES_CHANGED, "x") }, out2())
    assert.is_true(srv:remove_resource_template("mem://t/{id}"))
    assert.is_false(srv:remove_resource_template("mem://t/{id}"))  -- not registered: no change
    assert.same({ note(RESOURCES_CHANGED, "x") }, out2())
    -- "x" cancels: never answered, and forgotten
    send2{ method = "notifications/cancelled", params = { requestId = "x" } }
    assert.same({}, out2())
    assert.same({ 1, 0 }, { srv:listeners_count() })
    srv:end_subscriptions()
    assert.same({ 0, 0 }, { srv:listeners_count() })
    -- a second listen on a connection that then closes
    local peer3, send3 = connection(srv)
    send3(listen_msg(5, { toolsListChanged = true }))
    assert.same({ 1, 0 }, { srv:listeners_count() })
    peer3:close("gone")
    assert.same({ 0, 0 }, { srv:listeners_count() })
    assert.same({}, srv.listeners.streams)  -- nothing held for them
  end)

  it("answers the graceful end with resultType complete and the subscription id", function()
    local srv = mcp.server(INFO)
    local _, send, take = connection(srv)
    assert.same({ note(ACK, 3, { notifications = { toolsListChanged = true } }) },
      send(listen_msg(3, { toolsListChanged = true })))
    srv:end_subscriptions()
    assert.same({ { jsonrpc = "2.0", id = 3, result = { resultType = "complete",
      _meta = { [SUB] = 3, [SERVER_INFO_KEY] = INFO } } } }, take())
    srv:tool{ name = "t", description = "t", handler = function() return "" end }
    assert.same({}, take())  -- ended: hears nothing more
  end)

  it("tells a legacy connection only once it is initialized, and forgets it when it closes", function()
    local srv = mcp.server(INFO)
    local peer, send, take = connection(srv)
    send{ id = 1, method = "initialize", params = { protocolVersion = "2025-11-25", capabilities = {} } }
    assert.same({ 0, 1 }, { srv:listeners_count() })
    srv:prompt{ name = "p", description = "p", handler = function() return "" end }
    assert.same({}, take())  -- before notifications/initialized: nothing
    send{ method = "notifications/initialized" }
    assert.is_true(srv:remove_prompt("p"))
    assert.same({ { jsonrpc = "2.0", method = PROMPTS_CHANGED } }, take())
    peer:close("gone")
    assert.same({ 0, 0 }, { srv:listeners_count() })
  end)
end)

-- }======================================================================
