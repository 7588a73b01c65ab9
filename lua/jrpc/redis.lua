--- A small Redis client on the luv loop, for what jrpc keeps in Redis (MCP
-- task records shared by workers: jrpc.mcp.task_store_redis). One TCP
-- connection, commands pipelined in order, each answered in order (RESP2).
-- A command waits like a blocking call inside a coroutine (jrpc's wait,
-- so any jrpc handler or loop:run function may call it) and returns the
-- reply, or nil and a jrpc.Error: code "redis" for the server's error
-- reply (its text as the message), "timeout", "closed", "connect".
--
-- Replies are read by jrpc.resp (the C module on Debian's hiredis, whose
-- reader does no I/O), so any split of the stream reads the same.
local errors = require "jrpc.errors"
local options = require "jrpc.options"
local resp = require "jrpc.resp"
local workers = require "jrpc.workers"

local M = {}

--- The names `redis.connect` takes.
M.OPTIONS = options.set{ "host", "port", "timeout", "on_error" }

--- Defaults: Redis's own port on loopback; 5 s for a reply.
M.DEFAULTS = { host = "127.0.0.1", port = 6379, timeout = 5 }

--- JSON-free nil reply marker: a nil bulk string or array.
M.NIL = setmetatable({}, { __tostring = function() return "redis.NIL" end })

-- {======================================================================
-- RESP2: commands out, replies in (jrpc.resp, on hiredis)
-- =======================================================================

--- A command as RESP (an array of bulk strings): every argument a string
--- or a number (an integer value as its digits). Raises for other values.
---@param args table
---@return string
function M.encode(args)
  return resp.command(args)
end

--- A reader of replies (jrpc.resp's, sans-I/O): `reader:feed(bytes)`, then
--- `reader:next()` for each complete reply: a string, an integer, a list,
--- redis.NIL, or `{err = text}` for an error reply; nothing while no reply
--- is complete; nil and a message for bytes that are no RESP (for good).
---@return userdata
function M.reader()
  return resp.reader{ nil_value = M.NIL }
end

-- }======================================================================

-- {======================================================================
-- The connection
-- =======================================================================

---@class jrpc.Redis
local Conn = {}
Conn.__index = Conn

-- Settle every waiting command with `err`, and refuse later ones.
local function fail_all(self, err)
  self.failed = self.failed or err
  local waiting, first, last = self.waiting, self.first, self.last
  self.waiting, self.first = {}, last + 1
  for i = first, last do
    if waiting[i] then waiting[i](err) end
  end
end

local function report(self, msg)
  if self.on_error then pcall(self.on_error, msg) else io.stderr:write("jrpc.redis: ", msg, "\n") end
end

-- Bytes from the server: each complete reply settles the oldest command.
-- Bytes that are no RESP end the connection: nothing after them can be
-- matched to a command.
local function on_bytes(self, data)
  local reader = self.reader
  reader:feed(data)
  while true do
    local reply, err = reader:next()
    if reply == nil then
      if err then
        report(self, "redis: " .. err)
        self:close()
      end
      return
    end
    -- a subscribed connection's pushes answer no command (Conn:subscribe)
    if self.on_message and type(reply) == "table" and reply[1] == "message" then
      local fine, perr = pcall(self.on_message, reply[2], reply[3])
      if not fine then report(self, "on_message: " .. tostring(perr)) end
    else
      local done = self.waiting[self.first]
      self.waiting[self.first] = nil
      self.first = self.first + 1
      if done then done(nil, reply) end
    end
  end
end

--- Connect to Redis: `{host = "127.0.0.1", port = 6379, timeout = 5 (seconds
--- a command may wait for its reply), on_error? (fault reports, else
--- stderr)}`. In a coroutine on the luv loop; returns the connection, or
--- nil and a jrpc.Error (code "connect").
---@param opts? table
---@return jrpc.Redis|nil conn
---@return jrpc.Error|nil err
function M.connect(opts)
  opts = options.check("jrpc.redis.connect", opts, 3, M.OPTIONS)
  local uv = require "luv"
  local co = workers.current() or error("jrpc.redis.connect: must be called in a coroutine", 2)
  local host, port = opts.host or M.DEFAULTS.host, opts.port or M.DEFAULTS.port
  local timeout = opts.timeout or M.DEFAULTS.timeout
  if type(timeout) ~= "number" or timeout <= 0 then error("jrpc.redis.connect: timeout must be a number > 0", 2) end
  local tcp = uv.new_tcp()
  local self = setmetatable({ uv = uv, tcp = tcp, reader = M.reader(), waiting = {}, first = 1, last = 0,
    timeout = timeout, on_error = opts.on_error }, Conn)
  local _, err = workers.await(co, function(msg) report(self, msg) end, function(done)
    local ok, req, why = pcall(tcp.connect, tcp, host, port, function(e) done(e, true) end)
    if not ok or req == nil then done(tostring(ok and why or req), nil) end
  end)
  if err then
    if not tcp:is_closing() then tcp:close() end
    return nil, errors.new("connect", ("redis %s:%d: %s"):format(host, port, tostring(err)))
  end
  -- the connection alone does not keep the loop running (a command's
  -- timer does, while it waits)
  tcp:unref()
  tcp:read_start(function(rerr, data)
    if rerr or not data then
      fail_all(self, errors.closed(rerr and ("redis: " .. tostring(rerr)) or "redis closed the connection"))
      self:close()
      return
    end
    local ok, perr = pcall(on_bytes, self, data)
    if not ok then report(self, tostring(perr)) end
  end)
  return self
end

--- Send one command (`conn:call("SET", key, value, "PX", 1000)`) and wait
--- for its reply: a string, a number, a list, redis.NIL, or nil and a
--- jrpc.Error (the server's error reply is code "redis").
---@return any reply
---@return jrpc.Error|nil err
function Conn:call(...)
  if self.failed then return nil, self.failed end
  local co = workers.current() or error("redis: call must be made in a coroutine", 2)
  local bytes = M.encode({ ... })
  local reply, err = workers.await(co, function(msg) report(self, msg) end, function(done)
    local slot = self.last + 1
    self.last = slot
    local timer
    local function settle(e, r)
      if timer then
        if not timer:is_closing() then timer:close() end
        timer = nil
      end
      done(e, r)
    end
    self.waiting[slot] = settle
    timer = self.uv.new_timer()
    timer:start(math.floor(self.timeout * 1000), 0, function()
      timer:close()
      timer = nil
      -- the reply may still come: its slot then settles nothing
      self.waiting[slot] = function() end
      done(errors.timeout(), nil)
    end)
    self.tcp:write(bytes)
  end)
  if err then return nil, err end
  if type(reply) == "table" and reply.err then return nil, errors.new("redis", reply.err) end
  return reply
end

--- Subscribe to `channel` (Redis pub/sub): `on_message(channel, payload)`
--- is called with every message published there from then on. Waits for
--- Redis's confirmation like `call`: true, or nil and a jrpc.Error. A
--- subscribed connection takes no other command but (P)SUBSCRIBE,
--- (P)UNSUBSCRIBE and PING (Redis's rule): use a connection of its own.
---@param channel string
---@param on_message fun(channel: string, payload: string)
---@return boolean|nil ok
---@return jrpc.Error|nil err
function Conn:subscribe(channel, on_message)
  if type(channel) ~= "string" or type(on_message) ~= "function" then
    error("redis: subscribe(channel, on_message)", 2)
  end
  self.on_message = on_message
  local _, err = self:call("SUBSCRIBE", channel)
  if err then return nil, err end
  return true
end

--- Why the connection no longer works (a jrpc.Error), or nil while it does.
---@return jrpc.Error|nil
function Conn:failure()
  return self.failed
end

--- Close the connection; commands still waiting end with code "closed".
function Conn:close()
  if not self.tcp:is_closing() then
    self.tcp:read_stop()
    self.tcp:close()
  end
  fail_all(self, errors.closed("redis connection closed"))
end

-- }======================================================================

return M
