-- The public API: every public function carries LuaCATS annotations (a doc
-- comment and an ---@param for each parameter), and docs/api.md names
-- exactly the functions that exist, in the form a user writes them, so the
-- two cannot drift apart. Prints the count of annotated functions.
local files = dofile("spec/files.lua")

-- Where the public API lives: the file, the table that holds the functions
-- in it (a class or the module table M), and how docs/api.md writes a call.
local PUBLIC = {
  { file = "lua/jrpc/init.lua", holder = "M", call = "jrpc." },
  { file = "lua/jrpc/peer.lua", holder = "Peer", call = "peer:" },
  { file = "lua/jrpc/server.lua", holder = "Ctx", call = "ctx:" },
  { file = "lua/jrpc/stdio.lua", holder = "M", call = "jrpc.stdio." },
  { file = "lua/jrpc/uv.lua", holder = "Loop", call = "loop:" },
  { file = "lua/jrpc/uv.lua", holder = "M", call = "jrpc.uv." },
  { file = "lua/jrpc/connection.lua", holder = "Connection", call = "conn:" },
  { file = "lua/jrpc/uv/stream.lua", holder = "Connection", call = "conn:" },
  { file = "lua/jrpc/uv/process.lua", holder = "Child", call = "child:" },
  { file = "lua/jrpc/uv/net.lua", holder = "Server", call = "server:" },
  { file = "lua/jrpc/uv/http_client.lua", holder = "M", call = "http_client." },
  { file = "lua/jrpc/uv/http_client.lua", holder = "Client", call = "client:" },
  { file = "lua/jrpc/uv/http_client.lua", holder = "Stream", call = "stream:" },
  { file = "lua/jrpc/uv/http_client.lua", holder = "Sse", call = "sse:" },
  { file = "lua/jrpc/nvim.lua", holder = "M", call = "jrpc.nvim." },
  { file = "lua/jrpc/mcp.lua", holder = "M", call = "mcp." },
  { file = "lua/jrpc/mcp/server.lua", holder = "Server", call = "server:" },
  { file = "lua/jrpc/mcp/context.lua", holder = "Ctx", call = "ctx:" },
  { file = "lua/jrpc/mcp/tasks.lua", holder = "TaskCtx", call = "ctx:" },
  { file = "lua/jrpc/mcp/client.lua", holder = "M", call = "mcp_client." },
  { file = "lua/jrpc/mcp/client.lua", holder = "Client", call = "client:" },
  { file = "lua/jrpc/mcp/client_call.lua", holder = "Handle", call = "handle:" },
  { file = "lua/jrpc/mcp/client_listen.lua", holder = "Listen", call = "listen:" },
  { file = "lua/jrpc/socket.lua", holder = "Loop", call = "loop:" },
  { file = "lua/jrpc/socket.lua", holder = "M", call = "jrpc.socket." },
  { file = "lua/jrpc/socket/conn.lua", holder = "Connection", call = "conn:" },
  { file = "lua/jrpc/socket/net.lua", holder = "Server", call = "server:" },
}

-- The public functions defined in `text` on `holder`: name, params, the
-- doc comment block right above (a list of lines).
local function definitions(text, holder)
  local lines, found = {}, {}
  for l in (text .. "\n"):gmatch("(.-)\n") do lines[#lines + 1] = l end
  local pattern = "^function " .. holder .. "([.:])([%a][%w_]*)%(([^)]*)%)"
  for i, l in ipairs(lines) do
    local sep, name, params = l:match(pattern)
    if name then
      local doc, j = {}, i - 1
      while j > 0 and lines[j]:match("^%-%-%-") do table.insert(doc, 1, lines[j]); j = j - 1 end
      local list = {}
      for p in params:gmatch("[%w_]+") do list[#list + 1] = p end
      found[#found + 1] = { name = name, method = sep == ":", params = list, doc = doc, line = i }
    end
  end
  return found
end

local function has_param(doc, name)
  for _, l in ipairs(doc) do
    if l:match("^%-%-%-@param%s+" .. name .. "%??%s") or l:match("^%-%-%-@param%s+" .. name .. "%??$") then
      return true
    end
  end
  return false
end

local api = files.read("docs/api.md")

describe("the public API", function()
  local all = {}
  for _, where in ipairs(PUBLIC) do
    for _, def in ipairs(definitions(files.read(where.file), where.holder)) do
      def.where = where
      all[#all + 1] = def
    end
  end

  it("is annotated: a doc comment and an @param for every parameter", function()
    local missing = {}
    for _, def in ipairs(all) do
      local what = ("%s:%d %s%s"):format(def.where.file, def.line, def.where.call, def.name)
      if #def.doc == 0 then missing[#missing + 1] = what .. ": no doc comment" end
      for _, p in ipairs(def.params) do
        if not has_param(def.doc, p) then missing[#missing + 1] = what .. ": no @param " .. p end
      end
    end
    assert.same({}, missing)
    print(("api_doc: %d public functions, all annotated"):format(#all))
  end)

  it("is named in docs/api.md", function()
    local undocumented = {}
    for _, def in ipairs(all) do
      local call = def.where.call .. def.name
      if not api:find(call, 1, true) then undocumented[#undocumented + 1] = call end
    end
    assert.same({}, undocumented)
  end)

  it("has nothing in docs/api.md that does not exist", function()
    local exists = {}
    for _, def in ipairs(all) do exists[def.where.call .. def.name] = true end
    -- module values that are not functions defined with `function`
    for name in files.read("lua/jrpc/init.lua"):gmatch("\nM%.([%a][%w_]*) = ") do exists["jrpc." .. name] = true end
    exists["jrpc.lineread"] = true  -- a C module (src/io/lineread.c), named in "Memory"
    exists["jrpc.core_tls"] = true  -- a C module (src/core_tls.c), named in "Memory"
    exists["jrpc.resp"] = true  -- a C module (src/resp.c)
    -- values of the other module tables (mcp.protocol), and the Lua modules
    -- themselves, named as a user requires them (jrpc.socket, jrpc.uv.http_client)
    for _, where in ipairs(PUBLIC) do
      if where.holder == "M" then
        for name in files.read(where.file):gmatch("\nM%.([%a][%w_]*) = ") do exists[where.call .. name] = true end
      end
    end
    for _, file in ipairs(files.lua_files("lua/jrpc")) do
      exists[file:gsub("^lua/", ""):gsub("%.lua$", ""):gsub("/init$", ""):gsub("/", ".")] = true
      -- the LuaCATS classes (jrpc.Error), named where a function returns one
      for class in files.read(file):gmatch("\n%-%-%-@class ([%w_.]+)") do exists[class] = true end
    end
    local stale = {}
    for _, where in ipairs(PUBLIC) do
      local prefix = where.call:gsub("%p", "%%%0")
      for name in api:gmatch("`" .. prefix .. "([%a][%w_]*)") do
        local call = where.call .. name
        -- jrpc.stdio.x / jrpc.uv.x are listed under their own prefixes
        local nested = where.call == "jrpc." and (name == "stdio" or name == "uv" or name == "nvim")
        if not exists[call] and not nested then stale[#stale + 1] = call end
      end
    end
    table.sort(stale)
    assert.same({}, stale)
  end)
end)

describe("the C modules' declarations (types/jrpc/core.lua)", function()
  local meta = files.read("types/jrpc/core.lua")

  local function declared(holder, name)
    return meta:find("\nfunction " .. holder .. "[.:]" .. name .. "%(") ~= nil
      or meta:find("\n%-%-%-@field " .. name .. " ") ~= nil
  end

  it("declares every function and value the built modules export", function()
    local core = require "jrpc.core"
    local missing = {}
    local function check(holder, t)
      for name in pairs(t) do
        if not declared(holder, name) then missing[#missing + 1] = holder .. "." .. name end
      end
    end
    check("core", core)
    -- what core's table loads on first use (src/core.c): core.<name> as well
    check("core", require "jrpc.core_tls")
    check("Codec", getmetatable(core.codec()).__index)
    check("Pending", getmetatable(core.pending()).__index)
    check("Http", getmetatable(core.http_server()).__index)
    check("HttpClient", getmetatable(core.http_client()).__index)
    check("Tls", getmetatable(core.tls_client{ verify = false }).__index)
    check("lineread", require "jrpc.lineread")
    local resp = require "jrpc.resp"
    check("resp", resp)
    check("RespReader", getmetatable(resp.reader()).__index)
    table.sort(missing)
    assert.same({}, missing)
  end)
end)
