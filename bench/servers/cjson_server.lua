-- bench/servers/cjson_server.lua: a JSON-RPC server on stdin/stdout as a Lua
-- user writes it with lua-cjson: one line, decode, answer, write, flush.
-- The baseline of bench/pipe.lua. Answers `subtract` with params [a, b].
--
--   lua5.4 bench/servers/cjson_server.lua

local cjson = require "cjson"

local decode, encode, null = cjson.decode, cjson.encode, cjson.null

local handlers = {
  subtract = function(p) return p[1] - p[2] end,
}

local function reply_error(id, code, message)
  return encode{jsonrpc = "2.0", error = {code = code, message = message}, id = id}
end

local function answer(line)
  local ok, m = pcall(decode, line)
  if not ok or type(m) ~= "table" then return reply_error(null, -32700, "Parse error") end
  local handler = handlers[m.method]
  if handler == nil then return reply_error(m.id, -32601, "Method not found") end
  local hok, r = pcall(handler, m.params)
  if not hok then return reply_error(m.id, -32603, "Internal error") end
  return encode{jsonrpc = "2.0", result = r, id = m.id}
end

for line in io.lines() do
  io.write(answer(line), "\n")
  io.flush()
end
