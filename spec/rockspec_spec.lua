-- The rockspec installs every module under lua/, and only those: a module
-- left out works from a checkout and fails once installed with LuaRocks.
local function listed_modules()
  local f = assert(io.open("rockspec/jrpc-scm-1.rockspec"))
  local text = f:read("a")
  f:close()
  local listed = {}
  for name, path in text:gmatch('%["(jrpc[%w_.]*)"%]%s*=%s*"(lua/[^"]+%.lua)"') do
    listed[path] = name
  end
  return listed
end

local lua_files = dofile("spec/files.lua").lua_files

describe("rockspec", function()
  it("lists every module under lua/ under its own name", function()
    local listed = listed_modules()
    local missing, wrong = {}, {}
    for _, path in ipairs(lua_files("lua")) do
      local name = path:gsub("^lua/", ""):gsub("/init%.lua$", ""):gsub("%.lua$", ""):gsub("/", ".")
      if listed[path] == nil then
        missing[#missing + 1] = path
      elseif listed[path] ~= name then
        wrong[#wrong + 1] = path .. " as " .. listed[path]
      end
      listed[path] = nil
    end
    local extra = {}
    for path in pairs(listed) do extra[#extra + 1] = path end
    assert.are.same({ {}, {}, {} }, { missing, wrong, extra })
  end)
end)
