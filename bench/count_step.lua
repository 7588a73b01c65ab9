-- bench/count_step.lua IMPL MESSAGE N: feed one message N times to one
-- implementation of bench/run.lua (jrpc_loop, cjson_loop, dkjson_loop).
-- bench/instructions.sh runs it under callgrind: instructions do not depend
-- on what else the machine is doing, so their ratio is repeatable.
local here = debug.getinfo(1, "S").source:match("^@(.*)[/\\][^/\\]*$") or "."
local root = here .. "/.."
local abi = rawget(_G, "jit") and "jit" or "5.4"
package.path = root .. "/lua/?.lua;" .. root .. "/lua/?/init.lua;" .. package.path
package.cpath = root .. "/build/" .. abi .. "/?.so;" .. package.cpath

local messages = {
  positional = '{"jsonrpc":"2.0","method":"subtract","params":[42,23],"id":1}\n',
  named = '{"jsonrpc":"2.0","method":"subtract","params":{"minuend":42,"subtrahend":23},"id":3}\n',
}
-- declared: the positional message, for jrpc a handler behind a
-- jrpc.params declaration (checked, handed over named); the other loops
-- have no declarations and take it as positional
messages.declared = messages.positional
local impl, name, n = arg[1], arg[2], tonumber(arg[3])
local line = messages[name]
if not (impl and line and n) then
  io.stderr:write("usage: count_step.lua jrpc_loop|cjson_loop|dkjson_loop positional|named|declared N\n")
  os.exit(2)
end
local subtract = function(p)
  if p[1] ~= nil then return p[1] - p[2] end
  return p.minuend - p.subtrahend
end
if name == "declared" and impl == "jrpc_loop" then
  subtract = { fn = function(p) return p.minuend - p.subtrahend end,
    params = { "minuend:number", "subtrahend:number" } }
end
local step = dofile(here .. "/" .. impl .. ".lua")({ subtract = subtract })
for _ = 1, n do step(line) end
