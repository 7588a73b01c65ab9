-- SSE resumption on jrpc.mcp's legacy (2025-11-25) Streamable HTTP
-- sessions, driven by curl on 127.0.0.1: every event of a session's
-- streams has an id naming its stream; a stream cut mid-way (curl's -m
-- ends the connection) and resumed with GET + Last-Event-ID gets exactly
-- the events it missed, once, in order, then its end; an unknown id, or
-- one older than the bounded replay window, is 409; another stream's
-- events never show up; `sse_replay = false` turns it all off.
local S = dofile("spec/uv_support.lua")
local jrpc = require "jrpc"
local mcp = require "jrpc.mcp"
local files = dofile("spec/files.lua")

local loop = S.loop

-- gate: the paused calls go on once true, or (auto_gate) that many
-- seconds after they paused
local gate, auto_gate, finished
local function new_server(opts)
  gate, auto_gate, finished = false, nil, 0
  local srv = mcp.server{ name = "resume-spec", version = "1.0.0" }
  -- progress 1..n, stopping after `pause` until the spec opens the gate
  srv:tool{ name = "steps", description = "progress in steps", handler = function(args, ctx)
    for i = 1, args.n do
      ctx:progress(i, args.n)
      if i == args.pause then
        local t0 = S.now()
        while not gate and not (auto_gate and S.since(t0) > auto_gate) do loop:sleep(0.01) end
      end
    end
    finished = finished + 1
    return "done " .. args.n
  end }
  local o = { port = 0, peer = { on_error = function() end } }
  for k, v in pairs(opts or {}) do o[k] = v end
  return assert(srv:serve_http(loop, o)), srv
end

local CURL = "curl -s -N -H 'Content-Type: application/json' -H 'Accept: application/json, text/event-stream' "

-- The events of an SSE body: {id = ..., data = decoded JSON}.
local function events(body)
  local out = {}
  for block in (body .. "\n\n"):gmatch("(.-)\n\n") do
    local id = block:match("^id: ([^\n]*)\n") or false
    local data = block:match("data: ([^\n]*)")
    if data then out[#out + 1] = { id = id, data = jrpc.decode(data) } end
  end
  return out
end

-- The status, headers (text) and body of the curl command's output
-- (-D - first, then the body).
local function split(out)
  local head, body = out:match("^(.-)\r\n\r\n(.*)$")
  return tonumber(head:match("^HTTP/%S+ (%d+)")), head, body
end

local function session(port)
  local file = os.tmpname()
  files.write(file, '{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25",'
    .. '"capabilities":{},"clientInfo":{"name":"spec","version":"1"}}}')
  local _, out = S.shell_wait(("%s -m 5 -D - --data-binary @%s http://127.0.0.1:%d/mcp"):format(CURL, file, port))
  local status, head = split(out)
  assert.are.equal(200, status)
  local sid = head:lower():match("mcp%-session%-id: (%x+)")
  files.write(file, '{"jsonrpc":"2.0","method":"notifications/initialized"}')
  _, out = S.shell_wait(("%s -m 5 -D - -H 'MCP-Session-Id: %s' --data-binary @%s http://127.0.0.1:%d/mcp")
    :format(CURL, sid, file, port))
  os.remove(file)
  assert.are.equal(202, (split(out)))
  return sid
end

-- The curl command that POSTs tools/call steps {n, pause} as request `id`
-- with progress token `token` in session `sid`, cut after `seconds`.
local function steps_cmd(port, sid, id, token, n, pause, seconds)
  local file = os.tmpname()
  files.write(file, jrpc.encode{ jsonrpc = "2.0", id = id, method = "tools/call", params = {
    name = "steps", arguments = { n = n, pause = pause }, _meta = { progressToken = token } } })
  return ("%s -m %s -D - -H 'MCP-Session-Id: %s' --data-binary @%s http://127.0.0.1:%d/mcp; rm -f %s")
    :format(CURL, seconds, sid, file, port, file)
end

-- GET with Last-Event-ID `last` (nil: none) in session `sid`; status, body.
local function get(port, sid, last, seconds)
  local cmd = ("%s -m %s -D - -H 'MCP-Session-Id: %s' %s http://127.0.0.1:%d/mcp")
    :format(CURL, seconds or 5, sid, last and ("-H 'Last-Event-ID: " .. last .. "'") or "", port)
  local _, out = S.shell_wait(cmd)
  local status, _, body = split(out)
  return status, body
end

local function PROGRESS(token, i, n)
  return { jsonrpc = "2.0", method = "notifications/progress",
    params = { progressToken = token, progress = i, total = n } }
end
local function RESULT(id, n)
  return { jsonrpc = "2.0", id = id, result = { content = { { type = "text", text = "done " .. n } } } }
end

-- The data of `evs`, and whether every id is "<stream>-<n>" of one stream
-- with n rising.
local function data_of(evs)
  local out, stream, last = {}, nil, 0
  for _, ev in ipairs(evs) do
    out[#out + 1] = ev.data
    local s, n = tostring(ev.id):match("^(%d+)%-(%d+)$")
    assert.is_truthy(s, "event id " .. tostring(ev.id))
    stream = stream or s
    assert.are.equal(stream, s)
    assert.is_true(tonumber(n) > last)
    last = tonumber(n)
  end
  return out
end

describe("jrpc.mcp legacy SSE resumption", function()
  after_each(S.cleanup)

  it("replays exactly the missed events of a cut stream, in order, then its end", function()
    S.run(function()
      local http = new_server()
      local sid = session(http.port)
      local _, out = S.shell_wait(steps_cmd(http.port, sid, 1, "t", 4, 2, 1))
      local status, head, body = split(out)
      assert.are.equal(200, status)
      assert.is_truthy(head:lower():find("content-type: text/event-stream", 1, true))
      local seen = events(body)
      assert.are.same({ PROGRESS("t", 1, 4), PROGRESS("t", 2, 4) }, data_of(seen))
      gate = true
      assert.is_true(S.wait_until(function() return finished == 1 end))
      local st, replay = get(http.port, sid, seen[2].id)
      assert.are.equal(200, st)
      local rest = events(replay)
      assert.are.same({ PROGRESS("t", 3, 4), PROGRESS("t", 4, 4), RESULT(1, 4) }, data_of(rest))
      -- the same stream, ids after the last one seen
      assert.are.equal(seen[1].id:match("^%d+"), rest[1].id:match("^%d+"))
      -- resuming from the middle of the replay gets only what follows
      st, replay = get(http.port, sid, rest[2].id)
      assert.are.same({ 200, { RESULT(1, 4) } }, { st, data_of(events(replay)) })
      http:close()
    end)
  end)

  it("continues a stream resumed while its request still runs", function()
    S.run(function()
      local http = new_server()
      local sid = session(http.port)
      local _, out = S.shell_wait(steps_cmd(http.port, sid, 7, "c", 3, 1, 0.5))
      local seen = events(select(3, split(out)))
      assert.are.same({ PROGRESS("c", 1, 3) }, data_of(seen))
      -- the request is paused: resume now, open the gate a little later
      local timer = require("jrpc.uv.timers")
      timer.after(loop.uv, 0.3, function() gate = true end, "spec gate")
      local st, replay = get(http.port, sid, seen[1].id)
      assert.are.same({ 200, { PROGRESS("c", 2, 3), PROGRESS("c", 3, 3), RESULT(7, 3) } },
        { st, data_of(events(replay)) })
      http:close()
    end)
  end)

  it("never replays another stream's events", function()
    S.run(function()
      local http = new_server()
      local sid = session(http.port)
      -- two calls at once, each cut after its first event
      local _, out = S.shell_wait(("f=$(mktemp); (%s) > $f & %s; wait; printf '\\n@@@\\n'; cat $f; rm -f $f")
        :format(steps_cmd(http.port, sid, 1, "a", 3, 1, 1), steps_cmd(http.port, sid, 2, "b", 3, 1, 1)))
      local out_b, out_a = out:match("^(.-)\n@@@\n(.*)$")
      local seen_a, seen_b = events(select(3, split(out_a))), events(select(3, split(out_b)))
      assert.are.same({ PROGRESS("a", 1, 3) }, data_of(seen_a))
      assert.are.same({ PROGRESS("b", 1, 3) }, data_of(seen_b))
      assert.are_not.equal(seen_a[1].id:match("^%d+"), seen_b[1].id:match("^%d+"))
      gate = true
      assert.is_true(S.wait_until(function() return finished == 2 end))
      local st_a, replay_a = get(http.port, sid, seen_a[1].id)
      local st_b, replay_b = get(http.port, sid, seen_b[1].id)
      assert.are.same({ 200, { PROGRESS("a", 2, 3), PROGRESS("a", 3, 3), RESULT(1, 3) } },
        { st_a, data_of(events(replay_a)) })
      assert.are.same({ 200, { PROGRESS("b", 2, 3), PROGRESS("b", 3, 3), RESULT(2, 3) } },
        { st_b, data_of(events(replay_b)) })
      http:close()
    end)
  end)

  it("is 409 for an unknown id or one past the window", function()
    S.run(function()
      local http = new_server{ sse_replay = { max_events = 2 } }
      local sid = session(http.port)
      local _, out = S.shell_wait(steps_cmd(http.port, sid, 1, "w", 5, 1, 0.5))
      local seen = events(select(3, split(out)))
      assert.are.same({ PROGRESS("w", 1, 5) }, data_of(seen))
      gate = true
      assert.is_true(S.wait_until(function() return finished == 1 end))
      local stream, n = seen[1].id:match("^(%d+)%-(%d+)$")
      assert.are.same({ 409, ('cannot resume: event id "%s" is past the replay window: '
        .. "later events were dropped\n"):format(seen[1].id) }, { get(http.port, sid, seen[1].id) })
      for _, bad in ipairs{ "99-1", stream .. "-" .. (n + 100), stream .. "-0", "x", "" .. n } do
        assert.are.same({ 409, ('cannot resume: unknown event id "%s"\n'):format(bad) },
          { get(http.port, sid, bad) })
      end
      -- the two newest are kept: the last progress and the result
      local st, body = get(http.port, sid, stream .. "-" .. (n + 3))
      assert.are.same({ 200, { PROGRESS("w", 5, 5), RESULT(1, 5) } }, { st, data_of(events(body)) })
      http:close()
    end)
  end)

  it("resumes the standalone GET stream, and keeps it going", function()
    S.run(function()
      local http, srv = new_server()
      local sid = session(http.port)
      local function added(name)
        srv:tool{ name = name, description = "added", handler = function() return "" end }
      end
      local CHANGED = { jsonrpc = "2.0", method = "notifications/tools/list_changed" }
      local timers = require "jrpc.uv.timers"
      -- (curl has connected by then, even on a busy machine)
      timers.after(loop.uv, 0.5, function() added("a") end, "spec add")
      local st, body = get(http.port, sid, nil, 1)
      local seen = events(body)
      assert.are.same({ 200, { CHANGED } }, { st, data_of(seen) })
      -- no client holds it: these wait for a resumption
      added("b")
      added("c")
      timers.after(loop.uv, 0.2, function() added("d") end, "spec add")
      st, body = get(http.port, sid, seen[1].id, 0.6)
      local rest = events(body)
      assert.are.same({ 200, { CHANGED, CHANGED, CHANGED } }, { st, data_of(rest) })
      assert.are.equal(seen[1].id:match("^%d+"), rest[1].id:match("^%d+"))
      http:close()
    end)
  end)

  it("lets the official SDK client resume a stream cut mid-way", function()
    S.run(function()
      local http = new_server()
      -- the call pauses after its second progress: the relay cuts there,
      -- the SDK resumes, and the rest comes once the gate opens
      auto_gate = 0.5
      local errfile = os.tmpname()
      local code, out = S.shell_wait(("timeout -k 2 15 node node/mcp_sdk1_resume.js %d steps 4 2>%s")
        :format(http.port, errfile))
      local err = files.take(errfile)
      local got = jrpc.decode(out)
      assert.are.same({ 0, "" }, { code, err })
      assert.are.equal(1, #got.resumedFrom)
      assert.matches("^%d+%-%d+$", got.resumedFrom[1])
      got.resumedFrom = nil
      assert.are.same({ cut = true, progress = { 1, 2, 3, 4 },
        result = { content = { { type = "text", text = "done 4" } } } }, got)
      http:close()
    end, 20)
  end)

  it("checks the sse_replay option; false sends no ids", function()
    local srv = mcp.server{ name = "x", version = "1" }
    assert.has_error(function() srv:serve_http(loop, { sse_replay = { max_event = 3 } }) end,
      "serve_http: sse_replay: unknown option 'max_event' (did you mean 'max_events'?)")
    assert.has_error(function() srv:serve_http(loop, { sse_replay = 5 }) end,
      "serve_http: sse_replay must be a table of limits, or false")
    assert.has_error(function() srv:serve_http(loop, { sse_replay = { max_bytes = 0 } }) end,
      "serve_http: sse_replay.max_bytes must be a positive integer")
    S.run(function()
      local http = new_server{ sse_replay = false }
      local sid = session(http.port)
      gate = true
      local _, out = S.shell_wait(steps_cmd(http.port, sid, 1, "f", 2, 1, 5))
      local seen = events(select(3, split(out)))
      assert.are.same({ { id = false, data = PROGRESS("f", 1, 2) }, { id = false, data = PROGRESS("f", 2, 2) },
        { id = false, data = RESULT(1, 2) } }, seen)
      http:close()
    end)
  end)
end)
