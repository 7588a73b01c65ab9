-- bench/dkjson_loop.lua: the same loop as bench/cjson_loop.lua with dkjson
-- (pure Lua). make(handlers) -> step(line) -> reply line or nil.
local json = require("dkjson")

local decode, encode, null = json.decode, json.encode, json.null

local function reply_error(id, code, message)
  return encode{jsonrpc = "2.0", error = {code = code, message = message}, id = id} .. "\n"
end

return function(handlers)
  return function(line)
    local m = decode(line, 1, null)
    if m == nil then return reply_error(null, -32700, "Parse error") end
    if type(m) ~= "table" or m.jsonrpc ~= "2.0" or type(m.method) ~= "string" then
      return reply_error(null, -32600, "Invalid Request")
    end
    local id = m.id
    local handler = handlers[m.method]
    if handler == nil then
      if id == nil then return nil end
      return reply_error(id, -32601, "Method not found")
    end
    local hok, r = pcall(handler, m.params)
    if id == nil then return nil end
    if not hok then return reply_error(id, -32603, "Internal error") end
    return encode{jsonrpc = "2.0", result = r, id = id} .. "\n"
  end
end
