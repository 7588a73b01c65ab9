-- jrpc.mcp.client and tasks (the 2026-07-28 extension), against
-- examples/mcp/everything_server.lua as a child process, over Streamable
-- HTTP on 127.0.0.1 and over stdio: start a task, poll it, take its
-- result, answer its questions, cancel it, and the errors; and against
-- @modelcontextprotocol/sdk 1.32.2's server (node/mcp_sdk1_task_server.js),
-- whose tasks are 2025-11-25's.
if dofile("spec/once.lua")(pending, "the MCP client's task calls in Lua; the codec's C paths are the other specs'", { "asan" }) then return end
local S = dofile("spec/uv_support.lua")
local mcp_client = require "jrpc.mcp.client"

local META = { ["io.modelcontextprotocol/serverInfo"] = { name = "jrpc-everything-server", version = "1.0.0" } }

local function everything_http()
  local log = { text = "" }
  assert(S.spawn{ cmd = S.INTERP, args = { "examples/mcp/everything_server.lua", "--http", "127.0.0.1:0" },
    stderr = function(chunk) log.text = log.text .. chunk end })
  local pattern = "listening on (http://127%.0%.0%.1:%d+/mcp)\n"
  assert(S.wait_until(function() return log.text:match(pattern) ~= nil end, 10), "did not start: " .. log.text)
  return log.text:match(pattern)
end

local asked
local function connect(transport, extra)
  asked = {}
  local opts = { on_elicitation = function(params)
    asked[#asked + 1] = params.message
    return { action = "accept", content = { confirm = true, name = "Ada" } }
  end }
  if transport == "http" then
    opts.url = everything_http()
  else
    opts.cmd, opts.args = S.INTERP, { "examples/mcp/everything_server.lua" }
  end
  for k, v in pairs(extra or {}) do opts[k] = v end
  return assert(mcp_client.connect(S.loop, opts))
end

-- A task as the wire carries it, its times checked and taken out.
local timeless = dofile("spec/task_times.lua")(assert)

for _, transport in ipairs{ "http", "stdio" } do
  describe("jrpc.mcp.client tasks over " .. transport, function()
    after_each(S.cleanup)

    it("starts a task, polls it and takes its result", function()
      S.run(function()
        local client = connect(transport)
        local task = assert(client:start_task("slow_compute", { seconds = 0.3, label = "spec" }))
        local id = task.taskId
        assert.are.same({ resultType = "task", taskId = id, status = "working", ttlMs = 3600000,
          pollIntervalMs = 200, _meta = META }, timeless(task))
        assert.are.same({ resultType = "complete", taskId = id, status = "working", ttlMs = 3600000,
          pollIntervalMs = 200, _meta = META }, timeless(assert(client:get_task(id))))
        assert.are.same({ resultType = "complete", content = { { type = "text", text = "Computed spec after 0.3 s" } } },
          assert(client:task_result(id)))
        local done = timeless(assert(client:get_task(id)))
        assert.are.equal("completed", done.status)
        -- a tool that is never a task answers at once
        assert.are.same({ resultType = "complete", _meta = META, content = { { type = "text", text = "Hello, Ada!" } } },
          assert(client:start_task("greet", { name = "Ada" })))
        client:close()
      end, 20)
    end)

    it("hears the task's status on a listen stream whose filter names it", function()
      S.run(function()
        local client = connect(transport)
        local task = assert(client:start_task("slow_compute", { seconds = 0.3, label = "heard" }))
        local other = assert(client:start_task("slow_compute", { seconds = 0.1, label = "not heard" }))
        local events = {}
        local listen = assert(client:listen({ taskIds = { task.taskId } }, function(method, params, meta)
          events[#events + 1] = { method, params, meta }
        end))
        local tagged = { ["io.modelcontextprotocol/subscriptionId"] = listen.id }
        assert.is_true(S.wait_until(function() return #events >= 2 end, 5))
        assert.are.same({ "notifications/subscriptions/acknowledged", { notifications = { taskIds = { task.taskId } } },
          tagged }, events[1])
        assert.are.equal("notifications/tasks", events[2][1])
        assert.are.same({ taskId = task.taskId, status = "completed", ttlMs = 3600000, pollIntervalMs = 200,
          result = { resultType = "complete", content = { { type = "text", text = "Computed heard after 0.3 s" } } } },
          timeless(events[2][2]))
        assert.are.same(tagged, events[2][3])
        assert.are.equal("completed", assert(client:get_task(other.taskId)).status)
        assert.are.equal(2, #events)
        listen:cancel()
        client:close()
      end, 20)
    end)

    it("answers a task's questions with the client's callbacks", function()
      S.run(function()
        local client = connect(transport)
        local task = assert(client:start_task("confirm_delete", { filename = "a.txt" }))
        assert.are.same({ resultType = "complete", content = { { type = "text", text = "Deleted a.txt" } } },
          assert(client:task_result(task.taskId, { poll_interval = 0.05 })))
        assert.are.same({ "Delete a.txt?" }, asked)
        task = assert(client:start_task("multi_input"))
        assert.are.same({ { type = "text", text = "Got 2 answers" } },
          assert(client:task_result(task.taskId, { poll_interval = 0.05 })).content)
        client:close()
      end, 20)
    end)

    it("cancels a task; a failed task gives its error; an unknown task is -32602", function()
      S.run(function()
        local client = connect(transport)
        local task = assert(client:start_task("slow_compute", { seconds = 30 }))
        assert.is_true(assert(client:cancel_task(task.taskId)))
        local result, err = client:task_result(task.taskId)
        assert.is_nil(result)
        assert.are.same({ "cancelled", "task " .. task.taskId .. " was cancelled" }, { err.code, err.message })
        task = assert(client:start_task("protocol_error_job"))
        result, err = client:task_result(task.taskId, { poll_interval = 0.05 })
        assert.is_nil(result)
        assert.are.same({ -32603, "protocol_error_job: internal failure" }, { err.code, err.message })
        result, err = client:get_task("no-such-task")
        assert.is_nil(result)
        assert.are.same({ -32602, "Invalid params: unknown task no-such-task" }, { err.code, err.message })
        task = assert(client:start_task("slow_compute", { seconds = 30 }))
        result, err = client:task_result(task.taskId, { poll_interval = 0.05, max_wait = 0.2 })
        assert.is_nil(result)
        assert.are.same({ "timeout", "task " .. task.taskId .. " still working after max_wait" },
          { err.code, err.message })
        client:cancel_task(task.taskId)
        client:close()
      end, 20)
    end)
  end)
end

describe("jrpc.mcp.client tasks", function()
  after_each(S.cleanup)

  it("checks task_result's options", function()
    S.run(function()
      local client = connect("http")
      local ok, msg = pcall(function() client:task_result("x", { poll = 1 }) end)
      assert.is_false(ok)
      assert.matches("^spec/mcp_client_tasks_spec%.lua:%d+: jrpc%.mcp%.client: task_result: unknown option 'poll'", msg)
      client:close()
    end, 20)
  end)

  -- @modelcontextprotocol/sdk 1.32.2's experimental tasks (2025-11-25):
  -- a `task` param on tools/call, tasks/get, tasks/result, tasks/cancel
  it("speaks 2025-11-25 tasks with @modelcontextprotocol/sdk 1.32.2's server over stdio", function()
    S.run(function()
      local client = assert(mcp_client.connect(S.loop, { cmd = "node", args = { "node/mcp_sdk1_task_server.js" } }))
      local task = assert(client:start_task("delay", { ms = 100 }))
      local id = task.taskId
      assert.matches("^%x+$", id)
      assert.matches("^%d%d%d%d%-%d%d%-%d%dT%d%d:%d%d:%d%d%.%d+Z$", task.createdAt)
      task.createdAt, task.lastUpdatedAt = nil, nil
      -- the legacy CreateTaskResult ({task = {..., ttl, pollInterval}}) in the shape of both eras
      assert.are.same({ resultType = "task", taskId = id, status = "working", ttlMs = S.null, pollIntervalMs = 50 },
        task)
      local got = assert(client:get_task(id))
      assert.are.same({ id, "working", 50 }, { got.taskId, got.status, got.pollInterval })
      local related = { ["io.modelcontextprotocol/related-task"] = { taskId = id } }
      assert.are.same({ content = { { type = "text", text = "Completed 100ms" } }, _meta = related },
        assert(client:task_result(id)))
      task = assert(client:start_task("broken"))
      assert.are.same({ isError = true, content = { { type = "text", text = "the job broke" } },
        _meta = { ["io.modelcontextprotocol/related-task"] = { taskId = task.taskId } } },
        assert(client:task_result(task.taskId)))
      task = assert(client:start_task("delay", { ms = 30000 }))
      assert.is_true(assert(client:cancel_task(task.taskId)))
      local result, err = client:task_result(task.taskId)
      assert.is_nil(result)
      assert.are.same({ "cancelled", "task " .. task.taskId .. " was cancelled" }, { err.code, err.message })
      client:close()
    end, 20)
  end)
end)
