-- Tasks kept in Redis (jrpc.mcp.task_store_redis on jrpc.redis), against a
-- real redis-server (Debian's) the spec starts on 127.0.0.1: the RESP
-- reader on any split, the store's methods, and two everything servers
-- (child processes over HTTP) sharing one Redis: a task made on one is
-- read, waited for and cancelled through the other. And a Redis that is
-- gone: a -32603, never an unknown task.
local S = dofile("spec/uv_support.lua")
local jrpc = require "jrpc"
local redis = require "jrpc.redis"
local redis_store = require "jrpc.mcp.task_store_redis"
local mcp_client = require "jrpc.mcp.client"


local R = dofile("spec/redis_support.lua")(S)
local free_port = R.free_port

-- redis-server on a free port, no persistence; its port once it is ready.
local function start_redis() return (R.start_redis()) end

-- An everything server with its tasks in the Redis at `redis_port`: its URL.
local function everything(redis_port) return (R.everything(redis_port)) end

describe("jrpc.redis", function()
  it("reads replies on any split of the stream", function()
    local stream = "+OK\r\n:42\r\n$5\r\nhello\r\n$-1\r\n*2\r\n$1\r\na\r\n*1\r\n:1\r\n-ERR wrong\r\n"
    local want = { "OK", 42, "hello", redis.NIL, { "a", { 1 } }, { err = "ERR wrong" } }
    for cut = 0, #stream do
      local reader, got = redis.reader(), {}
      for _, part in ipairs{ stream:sub(1, cut), stream:sub(cut + 1) } do
        assert.is_true(reader:feed(part))
        for v in reader.next, reader do got[#got + 1] = v end
      end
      assert.are.same(want, got)
    end
    assert.are.equal("*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$2\r\n10\r\n", redis.encode{ "SET", "k", 10 })
    local reader = redis.reader()
    reader:feed("?x\r\n")
    assert.are.same({ nil, 'Protocol error, got "?" as reply type byte' }, { reader:next() })
  end)
end)

describe("jrpc.redis against redis-server", function()
  after_each(S.cleanup)

  it("calls, reports the server's errors, and refuses calls once closed", function()
    S.run(function()
      local conn = assert(redis.connect{ port = start_redis() })
      assert.are.equal("OK", conn:call("SET", "k", "v"))
      assert.are.equal("v", conn:call("GET", "k"))
      assert.are.equal(redis.NIL, conn:call("GET", "missing"))
      local result, err = conn:call("NOSUCHCOMMAND")
      assert.is_nil(result)
      assert.are.equal("redis", err.code)
      assert.matches("^ERR unknown command 'NOSUCHCOMMAND'", err.message)
      conn:close()
      result, err = conn:call("GET", "k")
      assert.is_nil(result)
      assert.are.same({ "closed", "redis connection closed" }, { err.code, err.message })
      assert.has_error(function() redis.connect{ prt = 1 } end,
        "jrpc.redis.connect: unknown option 'prt' (did you mean 'port'?)")
    end, 20)
  end)
end)

describe("jrpc.mcp.task_store_redis", function()
  after_each(S.cleanup)

  it("keeps records in a real Redis until their TTL, merges updates atomically by status", function()
    S.run(function()
      local store = redis_store.new{ port = start_redis(), prefix = "spec:" }
      local rec = { taskId = "a", status = "working",
        result = { content = jrpc.array(), structured = { list = jrpc.array(), map = jrpc.object() } } }
      assert.is_true(store:put("a", rec, 300))
      assert.are.same({ nil, "exists" }, { store:put("a", rec, 300) })
      assert.is_true(store:put("b", { taskId = "b", status = "working" }, 10000))
      local got = store:get("a")
      assert.are.same(rec, got)
      -- empty arrays stay arrays: the JSON is never re-encoded by Redis
      assert.are.same({ '"content":[]', '"list":[]', '"map":{}' }, { jrpc.encode(got.result):match('"content":%[%]'),
        jrpc.encode(got.result):match('"list":%[%]'), jrpc.encode(got.result):match('"map":{}') })
      assert.are.same({ { taskId = "a", status = "completed", result = rec.result, n = 1 }, true },
        { store:update("a", { status = "completed", n = 1 }, { working = true, input_required = true }) })
      assert.are.same({ { taskId = "a", status = "completed", result = rec.result, n = 1 }, false },
        { store:update("a", { status = "cancelled" }, { working = true }) })
      assert.are.same({ taskId = "a", status = "completed", n = 1 }, (store:update("a", { result = jrpc.null })))
      assert.are.same({ "a", "b" }, store:list())
      S.loop:sleep(0.4)
      assert.is_nil(store:get("a"))
      assert.is_nil(store:update("a", { n = 2 }))
      store:delete("b")
      assert.are.same({}, store:list())
    end, 20)
  end)

  it("shares tasks between two servers: made on one, read, waited for and cancelled through the other", function()
    S.run(function()
      local port = start_redis()
      local a = assert(mcp_client.connect(S.loop, { url = everything(port) }))
      local b = assert(mcp_client.connect(S.loop, { url = everything(port), on_elicitation = function()
        return { action = "accept", content = { confirm = true } }
      end }))
      local task = assert(a:start_task("slow_compute", { seconds = 0.5, label = "shared" }))
      assert.are.equal("working", assert(b:get_task(task.taskId)).status)
      assert.are.same({ resultType = "complete", content = { { type = "text", text = "Computed shared after 0.5 s" } } },
        assert(b:task_result(task.taskId, { poll_interval = 0.05 })))
      -- b answers the question of a handler waiting in a (which looks at Redis every poll interval)
      task = assert(a:start_task("confirm_delete", { filename = "shared.txt" }))
      assert.are.same({ { type = "text", text = "Deleted shared.txt" } },
        assert(b:task_result(task.taskId, { poll_interval = 0.05 })).content)
      -- a cancel through b stops the handler running in a
      task = assert(a:start_task("slow_compute", { seconds = 30 }))
      assert.is_true(assert(b:cancel_task(task.taskId)))
      local t = assert(a:get_task(task.taskId))
      assert.are.same({ "cancelled", "Cancelled by the client" }, { t.status, t.statusMessage })
      local result, err = a:task_result(task.taskId)
      assert.is_nil(result)
      assert.are.equal("cancelled", err.code)
      a:close()
      b:close()
    end, 30)
  end)

  it("answers -32603 when Redis is gone, not an unknown task", function()
    S.run(function()
      local url = everything(free_port())  -- nothing listens there
      local client = assert(mcp_client.connect(S.loop, { url = url }))
      local result, err = client:start_task("slow_compute", { seconds = 0 })
      assert.is_nil(result)
      assert.are.equal(-32603, err.code)
      assert.matches("^Task store unavailable: redis 127%.0%.0%.1:%d+: ", err.message)
      result, err = client:get_task("some-task")
      assert.is_nil(result)
      assert.are.equal(-32603, err.code)
      client:close()
    end, 20)
  end)
end)
