-- Change notifications across processes (jrpc.mcp.events_redis on
-- jrpc.redis pub/sub) and task leases (tasks.lease_ms), against a real
-- redis-server the spec starts on 127.0.0.1: three everything servers
-- (child processes over HTTP) share one Redis for tasks and events; a
-- change made on one reaches the listen streams of the others and its own
-- exactly once; a task of a server killed while it runs is failed by the
-- others once its lease runs out.
local S = dofile("spec/uv_support.lua")
local mcp = require "jrpc.mcp"
local redis = require "jrpc.redis"
local events_redis = require "jrpc.mcp.events_redis"
local tasks = require "jrpc.mcp.tasks"
local mcp_client = require "jrpc.mcp.client"
local jrpc_decode = require("jrpc").decode


local R = dofile("spec/redis_support.lua")(S)
local free_port, start_redis = R.free_port, R.start_redis

-- An everything server with its tasks and events in the Redis at `port`:
-- its URL, its process and its stderr so far.
local function everything(port, extra)
  local args = { "--events-redis", "127.0.0.1:" .. port }
  for _, a in ipairs(extra or {}) do args[#args + 1] = a end
  return R.everything(port, args)
end

-- A listen on `client` with `filter`: the notifications it hears, by method.
local function listen(client, filter)
  local heard = {}
  local l = assert(client:listen(filter, function(method, params)
    heard[#heard + 1] = { method = method, params = params }
  end))
  assert(S.wait_until(function() return #heard >= 1 end, 5), "no acknowledgement")
  assert.are.equal("notifications/subscriptions/acknowledged", heard[1].method)
  return heard, l
end

local function methods(heard)
  local out = {}
  for i = 2, #heard do out[#out + 1] = heard[i].method end
  return out
end

describe("jrpc.redis pub/sub", function()
  after_each(S.cleanup)

  it("hands a subscribed connection's messages to on_message, and answers its commands in order", function()
    S.run(function()
      local port = start_redis()
      local sub, pub = assert(redis.connect{ port = port }), assert(redis.connect{ port = port })
      local got = {}
      assert.is_true(sub:subscribe("ch", function(channel, payload) got[#got + 1] = { channel, payload } end))
      assert.are.equal(1, pub:call("PUBLISH", "ch", "one"))
      assert.are.equal(0, pub:call("PUBLISH", "other", "nobody"))
      assert.are.same({ "pong", "" }, sub:call("PING"))
      assert.are.equal(1, pub:call("PUBLISH", "ch", "two"))
      assert.is_true(S.wait_until(function() return #got == 2 end, 5))
      assert.are.same({ { "ch", "one" }, { "ch", "two" } }, got)
      assert.has_error(function() sub:subscribe("ch") end, "redis: subscribe(channel, on_message)")
      sub:close()
      pub:close()
    end, 20)
  end)
end)

describe("jrpc.mcp.events_redis", function()
  after_each(S.cleanup)

  it("checks its options and the server's events option", function()
    assert.has_error(function() events_redis.new{ prt = 1 } end,
      "events_redis.new: unknown option 'prt' (did you mean 'port'?)")
    assert.has_error(function() events_redis.new{ max_queue = 0 } end,
      "events_redis.new: max_queue must be an integer >= 1")
    assert.has_error(function() events_redis.new{ retry_s = 0 } end, "events_redis.new: retry_s must be a number > 0")
    assert.has_error(function() mcp.server{ name = "s", version = "1", events = {} } end,
      "jrpc.mcp.server: events must be a table with the methods start and publish (see jrpc.mcp.events)")
    assert.has_error(function() mcp.server{ name = "s", version = "1", tasks = { lease_ms = 1000 } } end,
      "jrpc.mcp.server: tasks.lease_ms is for a shared store (tasks.store)")
    local store = require("jrpc.mcp.task_store").memory()
    assert.has_error(function() mcp.server{ name = "s", version = "1", tasks = { store = store, lease_ms = 10 } } end,
      "jrpc.mcp.server: tasks.lease_ms must be an integer >= 300")
  end)

  it("hands each change to the bus, delivers here once, and what the bus brings", function()
    local published, deliver, named = {}, nil, nil
    local bus = { start = function(_, fn, name) deliver, named = fn, name end,
      publish = function(_, event) published[#published + 1] = event end }
    local server = mcp.server{ name = "bus-spec", version = "1", events = bus }
    assert.are.equal("bus-spec", named)
    server:tool{ name = "t", description = "t", handler = function() return "t" end }
    server:resource_updated("x://y")
    assert.are.same({ { type = "list_changed", kind = "tools" }, { type = "resource_updated", uri = "x://y" } },
      published)
    assert.is_true(deliver{ type = "list_changed", kind = "prompts" })
    assert.is_false(deliver{ type = "list_changed", kind = "nothing" })
    assert.is_false(deliver{ type = "something new" })
    assert.are.equal(2, #published)  -- what the bus brings is not published again
  end)

  it("queues what is published while Redis is down, sends it once Redis is back, and subscribes again", function()
    S.run(function()
      local port, reports, delivered = free_port(), {}, {}
      local bus = events_redis.new{ port = port, retry_s = 0.1, ping_s = 0.1, max_queue = 2,
        on_error = function(msg) reports[#reports + 1] = msg end }
      bus:start(function(event) delivered[#delivered + 1] = event; return true end, "down")
      bus:publish{ type = "list_changed", kind = "tools" }
      bus:publish{ type = "list_changed", kind = "tools" }  -- the same, still waiting: once
      bus:publish{ type = "resource_updated", uri = "a://b" }
      bus:publish{ type = "list_changed", kind = "prompts" }  -- a third: the queue holds 2
      S.loop:sleep(0.3)
      assert.is_false(bus:is_subscribed())
      local channel = "jrpc:mcp:events:down"
      local refused = ("redis 127.0.0.1:%d: ECONNREFUSED"):format(port)
      assert.are.same({ "jrpc.mcp.events_redis: queue full (2 events): an event was dropped",
        "jrpc.mcp.events_redis: not subscribed to " .. channel .. ": " .. refused,
        "jrpc.mcp.events_redis: cannot publish: " .. refused }, { reports[1], reports[2], reports[3] })
      assert.are.equal(3, #reports)  -- once an outage, not every retry
      -- Redis comes: the queue goes out in order; a raw subscriber sees it
      local _, server = start_redis(port)
      local raw = assert(redis.connect{ port = port })
      local got = {}
      assert.is_true(raw:subscribe(channel, function(_, payload) got[#got + 1] = jrpc_decode(payload).event end))
      assert.is_true(S.wait_until(function() return bus:is_subscribed() end, 5))
      -- the two queued events went out (Redis counts its PUBLISHes)
      local stats = assert(redis.connect{ port = port })
      local function publishes()
        return tonumber(assert(stats:call("INFO", "commandstats")):match("cmdstat_publish:calls=(%d+)") or 0)
      end
      assert.is_true(S.wait_until(function() return publishes() == 2 end, 5))
      stats:close()
      -- (they may have gone out before the raw subscriber was there: publish once more)
      bus:publish{ type = "resource_updated", uri = "c://d" }
      assert.is_true(S.wait_until(function() return #got >= 1 and got[#got].uri == "c://d" end, 5))
      -- in order: what the raw subscriber saw is the end of all that was sent
      local sent = { { type = "list_changed", kind = "tools" }, { type = "resource_updated", uri = "a://b" },
        { type = "resource_updated", uri = "c://d" } }
      assert.are.same({ (table.unpack or unpack)(sent, 4 - #got) }, got)
      assert.are.same({}, delivered)  -- its own events never come back to it
      -- another process's event is delivered
      raw:close()
      local pub = assert(redis.connect{ port = port })
      assert.are.equal(1, pub:call("PUBLISH", channel, '{"origin":"other","event":{"type":"list_changed","kind":"tools"}}'))
      assert.is_true(S.wait_until(function() return #delivered == 1 end, 5))
      assert.are.same({ type = "list_changed", kind = "tools" }, delivered[1])
      -- Redis restarts: the bus subscribes again and hears the next event
      pub:close()
      server:kill("sigkill")
      assert.is_true(S.wait_until(function() return not bus:is_subscribed() end, 5))
      start_redis(port)
      assert.is_true(S.wait_until(function() return bus:is_subscribed() end, 5))
      pub = assert(redis.connect{ port = port })
      assert.are.equal(1, pub:call("PUBLISH", channel, '{"origin":"other","event":{"type":"task","task":{"taskId":"t"}}}'))
      assert.is_true(S.wait_until(function() return #delivered == 2 end, 5))
      assert.are.same({ type = "task", task = { taskId = "t" } }, delivered[2])
      assert.are.equal("jrpc.mcp.events_redis: subscribed again to " .. channel, reports[#reports])
      pub:close()
      bus:close()
    end, 30)
  end)

  it("carries list changes, resource updates and task status to the listen streams of other servers", function()
    S.run(function()
      local port = start_redis()
      local url_a, url_b = everything(port), everything(port)
      local a = assert(mcp_client.connect(S.loop, { url = url_a }))
      local b = assert(mcp_client.connect(S.loop, { url = url_b }))
      local on_b = listen(b, { toolsListChanged = true, resourceSubscriptions = { "test://watched-resource" } })
      local on_a = listen(a, { toolsListChanged = true })
      -- the subscriptions are made as the servers start; wait until a's reach b
      assert(a:call_tool("test_trigger_tool_change", {}))
      assert.is_true(S.wait_until(function() return #on_b >= 2 and #on_a >= 2 end, 5))
      assert(a:call_tool("test_trigger_resource_update", {}))
      assert.is_true(S.wait_until(function() return #on_b >= 3 end, 5))
      assert.are.same({ "notifications/tools/list_changed", "notifications/resources/updated" }, methods(on_b))
      assert.are.equal("test://watched-resource", on_b[3].params.uri)
      -- a's own change reached its own listen once (none came back from Redis)
      assert(b:call_tool("test_simple_text", {}))  -- a round trip for anything late
      assert.are.same({ "notifications/tools/list_changed" }, methods(on_a))
      -- a task made on a: its end reaches a listen on b that names it
      local task = assert(a:start_task("slow_compute", { seconds = 0.3, label = "heard" }))
      local on_task = listen(b, { taskIds = { task.taskId } })
      assert.is_true(S.wait_until(function() return #on_task >= 2 end, 5))
      assert.are.same({ "notifications/tasks", task.taskId, "completed", "Computed heard after 0.3 s" },
        { on_task[2].method, on_task[2].params.taskId, on_task[2].params.status,
          on_task[2].params.result.content[1].text })
      a:close()
      b:close()
    end, 30)
  end)

  it("fails the task of a server killed while it runs once its lease runs out", function()
    S.run(function()
      local port = start_redis()
      local url_a = everything(port, { "--task-lease-ms", "600" })
      local url_b, child_b = everything(port, { "--task-lease-ms", "600" })
      local a = assert(mcp_client.connect(S.loop, { url = url_a }))
      local b = assert(mcp_client.connect(S.loop, { url = url_b }))
      local task = assert(b:start_task("slow_compute", { seconds = 30 }))
      -- while b lives it renews the lease: the task still works after two leases
      S.loop:sleep(1.2)
      assert.are.equal("working", assert(a:get_task(task.taskId)).status)
      child_b:kill("sigkill")
      local t0 = S.now()
      local t
      assert.is_true(S.wait_until(function()
        t = assert(a:get_task(task.taskId))
        return t.status ~= "working"
      end, 5))
      assert.is_true(S.since(t0) < 1.5, "failed after " .. S.since(t0) .. " s")
      assert.are.same({ "failed", tasks.LOST }, { t.status, t.error })
      a:close()
    end, 30)
  end)
end)
