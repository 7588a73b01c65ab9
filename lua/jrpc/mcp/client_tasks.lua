--- The client's side of tasks (the 2026-07-28 extension
-- `io.modelcontextprotocol/tasks`, and the experimental core tasks of
-- 2025-11-25): waiting for a task to end. `tasks/get`
-- every poll interval (the server's `pollIntervalMs`, unless the caller
-- chose one), the task's questions answered with the client's own
-- elicitation/sampling/roots callbacks through `tasks/update`, until it
-- completes (its result), fails (its error) or is cancelled; in 2025-11-25
-- `tasks/result` then gives the outcome. Starting,
-- getting, updating and cancelling are plain calls (client.lua) whose
-- requests declare the extension (client_call.lua's option `task`).
local errors = require "jrpc.errors"
local options = require "jrpc.options"
local calls = require "jrpc.mcp.client_call"
local input = require "jrpc.mcp.client_input"

local M = {}

--- The names `client:task_result` takes: the call options of each request,
--- `poll_interval` (seconds; default the server's pollIntervalMs, else 1)
--- and `max_wait` (seconds in all; default none: the task's TTL bounds it).
M.OPTIONS = options.set({ "poll_interval", "max_wait" }, calls.OPTIONS)

local DEFAULT_POLL = 1

-- Wait `seconds` on the client's transport, in the running coroutine.
local function sleep(client, seconds)
  local transport = client:transport()
  calls.await(function(msg) client:log(msg) end, function(done)
    transport:after(seconds, function() done(nil, true) end)
  end)
end

-- The answers to a task's `inputRequests`, or nil and the error.
local function answer_all(client, requests)
  local responses = {}
  for key, req in pairs(requests) do
    if type(req) ~= "table" or type(req.method) ~= "string" then
      return nil, errors.new("invalid_result", "input request " .. tostring(key) .. " has no method")
    end
    local answer, err = input.answer(input.of(client), req.method, req.params)
    if not answer then return nil, err end
    responses[key] = answer
  end
  return responses
end

-- A failed task's error as a jrpc.Error: the server's, or "invalid_result"
-- when it sent none that has the JSON-RPC error's shape.
local function task_error(e)
  if type(e) ~= "table" then return errors.new("invalid_result", "the task failed with no error") end
  local code = e.code
  if not errors.is_wire_error(e) then code = "invalid_result" end
  return errors.new(code, type(e.message) == "string" and e.message or "the task failed", e.data)
end

--- Wait for task `id` to end: its result when it completes, or nil and an
--- error: the task's own error (failed), code "cancelled" (cancelled),
--- "timeout" (past `opts.max_wait`), or a request's error (an unknown or
--- expired task is -32602). `request(method, params)` sends one request
--- that declares the extension; `legacy`: the server speaks 2025-11-25.
---@param client table
---@param id string
---@param opts table  checked M.OPTIONS
---@param request fun(method: string, params: table): table|nil, jrpc.Error|nil
---@return table|nil result
---@return jrpc.Error|nil err
function M.wait(client, id, opts, request, legacy)
  local transport = client:transport()
  local deadline = opts.max_wait and transport:now() + opts.max_wait
  while true do
    local task, err = request("tasks/get", { taskId = id })
    if not task then return nil, err end
    local status = task.status
    -- 2025-11-25: tasks/result gives the outcome (its result or its error)
    -- once the task is past working, and carries the server's questions
    -- (answered by the client's callbacks, as any legacy request)
    if legacy and status ~= "working" then
      if status == "cancelled" then return nil, errors.cancelled("task " .. id .. " was cancelled") end
      return request("tasks/result", { taskId = id })
    end
    if status == "completed" then return task.result end
    if status == "failed" then return nil, task_error(task.error) end
    if status == "cancelled" then return nil, errors.cancelled("task " .. id .. " was cancelled") end
    if status == "input_required" and type(task.inputRequests) == "table" then
      local responses, aerr = answer_all(client, task.inputRequests)
      if not responses then return nil, aerr end
      local _, uerr = request("tasks/update", { taskId = id, inputResponses = responses })
      if uerr then return nil, uerr end
    else
      local ms = task.pollIntervalMs or task.pollInterval  -- 2025-11-25 names it pollInterval
      local wait = opts.poll_interval or (type(ms) == "number" and ms / 1000) or DEFAULT_POLL
      if deadline then
        local left = deadline - transport:now()
        if left <= 0 then return nil, errors.new("timeout", ("task %s still %s after max_wait"):format(id,
          tostring(status))) end
        wait = math.min(wait, left)
      end
      sleep(client, wait)
    end
  end
end

return M
