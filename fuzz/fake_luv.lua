--- fake_luv.lua -- the part of luv that jrpc.uv.http uses, without sockets,
-- so the real HTTP server (jrpc.uv.http under jrpc.mcp.http) can be fed
-- bytes and its answers collected in-process (fuzz/mcp_host.lua; any spec).
--
-- `new()` gives a table to use as `loop.uv`. A listening handle gets
-- clients from `uv.connect(handle)`: `client:send(bytes)` is a read on the
-- server's side (`client.tcp.paused` is true while the server stopped
-- reading it), `client:eof()` the client hanging up, `client.out` what the
-- server wrote, `client.closed` true once the server closed. Timers run
-- only when told: `uv.fire()` runs all (`uv.timers()` lists those started
-- and not closed).
--
-- Handles are tables, not userdata: jrpc.uv.handles then closes them at
-- once (as it does jrpc.uv.files ends), so nothing waits for a loop run.
local M = {}

local Handle = {}
Handle.__index = Handle

function Handle:is_closing() return self.closing == true end

function Handle:close(cb)
  self.closing = true
  if self.client then self.client.closed = true end
  if cb then cb() end
end

-- timers
function Handle:start(ms, rep, cb) self.ms, self.rep, self.cb = ms, rep, cb; return true end
function Handle:stop() self.cb = nil; return true end
function Handle:unref() self.unrefd = true end

-- listening side
function Handle:bind(host, port) self.host, self.port = host, port; return true end
function Handle:listen(_, cb) self.on_connection = cb; return true end
function Handle:getsockname() return { ip = self.host, port = self.port ~= 0 and self.port or 8080 } end

function Handle:accept(tcp)
  local client = table.remove(self.pending, 1)
  if client == nil then return false end
  tcp.client, client.tcp = client, tcp
  return true
end

-- connected side
function Handle.nodelay() return true end
function Handle:read_start(cb) self.on_read, self.paused = cb, false; return true end
-- the fake still delivers what a client sends; `paused` tells a test the
-- server asked to read no more
function Handle:read_stop() self.paused = true; return true end

function Handle:write(bytes)
  if self.closing then return nil, "EPIPE" end
  local c = self.client
  c.out = c.out .. bytes
  return true
end

function Handle.get_write_queue_size() return 0 end

function Handle.shutdown(_, cb)
  if cb then cb() end
  return true
end

local Client = {}
Client.__index = Client

--- Deliver `bytes` to the server as one read (nothing once it closed).
function Client:send(bytes)
  if self.closed or not self.tcp or not self.tcp.on_read then return false end
  self.tcp.on_read(nil, bytes)
  return true
end

--- The client hangs up (a read of nil, as luv reports EOF).
function Client:eof()
  if self.closed or not self.tcp or not self.tcp.on_read then return end
  self.tcp.on_read(nil, nil)
end

--- A fresh fake luv.
function M.new()
  local uv = { started = {} }

  function uv.new_tcp()
    return setmetatable({ pending = {} }, Handle)
  end

  function uv.new_timer()
    local t = setmetatable({}, Handle)
    uv.started[#uv.started + 1] = t
    return t
  end

  function uv.update_time() end
  function uv.now() return 0 end

  --- A client connecting to the listening `handle` (accepted at once).
  function uv.connect(handle)
    local client = setmetatable({ out = "", closed = false }, Client)
    handle.pending[#handle.pending + 1] = client
    handle.on_connection(nil)
    return client
  end

  --- Run every timer started and not closed (time jumps past them all).
  function uv.fire()
    for _, t in ipairs(uv.timers()) do
      local cb = t.cb
      if t.rep == 0 or t.rep == nil then t.cb = nil end
      cb()
    end
  end

  --- The live timers that keep a loop running (not unref'd: a legacy
  --- session's idle timer outlives its connections on purpose).
  function uv.ref_timers()
    local live = {}
    for _, t in ipairs(uv.timers()) do
      if not t.unrefd then live[#live + 1] = t end
    end
    return live
  end

  function uv.timers()
    local live = {}
    for _, t in ipairs(uv.started) do
      if not t.closing and t.cb then live[#live + 1] = t end
    end
    return live
  end

  return uv
end

return M
