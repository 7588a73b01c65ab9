-- bench/jrpc_loop.lua: the same loop through jrpc's peer: one message (with
-- its trailing "\n") per peer:receive call; replies arrive through `send`.
-- make(handlers) -> step(line) -> reply bytes or nil, replies() -> count.
-- A handler given as { fn = f, params = {...} } is registered behind that
-- jrpc.params declaration.
-- Raises {skip = why} while jrpc's Lua layer is not there yet.
local found, jrpc = pcall(require, "jrpc")
if not found then
  if tostring(jrpc):find("module 'jrpc' not found", 1, true) then
    error({skip = "jrpc's Lua layer (lua/jrpc/init.lua) not found"}, 0)
  end
  error(jrpc, 0)
end
if type(jrpc.peer) ~= "function" then
  error({skip = "jrpc.peer is not provided yet"}, 0)
end

return function(handlers)
  local out, count = nil, 0
  local peer = jrpc.peer{
    send = function(bytes)
      count = count + 1
      out = out and out .. bytes or bytes
    end,
  }
  for name, fn in pairs(handlers) do
    if type(fn) == "table" then  -- { fn = handler, params = declaration }
      peer:method(name, fn.fn, jrpc.params(fn.params))
    else
      peer:method(name, fn)
    end
  end
  local function step(line)
    out = nil
    peer:receive(line)
    return out
  end
  return step, function() return count end
end
