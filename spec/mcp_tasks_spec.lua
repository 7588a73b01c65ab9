-- The tasks extension (io.modelcontextprotocol/tasks) of jrpc.mcp's server
-- over Streamable HTTP on 127.0.0.1, driven by curl: a tool call that
-- becomes a task, tasks/get until it ends, cancel, input through
-- tasks/update, TTL expiry, failing tasks, bad task ids, the options; and
-- the in-memory task store on its own.
local S = dofile("spec/uv_support.lua")
local jrpc = require "jrpc"
local mcp = require "jrpc.mcp"
local task_store = require "jrpc.mcp.task_store"

local loop = S.loop
local H = dofile("spec/mcp_http_support.lua")(S)

local EXT = "io.modelcontextprotocol/tasks"
local SERVER_INFO = { ["io.modelcontextprotocol/serverInfo"] = { name = "tasks-spec", version = "1.0.0" } }

-- State the handlers leave for the specs to see.
local seen

local function new_server(task_opts)
  seen = {}
  local srv = mcp.server{ name = "tasks-spec", version = "1.0.0", tasks = task_opts }
  srv:tool{ name = "plain", description = "never a task", handler = function() return "plain" end }
  srv:tool{ name = "slow", description = "works a while", task_support = "optional",
    input_schema = { type = "object", properties = { seconds = { type = "number" } } },
    handler = function(args, ctx)
      for _ = 1, math.floor((args.seconds or 0.3) * 20) do
        if ctx:cancelled() then seen.cancelled = ctx.task_id; return "stopped" end
        loop:sleep(0.05)
      end
      return "slow done"
    end }
  srv:tool{ name = "must", description = "only as a task", task_support = "required",
    handler = function() return "as a task" end }
  srv:tool{ name = "broken", description = "a Lua error", task_support = "optional",
    handler = function() error("oops") end }
  srv:tool{ name = "protocol", description = "a protocol error", task_support = "optional",
    handler = function() jrpc.error(-32603, "the backend is down", { retry = false }) end }
  srv:tool{ name = "ask", description = "asks two things", task_support = "optional", handler = function(_, ctx)
    ctx:status("asking")
    local answers, why = ctx:input{
      a = { method = "elicitation/create", params = { mode = "form", message = "A?",
        requestedSchema = { type = "object", properties = { v = { type = "string" } } } } },
      b = { method = "roots/list", params = jrpc.object() } }
    if not answers then seen.why = why; return "no answers" end
    return ("a=%s b=%s"):format(answers.a.content.v, #answers.b.roots)
  end }
  return assert(srv:serve_http(loop, { port = 0, peer = { on_error = function() end } })), srv
end

local function caps(with_tasks)
  if with_tasks then return { extensions = { [EXT] = jrpc.object() } } end
  return jrpc.object()
end

-- POST one request; returns the HTTP status and the decoded message.
local function rpc(port, method, params, opts)
  opts = opts or {}
  params._meta = { ["io.modelcontextprotocol/protocolVersion"] = "2026-07-28",
    ["io.modelcontextprotocol/clientCapabilities"] = caps(opts.tasks ~= false) }
  local name = opts.name or params.taskId or params.name
  local body = jrpc.encode{ jsonrpc = "2.0", id = 1, method = method, params = params }
  local status, _, text = H.post(port, H.modern_headers(method, name), body)
  return status, jrpc.decode(text)
end

local function call(port, tool, args, opts)
  return rpc(port, "tools/call", { name = tool, arguments = args or jrpc.object() }, opts)
end

-- A task as the wire carries it, its times checked and taken out.
local timeless = dofile("spec/task_times.lua")(assert)

local function get(port, id)
  local status, msg = rpc(port, "tasks/get", { taskId = id })
  assert.are.equal(200, status)
  return timeless(msg.result)
end

local function keys(t)
  local out = {}
  for k in pairs(t) do out[#out + 1] = k end
  table.sort(out)
  return out
end

-- tasks/get until the task leaves `status`.
local function poll(port, id, status)
  local t
  repeat
    loop:sleep(0.05)
    t = get(port, id)
  until t.status ~= status
  return t
end

describe("jrpc.mcp tasks", function()
  after_each(S.cleanup)

  it("runs a tool call as a task: created, working, completed with its result inlined", function()
    S.run(function()
      local http = new_server{ poll_interval_ms = 100 }
      local _, msg = rpc(http.port, "server/discover", {})
      assert.are.same({ [EXT] = {} }, msg.result.capabilities.extensions)
      _, msg = rpc(http.port, "tools/list", {})
      assert.are.same({ taskSupport = "optional" }, msg.result.tools[2].execution)
      assert.is_nil(msg.result.tools[1].execution)
      local status
      status, msg = call(http.port, "slow", { seconds = 0.3 })
      assert.are.equal(200, status)
      local id = msg.result.taskId
      assert.matches("^%x+$", id)
      assert.are.equal(32, #id)
      assert.are.same({ resultType = "task", taskId = id, status = "working", ttlMs = 3600000,
        pollIntervalMs = 100, _meta = SERVER_INFO }, timeless(msg.result))
      assert.are.same({ resultType = "complete", taskId = id, status = "working", ttlMs = 3600000,
        pollIntervalMs = 100, _meta = SERVER_INFO }, get(http.port, id))
      assert.are.same({ resultType = "complete", taskId = id, status = "completed", ttlMs = 3600000,
        pollIntervalMs = 100, _meta = SERVER_INFO,
        result = { resultType = "complete", content = { { type = "text", text = "slow done" } } } },
        poll(http.port, id, "working"))
      http:close()
    end)
  end)

  it("answers at once without the extension, and -32021 for a tool that must be a task", function()
    S.run(function()
      local http = new_server()
      local _, msg = call(http.port, "slow", { seconds = 0 }, { tasks = false })
      assert.are.same({ resultType = "complete", _meta = SERVER_INFO,
        content = { { type = "text", text = "slow done" } } }, msg.result)
      local status
      status, msg = call(http.port, "must", nil, { tasks = false })
      assert.are.equal(400, status)
      assert.are.same({ code = -32021, message = "Missing required client capability",
        data = { requiredCapabilities = { extensions = { [EXT] = {} } } } }, msg.error)
      -- a tool that is never a task stays plain for a client with tasks
      _, msg = call(http.port, "plain")
      assert.are.same({ resultType = "complete", _meta = SERVER_INFO,
        content = { { type = "text", text = "plain" } } }, msg.result)
      http:close()
    end)
  end)

  it("cancels a working task: an empty ack, status cancelled, the handler sees it; cancel again is the same", function()
    S.run(function()
      local http = new_server()
      local _, msg = call(http.port, "slow", { seconds = 30 })
      local id = msg.result.taskId
      _, msg = rpc(http.port, "tasks/cancel", { taskId = id })
      assert.are.same({ jsonrpc = "2.0", id = 1, result = { resultType = "complete", _meta = SERVER_INFO } }, msg)
      assert.are.same({ resultType = "complete", taskId = id, status = "cancelled",
        statusMessage = "Cancelled by the client", ttlMs = 3600000, pollIntervalMs = 1000, _meta = SERVER_INFO },
        get(http.port, id))
      assert.is_true(S.wait_until(function() return seen.cancelled == id end))
      _, msg = rpc(http.port, "tasks/cancel", { taskId = id })
      assert.are.same({ resultType = "complete", _meta = SERVER_INFO }, msg.result)
      assert.are.equal("cancelled", get(http.port, id).status)
      http:close()
    end)
  end)

  it("forgets a task once its TTL is over", function()
    S.run(function()
      local http = new_server{ ttl_ms = 400, poll_interval_ms = 50 }
      local _, msg = call(http.port, "slow", { seconds = 0 })
      local id = msg.result.taskId
      assert.are.equal(400, msg.result.ttlMs)
      assert.are.equal("completed", get(http.port, id).status)
      loop:sleep(0.5)
      local status
      status, msg = rpc(http.port, "tasks/get", { taskId = id })
      assert.are.equal(400, status)
      assert.are.same({ code = -32602, message = "Invalid params: unknown task " .. id }, msg.error)
      http:close()
    end)
  end)

  it("a tool's Lua error completes the task with isError; a protocol error fails it", function()
    S.run(function()
      local http = new_server()
      local _, msg = call(http.port, "broken")
      local t = poll(http.port, msg.result.taskId, "working")
      assert.are.equal("completed", t.status)
      assert.are.same({ resultType = "complete", isError = true,
        content = { { type = "text", text = "Tool broken failed: internal error" } } }, t.result)
      _, msg = call(http.port, "protocol")
      t = poll(http.port, msg.result.taskId, "working")
      assert.are.same({ resultType = "complete", taskId = msg.result.taskId, status = "failed", ttlMs = 3600000,
        pollIntervalMs = 1000, _meta = SERVER_INFO,
        error = { code = -32603, message = "the backend is down", data = { retry = false } } }, t)
      http:close()
    end)
  end)

  it("asks through input_required: tasks/update answers part, then the rest, and the task goes on", function()
    S.run(function()
      local http = new_server()
      local _, msg = call(http.port, "ask")
      local id = msg.result.taskId
      local t = get(http.port, id)
      assert.are.equal("input_required", t.status)
      assert.are.equal("asking", t.statusMessage)
      assert.are.same({ "elicitation/create", "roots/list" }, { t.inputRequests.a.method, t.inputRequests.b.method })
      _, msg = rpc(http.port, "tasks/update", { taskId = id, inputResponses = {
        a = { action = "accept", content = { v = "x" } }, zzz = { ignored = true } } })
      assert.are.same({ resultType = "complete", _meta = SERVER_INFO }, msg.result)
      t = get(http.port, id)
      assert.are.equal("input_required", t.status)
      assert.are.same({ "b" }, keys(t.inputRequests))
      _, msg = rpc(http.port, "tasks/update", { taskId = id, inputResponses = {
        b = { roots = { { uri = "file:///r", name = "r" } } } } })
      assert.are.same({ resultType = "complete", _meta = SERVER_INFO }, msg.result)
      t = poll(http.port, id, "working")
      assert.are.equal("completed", t.status)
      assert.are.same({ { type = "text", text = "a=x b=1" } }, t.result.content)
      -- a task cancelled while it waits wakes with "cancelled"
      _, msg = call(http.port, "ask")
      id = msg.result.taskId
      rpc(http.port, "tasks/cancel", { taskId = id })
      assert.are.equal("cancelled", seen.why)
      assert.are.equal("cancelled", get(http.port, id).status)
      http:close()
    end)
  end)

  it("refuses bad task ids, undeclared clients, removed methods and a mismatched Mcp-Name", function()
    S.run(function()
      local http = new_server()
      local status, msg = rpc(http.port, "tasks/get", { taskId = "no-such-task" })
      assert.are.equal(400, status)
      assert.are.same({ code = -32602, message = "Invalid params: unknown task no-such-task" }, msg.error)
      status, msg = rpc(http.port, "tasks/cancel", { taskId = 12 }, { name = "12" })
      assert.are.equal(400, status)
      assert.are.same({ code = -32602, message = "Invalid params: taskId must be a string" }, msg.error)
      status, msg = rpc(http.port, "tasks/update", { taskId = "no-such-task", inputResponses = jrpc.object() })
      assert.are.equal(400, status)
      assert.are.same({ code = -32602, message = "Invalid params: unknown task no-such-task" }, msg.error)
      status, msg = rpc(http.port, "tasks/get", { taskId = "x" }, { tasks = false })
      assert.are.equal(400, status)
      assert.are.same({ code = -32021, message = "Missing required client capability",
        data = { requiredCapabilities = { extensions = { [EXT] = {} } } } }, msg.error)
      status, msg = rpc(http.port, "tasks/result", { taskId = "x" })
      assert.are.equal(404, status)
      assert.are.same({ code = -32601, message = "Method not found" }, msg.error)
      status, msg = rpc(http.port, "tasks/list", {})
      assert.are.equal(404, status)
      assert.are.same({ code = -32601, message = "Method not found" }, msg.error)
      status, msg = rpc(http.port, "subscriptions/listen", { notifications = { taskIds = { 1 } } })
      assert.are.equal(400, status)
      assert.are.same({ code = -32602, message = "Invalid params: taskIds must be an array of task ids" }, msg.error)
      local _
      _, msg = call(http.port, "slow", { seconds = 0 })
      status, msg = rpc(http.port, "tasks/get", { taskId = msg.result.taskId }, { name = "another" })
      assert.are.equal(400, status)
      assert.are.equal(-32020, msg.error.code)
      http:close()
    end)
  end)

  it("refuses a task past max_tasks", function()
    S.run(function()
      local http = new_server{ max_tasks = 1 }
      local _, msg = call(http.port, "slow", { seconds = 5 })
      local first = msg.result.taskId
      _, msg = call(http.port, "slow", { seconds = 5 })
      assert.are.same({ code = -32603, message = "Cannot start a task: full", data = { reason = "full" } },
        msg.error)
      rpc(http.port, "tasks/cancel", { taskId = first })
      http:close()
    end)
  end)

  it("checks its options and a tool's task_support", function()
    local function raised(fn)
      local ok, err = pcall(fn)
      assert.is_false(ok)
      return (tostring(err):gsub("^[^:]*:%d+: ", ""))
    end
    local function server(t) return mcp.server{ name = "s", version = "1", tasks = t } end
    assert.are.equal("jrpc.mcp.server: tasks: unknown option 'ttl_s' (did you mean 'ttl_ms'?)",
      raised(function() server{ ttl_s = 5 } end))
    -- reported where the server was made
    for _, t in ipairs{ { ttl_ms = -1 }, { ttl_s = 1 } } do
      local ok, err = pcall(function() mcp.server{ name = "s", version = "1", tasks = t } end)
      assert.is_false(ok)
      assert.matches("^spec/mcp_tasks_spec%.lua:%d+: jrpc%.mcp%.server: tasks", err)
    end
    assert.are.equal("jrpc.mcp.server: tasks.ttl_ms must be an integer from 1 to 604800000",
      raised(function() server{ ttl_ms = 0 } end))
    assert.are.equal("jrpc.mcp.server: tasks.poll_interval_ms must be an integer from 1 to ttl_ms",
      raised(function() server{ ttl_ms = 100, poll_interval_ms = 200 } end))
    assert.are.equal("jrpc.mcp.server: tasks.max_tasks must be an integer >= 1",
      raised(function() server{ max_tasks = 0.5 } end))
    assert.are.equal("jrpc.mcp.server: tasks.store lacks the method list (see jrpc.mcp.task_store)",
      raised(function() server{ store = { get = print, put = print, update = print, delete = print } } end))
    assert.are.equal("jrpc.mcp.server: tasks.max_tasks is the default store's; give it to your store instead",
      raised(function() server{ store = task_store.memory(), max_tasks = 3 } end))
    assert.are.equal("jrpc.mcp.server: tasks.notify must be a boolean", raised(function() server{ notify = 1 } end))
    assert.are.equal('tool t: task_support must be "forbidden", "optional" or "required"', raised(function()
      server():tool{ name = "t", description = "d", task_support = "always", handler = print }
    end))
  end)
end)

describe("jrpc.mcp tasks in the legacy era", function()
  it("lists no execution, refuses a required tool with -32021, knows no tasks/* (everything_server on stdio)", function()
    local lines = {
      '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},'
        .. '"clientInfo":{"name":"t","version":"1"}}}',
      '{"jsonrpc":"2.0","method":"notifications/initialized"}',
      '{"jsonrpc":"2.0","id":2,"method":"tools/list"}',
      '{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"failing_job","arguments":{}}}',
      '{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"slow_compute","arguments":{"seconds":0}}}',
      '{"jsonrpc":"2.0","id":5,"method":"tasks/get","params":{"taskId":"x"}}' }
    local input = os.tmpname()
    local f = assert(io.open(input, "w"))
    f:write(table.concat(lines, "\n"), "\n")
    f:close()
    local status, out = S.shell(("%s examples/mcp/everything_server.lua < %s"):format(S.INTERP, input))
    os.remove(input)
    assert.are.equal(0, status)
    local got = {}
    for line in out:gmatch("[^\n]+") do
      local msg = jrpc.decode(line)
      got[msg.id] = msg
    end
    assert.is_nil(got[1].result.capabilities.extensions)
    local with_execution = {}
    for _, t in ipairs(got[2].result.tools) do
      if t.execution ~= nil then with_execution[#with_execution + 1] = t.name end
    end
    assert.are.same({}, with_execution)
    assert.are.same({ code = -32021, message = "Missing required client capability",
      data = { requiredCapabilities = { extensions = { [EXT] = {} } } } }, got[3].error)
    assert.are.same({ content = { { type = "text", text = "Computed result after 0 s" } } }, got[4].result)
    assert.are.same({ code = -32601, message = "Method not found" }, got[5].error)
  end)
end)

describe("jrpc.mcp.task_store.memory", function()
  it("keeps records until their TTL, merges updates (null removes), refuses past max_tasks", function()
    local now = 100
    local store = task_store.memory{ max_tasks = 2, clock = function() return now end }
    assert.is_true(store:put("a", { status = "working", n = 1 }, 1000))
    assert.is_true(store:put("b", { status = "working" }, 5000))
    assert.are.same({ nil, "full" }, { store:put("c", { status = "working" }, 1000) })
    assert.are.same({ { status = "completed", n = 1, result = "r" }, true },
      { store:update("a", { status = "completed", result = "r" }, { working = true }) })
    assert.are.same({ { status = "completed", n = 1, result = "r" }, false },
      { store:update("a", { status = "cancelled" }, { working = true }) })
    assert.are.same({ status = "completed", n = 1 }, (store:update("a", { result = jrpc.null })))
    assert.are.same({ "a", "b" }, store:list())
    now = 101  -- a's second is over
    assert.is_nil(store:get("a"))
    assert.is_nil(store:update("a", { n = 2 }))
    assert.is_true(store:put("c", { status = "working" }, 1000))
    store:delete("b")
    assert.are.same({ "c" }, store:list())
    assert.has_error(function() task_store.memory{ max_task = 1 } end,
      "task_store.memory: unknown option 'max_task' (did you mean 'max_tasks'?)")
  end)
end)
