-- bench/count_pipelined.lua MODE N: N messages through one jrpc peer in
-- reads of 16, with a new id each, the way a pipelined client and server
-- see them (bench/instructions.sh runs it under callgrind).
--   server        16 `subtract` requests a read, for the declared handler of
--                 examples/spec_server.lua; the replies go to `send`
--   client        16 requests in flight with callbacks (peer:request), each
--                 read bringing the replies to the 16 oldest
--   client_co     the same from 16 coroutines, each waiting in peer:request
--                 and sending its next request when woken
--   server_input, client_input: only make those reads, to subtract
local here = debug.getinfo(1, "S").source:match("^@(.*)[/\\][^/\\]*$") or "."
local root = here .. "/.."
local abi = rawget(_G, "jit") and "jit" or "5.4"
package.path = root .. "/lua/?.lua;" .. root .. "/lua/?/init.lua;" .. package.path
package.cpath = root .. "/build/" .. abi .. "/?.so;" .. package.cpath

local mode, n = arg[1], tonumber(arg[2])
local PER_READ = 16
local REQUEST = '{"jsonrpc":"2.0","method":"subtract","params":[%d,%d],"id":%d}\n'
local REPLY = '{"jsonrpc":"2.0","result":%d,"id":%d}\n'

-- the read holding messages first .. first + PER_READ - 1
local parts = {}
local function read_of(first, text)
  for i = 1, PER_READ do
    local id = first + i - 1
    parts[i] = text == REQUEST and REQUEST:format(id * 3, id % 1000, id) or REPLY:format(id * 2, id)
  end
  return table.concat(parts)
end

local function run(feed, text)
  for first = 1, n, PER_READ do feed(read_of(first, text)) end
end

if mode == "server_input" or mode == "client_input" then
  run(function() end, mode == "server_input" and REQUEST or REPLY)
elseif mode == "server" then
  local jrpc = require "jrpc"
  local peer = jrpc.peer{ send = function() end }
  peer:method("subtract", function(p) return p.minuend - p.subtrahend end,
    jrpc.params{ "minuend:number", "subtrahend:number" })
  run(function(bytes) peer:receive(bytes) end, REQUEST)
elseif mode == "client" then
  local jrpc = require "jrpc"
  local peer = jrpc.peer{ send = function() end }
  local sent, got = 0, 0
  local send
  local function settled(err, result)
    if err or type(result) ~= "number" then error("bad reply") end
    got = got + 1
    if sent < n then send() end
  end
  function send()
    sent = sent + 1
    peer:request("subtract", { sent * 3, sent % 1000 }, nil, settled)
  end
  for _ = 1, PER_READ do send() end
  run(function(bytes) peer:receive(bytes) end, REPLY)
  if got ~= n then error(("%d of %d requests settled"):format(got, n)) end
elseif mode == "client_co" then
  local jrpc = require "jrpc"
  local peer = jrpc.peer{ send = function() end }
  local sent, got = 0, 0
  for _ = 1, PER_READ do
    coroutine.wrap(function()
      while sent < n do
        sent = sent + 1
        local result, err = peer:request("subtract", { sent * 3, sent % 1000 })
        if err or type(result) ~= "number" then error("bad reply") end
        got = got + 1
      end
    end)()
  end
  run(function(bytes) peer:receive(bytes) end, REPLY)
  if got ~= n then error(("%d of %d requests settled"):format(got, n)) end
else
  io.stderr:write("usage: count_pipelined.lua server|client|client_co|server_input|client_input N\n")
  os.exit(2)
end
