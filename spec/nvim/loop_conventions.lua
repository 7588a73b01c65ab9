-- Run inside `nvim --clean --headless` with the repository on runtimepath
-- (see spec/nvim/headless_test.lua): peers made through jrpc.nvim.loop()
-- follow Neovim's JSON conventions without being asked (null is vim.NIL,
-- vim.empty_dict() is {}, an empty table []), over real pipes and real
-- loopback sockets; an explicit option wins; loop{ conventions = false }
-- is jrpc's own context. Writes "key<TAB>value" lines to $JRPC_NVIM_OUT
-- and quits.
local out = assert(os.getenv("JRPC_NVIM_OUT"), "JRPC_NVIM_OUT not set")
local lines = {}
local function put(k, v) lines[#lines + 1] = k .. "\t" .. tostring(v):gsub("\n", "\\n") end

local jnvim = require "jrpc.nvim"
local core = require "jrpc.core"
local jrpc = require "jrpc"
local DICT = getmetatable(vim.empty_dict())

-- What a decoded value is, as text: "NIL" (vim.NIL), "null" (jrpc.null),
-- "dict" (vim.empty_dict()), "array" (jrpc's array), "plain" (no marker).
local function kind(v)
  if v == vim.NIL then return "NIL" end
  if v == core.null then return "null" end
  if type(v) ~= "table" then return type(v) end
  local mt = getmetatable(v)
  return mt == DICT and "dict" or mt == core.array_mt and "array" or mt == nil and "plain" or "other"
end
local function kinds(list)
  local t = {}
  for i = 1, #list do t[i] = kind(list[i]) end
  return table.concat(t, " ")
end

-- A child over real pipes that writes the request line it reads on its
-- stderr (captured by default) and answers it with the JSON text $REPLY.
local ANSWER = 'IFS= read -r line; printf "%s\\n" "$line" >&2; '
  .. 'id=$(printf "%s" "$line" | sed "s/.*\\"id\\":\\([0-9]*\\).*/\\1/"); '
  .. 'printf "{\\"jsonrpc\\":\\"2.0\\",\\"id\\":%s,\\"result\\":%s}\\n" "$id" "$REPLY"; cat >/dev/null'

local REPLY = '[null,{},[],{"a":null},{"b":{}}]'

local done = false
coroutine.wrap(function()
  local ok, err = pcall(function()
    local loop = jnvim.loop()
    local plain = jnvim.loop{ conventions = false }
    put("same_view", loop == jnvim.loop())
    put("plain_is_context", plain == jrpc.uv.new(jnvim.uv()))
    put("same_uv", loop.uv == plain.uv and loop.uv == jnvim.uv())

    -- spawn: what went out, and what came back
    local child = assert(loop:spawn{ cmd = "sh", args = { "-c", ANSWER }, env = { "REPLY=" .. REPLY,
      "PATH=" .. os.getenv("PATH") } })
    local r = assert(child.peer:request("show", { vim.empty_dict(), {}, vim.NIL, { a = {} }, { b = vim.empty_dict() } },
      { timeout = 10 }))
    child:shutdown()
    put("spawn_sent", (child:stderr_text():gsub("\n$", "")))
    put("spawn_kinds", kinds(r) .. " " .. kind(r[4].a) .. " " .. kind(r[5].b))
    put("spawn_vim_json", vim.json.encode(r))
    put("spawn_deep_equal", vim.deep_equal(r, vim.json.decode(REPLY)))

    -- an explicit option wins: jrpc's null and jrpc's empty tables
    local own = assert(loop:spawn{ cmd = "sh", args = { "-c", ANSWER }, env = { "REPLY=" .. REPLY,
      "PATH=" .. os.getenv("PATH") }, null = core.null, empty_dict = false })
    local r2 = assert(own.peer:request("show", { {}, jrpc.array(), { a = {} } }, { timeout = 10 }))
    own:shutdown()
    put("explicit_sent", (own:stderr_text():gsub("\n$", "")))
    put("explicit_kinds", kinds(r2) .. " " .. kind(r2[4].a) .. " " .. kind(r2[5].b))

    -- a peer of profile "mcp" (jrpc.mcp.client's) keeps jrpc's conventions
    local mcp = assert(loop:spawn{ cmd = "sh", args = { "-c", ANSWER }, env = { "REPLY=" .. REPLY,
      "PATH=" .. os.getenv("PATH") }, profile = "mcp" })
    local r3 = assert(mcp.peer:request("show", { {} }, { timeout = 10 }))
    mcp:shutdown()
    put("mcp_sent", (mcp:stderr_text():gsub("\n$", "")))
    put("mcp_kinds", kinds(r3))

    -- listen through the view: the server's handlers see Neovim's values;
    -- its client is a peer with jrpc's conventions (the plain context)
    local seen
    local server = assert(loop:listen{ host = "127.0.0.1", port = 0, methods = {
      probe = function(p)
        seen = kinds(p)
        return { p[2], {}, vim.NIL, vim.empty_dict() }
      end } })
    local conn = assert(plain:connect{ host = "127.0.0.1", port = server.port })
    local r4 = assert(conn.peer:request("probe", { core.null, jrpc.object(), jrpc.array(), {} }, { timeout = 10 }))
    put("listen_params", seen)
    put("listen_result", core.encode(r4))
    conn:close()
    server:close()

    -- connect through the view, to a server with jrpc's conventions
    local server2 = assert(plain:listen{ host = "127.0.0.1", port = 0, methods = {
      wire = function(p) return core.encode(p) end,
      give = function() return core.raw_json(REPLY) end } })
    local conn2 = assert(loop:connect{ host = "127.0.0.1", port = server2.port })
    put("connect_sent", conn2.peer:request("wire", { {}, vim.empty_dict(), vim.NIL, { x = {} } }, { timeout = 10 }))
    local r5 = assert(conn2.peer:request("give", nil, { timeout = 10 }))
    put("connect_kinds", kinds(r5) .. " " .. kind(r5[4].a) .. " " .. kind(r5[5].b))
    put("connect_vim_json", vim.json.encode(r5))
    conn2:close()
    server2:close()

    -- misuse is reported as for jrpc.uv's own options
    put("bad_name", select(2, pcall(jnvim.loop, { conventons = false })))
    put("bad_value", select(2, pcall(jnvim.loop, { conventions = "no" })))
    put("bad_spawn", select(2, pcall(loop.spawn, loop, "sh")))
    put("bad_conventions", select(2, pcall(jnvim.conventions, "sh")))
  end)
  if not ok then put("error", err) end
  done = true
end)()

local finished = vim.wait(20000, function() return done end, 10)
put("finished", finished)
vim.fn.writefile(lines, out)
vim.cmd(finished and "qall!" or "cquit! 3")
