--- The redirect of the OAuth flow back to a program on this machine
-- (RFC 8252 §7.3): an HTTP listener on 127.0.0.1 that takes the one
-- request the browser makes to the redirect URI and gives its URL to the
-- flow. For `jrpc mcp --http` and editors:
--
--     local lb = require("jrpc.mcp.oauth_loopback").new(loop, { on_url = print })
--     auth = { redirect_uri = lb.redirect_uri, authorize = lb.authorize }
--
-- The listener starts when the flow first asks for the redirect URI (a
-- server that needs no authorization never opens one) and stays until
-- `close()`. `authorize(url)` gives `url` to `on_url` (print it, open a
-- browser, show it in an editor), then waits in its coroutine for the
-- redirect; the browser gets a short page saying it may be closed.
local jrpc_http = require "jrpc.uv.http"
local options = require "jrpc.options"
local workers = require "jrpc.workers"
local timers = require "jrpc.uv.timers"

local M = {}

M.OPTIONS = options.set{ "port", "path", "on_url", "timeout" }
M.TIMEOUT = 300  -- seconds the user has to authorize

local PAGE = "<!doctype html><title>Authorized</title><p>The authorization is done: you may close this page."

--- A loopback redirect for `loop`. Options: `port` (default 0: a free
--- one; a client registered with a fixed redirect URI needs its port),
--- `path` (default "/callback"), `on_url(url)` (default: print it on
--- stderr), `timeout` (seconds to wait for the redirect, default 300).
---@param loop table
---@param opts? table
---@return table lb  `redirect_uri()`, `authorize(url)`, `close()`
function M.new(loop, opts)
  opts = options.check("jrpc.mcp.oauth_loopback", opts, 2, M.OPTIONS)
  local path = opts.path or "/callback"
  if type(path) ~= "string" or path:sub(1, 1) ~= "/" then
    error("jrpc.mcp.oauth_loopback: path must start with /", 2)
  end
  if opts.on_url ~= nil and type(opts.on_url) ~= "function" then
    error("jrpc.mcp.oauth_loopback: on_url must be a function", 2)
  end
  local self = { server = nil, waiter = nil, got = nil }

  local function handler(req, res)
    if req.method ~= "GET" or req.path ~= path then
      return res:send(404, { ["content-type"] = "text/plain" }, "not found\n")
    end
    res:send(200, { ["content-type"] = "text/html; charset=utf-8" }, PAGE)
    if self.got then return end
    self.got = "http://127.0.0.1:" .. self.server.port .. req.target
    local w = self.waiter
    self.waiter = nil
    if w then workers.wake(w, function() end, self.got) end
  end

  function self.redirect_uri()
    if not self.server then
      local server, err = jrpc_http.listen(loop, { host = "127.0.0.1", port = opts.port or 0, handler = handler })
      if not server then return nil, err and err.message end
      self.server = server
    end
    return "http://127.0.0.1:" .. self.server.port .. path
  end

  function self.authorize(url)
    if not self.server then self.redirect_uri() end
    self.got = nil
    local on_url = opts.on_url or function(u) io.stderr:write("Open this URL to authorize: ", u, "\n") end
    on_url(url)
    if self.got then return self.got end
    local me = workers.current() or error("jrpc.mcp.oauth_loopback: authorize waits in a coroutine", 2)
    self.waiter = me
    local timer = timers.after(loop.uv, opts.timeout or M.TIMEOUT, function()
      if self.waiter == me then
        self.waiter = nil
        workers.wake(me, function() end, nil)
      end
    end, "oauth loopback timeout")
    local _, got = workers.wait()
    timers.cancel(loop.uv, timer)
    if not got then return nil, "no redirect came back within " .. (opts.timeout or M.TIMEOUT) .. " s" end
    return got
  end

  function self.close()
    if self.server then self.server:close() end
    self.server = nil
  end

  return self
end

return M
