--- A TCP client that never reads: connects to 127.0.0.1:PORT and sends
-- `echo` requests of about 1 KiB without end, as fast as the socket takes
-- them. For the fault specs (a peer that stops reading our replies).
--
--   lua5.4 spec/fault/flood.lua PORT
local uv = require "luv"

local port = assert(tonumber(arg[1]), "usage: flood.lua PORT")
local line = '{"jsonrpc":"2.0","method":"echo","params":["' .. string.rep("y", 1000) .. '"],"id":1}\n'
local block = string.rep(line, 16)

local tcp = uv.new_tcp()
local function pump()
  -- keep a little queued in our own process, no more
  while tcp:get_write_queue_size() < 64 * 1024 do
    if not tcp:write(block, function(err) if err then os.exit(1) end pump() end) then os.exit(1) end
  end
end
tcp:connect("127.0.0.1", port, function(err)
  if err then
    io.stderr:write("flood: ", err, "\n")
    os.exit(1)
  end
  pump()
end)
uv.run()
