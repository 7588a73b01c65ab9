--- An events bus (see jrpc.mcp.events) on Redis pub/sub, so the change
-- notifications of one worker reach the listen streams held by every
-- other: a tool registered at run time (list_changed), a resource updated,
-- a task's status. Each worker PUBLISHes its events on one connection and
-- SUBSCRIBEs on a second to the channel `channel_prefix .. server name`;
-- a message is the JSON `{"origin": ID, "event": EVENT}`, where ID is
-- random per bus, so a worker skips its own (it delivered them already).
--
-- Pub/sub delivers at most once, to those subscribed at that moment: a
-- worker whose subscription is down (Redis restarting, the network) misses
-- what is published meanwhile, and an event published while Redis cannot
-- be reached waits in a bounded queue (max_queue, then dropped and
-- reported) for the next connection. The subscription is checked with a
-- PING every `ping_s` and made again `retry_s` after a failure.
-- Everything runs on the luv loop in coroutines of the bus's own;
-- `publish` only queues.
local core = require "jrpc.core"
local options = require "jrpc.options"
local workers = require "jrpc.workers"
local redis = require "jrpc.redis"

local M = {}

--- The names `events_redis.new{...}` takes: jrpc.redis.connect's and these.
M.OPTIONS = options.set({ "channel_prefix", "max_queue", "retry_s", "ping_s" }, redis.OPTIONS)

--- Defaults: the channel is `channel_prefix .. server name`; at most 1000
--- events wait for Redis; a failed connection is made again after 1 s;
--- the subscription is checked every 5 s.
M.DEFAULTS = { channel_prefix = "jrpc:mcp:events:", max_queue = 1000, retry_s = 1, ping_s = 5 }

local Bus = {}
Bus.__index = Bus

local function hex(s)
  return (s:gsub(".", function(c) return ("%02x"):format(c:byte()) end))
end

local function positive(v) return type(v) == "number" and v > 0 end

--- A bus in the Redis at `{host = "127.0.0.1", port = 6379, timeout = 5,
--- on_error? (fault reports, else stderr), channel_prefix?, max_queue?,
--- retry_s?, ping_s?}`, for the server option `events`. It connects once
--- the server starts it, on the luv loop.
---@param opts? table
---@return table bus
function M.new(opts)
  opts = options.check("events_redis.new", opts, 3, M.OPTIONS)
  local prefix = opts.channel_prefix or M.DEFAULTS.channel_prefix
  if type(prefix) ~= "string" then error("events_redis.new: channel_prefix must be a string", 2) end
  local max = opts.max_queue or M.DEFAULTS.max_queue
  if type(max) ~= "number" or max < 1 or max % 1 ~= 0 then
    error("events_redis.new: max_queue must be an integer >= 1", 2)
  end
  for _, name in ipairs{ "retry_s", "ping_s" } do
    if opts[name] ~= nil and not positive(opts[name]) then
      error("events_redis.new: " .. name .. " must be a number > 0", 2)
    end
  end
  local conn_opts = {}
  for name in pairs(redis.OPTIONS) do conn_opts[name] = opts[name] end
  return setmetatable({ conn_opts = conn_opts, prefix = prefix, max = max, on_error = opts.on_error,
    retry_s = opts.retry_s or M.DEFAULTS.retry_s, ping_s = opts.ping_s or M.DEFAULTS.ping_s,
    origin = hex(assert(core.random_bytes(8))), queue = {}, first = 1, last = 0, queued = {},
    publishing = false, closed = false, subscribed = false }, Bus)
end

local function report(self, msg)
  msg = "jrpc.mcp.events_redis: " .. msg
  if self.on_error then pcall(self.on_error, msg) else io.stderr:write(msg, "\n") end
end

-- Run `fn(co)` in a coroutine of its own; what it raises is reported.
local function spawn(self, fn)
  local co
  co = coroutine.create(function()
    local ok, err = pcall(fn, co)
    if not ok then report(self, tostring(err)) end
  end)
  local ok, err = coroutine.resume(co)
  if not ok then report(self, tostring(err)) end
end

-- Wait `seconds` in coroutine `co` (a timer that keeps no loop running).
local function sleep(self, co, seconds)
  local uv = require "luv"
  workers.await(co, function(msg) report(self, msg) end, function(done)
    local t = uv.new_timer()
    t:start(math.floor(seconds * 1000), 0, function()
      t:close()
      done(nil, true)
    end)
    t:unref()
  end)
end

-- A message from the channel: another worker's event, delivered here.
local function received(self, payload)
  local ok, msg = pcall(core.decode, payload)
  if not ok or type(msg) ~= "table" or type(msg.origin) ~= "string" then
    report(self, "not an event message: " .. tostring(payload):sub(1, 80))
    return
  end
  if msg.origin == self.origin then return end  -- ours: delivered when published
  if not self.deliver(msg.event) then report(self, "an event of unknown shape was ignored") end
end

-- Subscribe, and stay subscribed: PING every ping_s, again after a failure.
local function subscriber(self, co)
  local down = false  -- report a failure once, not every retry
  while not self.closed do
    local conn, err = redis.connect(self.conn_opts)
    if conn then
      self.sub = conn
      local ok
      ok, err = conn:subscribe(self.channel, function(_, payload) received(self, payload) end)
      if ok then
        if down then report(self, "subscribed again to " .. self.channel) end
        down, self.subscribed = false, true
        while not self.closed do
          sleep(self, co, self.ping_s)
          if self.closed then break end
          local _, perr = conn:call("PING")
          if perr then err = perr; break end
        end
      end
      self.subscribed = false
      conn:close()
    end
    if self.closed then break end
    if not down then report(self, "not subscribed to " .. self.channel .. ": " .. tostring(err and err.message)) end
    down = true
    sleep(self, co, self.retry_s)
  end
end

-- Send the queued events in order; connect (again) when needed.
local function publisher(self, co)
  local down = false
  while self.first <= self.last and not self.closed do
    local conn = self.pub
    if conn == nil or conn:failure() then
      local err
      conn, err = redis.connect(self.conn_opts)
      self.pub = conn
      if not conn then
        if not down then report(self, "cannot publish: " .. tostring(err.message)) end
        down = true
        sleep(self, co, self.retry_s)
      end
    end
    if conn then
      down = false
      local text = self.queue[self.first]
      self.queue[self.first], self.queued[text] = nil, nil
      self.first = self.first + 1
      -- sent once: a PUBLISH that fails is reported, not repeated (Redis may
      -- have carried it; listeners would hear it twice)
      local _, err = conn:call("PUBLISH", self.channel, text)
      if err then report(self, "an event was not published: " .. tostring(err.message)) end
    end
  end
  self.publishing = false
end

--- (jrpc.mcp.events) Called by the server: subscribe to its channel.
---@param deliver fun(event: table): boolean
---@param name string  the server's name
function Bus:start(deliver, name)
  if self.deliver then error("events_redis: this bus is already started (one server a bus)", 2) end
  self.deliver, self.channel = deliver, self.prefix .. name
  spawn(self, function(co) subscriber(self, co) end)
end

--- (jrpc.mcp.events) Queue `event` for the other workers. An event already
--- waiting in the queue is not queued twice (a burst of registrations
--- before Redis answers is one list_changed).
---@param event table
function Bus:publish(event)
  if not self.channel then error("events_redis: publish before start", 2) end
  if self.closed then return end
  local text = core.encode({ origin = self.origin, event = event })
  if self.queued[text] then return end
  if self.last - self.first + 1 >= self.max then
    report(self, ("queue full (%d events): an event was dropped"):format(self.max))
    return
  end
  self.last = self.last + 1
  self.queue[self.last], self.queued[text] = text, true
  if not self.publishing then
    self.publishing = true
    spawn(self, function(co) publisher(self, co) end)
  end
end

--- True while the subscription is up (events of other workers arrive).
---@return boolean
function Bus:is_subscribed()
  return self.subscribed
end

--- Stop: close both connections; queued events are dropped.
function Bus:close()
  self.closed = true
  if self.sub then self.sub:close() end
  if self.pub then self.pub:close() end
end

return M
