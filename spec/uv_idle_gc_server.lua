-- spec/uv_idle_gc_server.lua: a stdio server for spec/uv_idle_gc_spec.lua
-- (not a spec itself). It answers `subtract` and counts the receives during
-- which the heap shrank (a collection ran inside a request); `report`
-- answers {inside, steps}. Argument: "on" or "off" (the loop's idle_gc).
local dir = debug.getinfo(1, "S").source:match("^@(.*)[/\\][^/\\]*$") or "."
dofile(dir .. "/../examples/paths.lua")
local jrpc = require "jrpc"

local loop = jrpc.uv.new(require "luv")
local conn = assert(loop:stdio{})
local inside = 0
local receive = conn.peer.receive
conn.peer.receive = function(self, bytes)
  local before = collectgarbage("count")
  receive(self, bytes)
  if collectgarbage("count") < before then inside = inside + 1 end
end
-- like a handler that builds something: about 600 bytes of garbage a request
local function litter()
  local t = {}
  for i = 1, 8 do t[i] = { i } end
  return #t
end
conn.peer:method("subtract", function(p) return p[1] - p[2] + litter() - 8 end)
conn.peer:method("report", function() return jrpc.array{ inside, loop.gc_stats.steps } end)
-- polling before it sleeps, as the spec server does by default
loop:serve_forever{ idle_gc = arg[1] == "on", busy_poll = true }
