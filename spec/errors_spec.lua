-- Every local error code is listed once, in jrpc.errors.LOCAL_CODES and in
-- docs/errors.md, and the code uses no other.
local errors = require "jrpc.errors"
local files = dofile("spec/files.lua")
local read = files.read

describe("local error codes", function()
  it("every code made in lua/jrpc is listed in LOCAL_CODES", function()
    local unlisted = {}
    for _, path in ipairs(files.lua_files("lua/jrpc")) do
      for code in read(path):gmatch('errors%.new%("([%w_]+)"') do
        if not errors.LOCAL_CODES[code] then unlisted[#unlisted + 1] = path .. ": " .. code end
      end
    end
    assert.same({}, unlisted)
  end)

  it("docs/errors.md lists exactly LOCAL_CODES", function()
    local doc, listed = read("docs/errors.md"), {}
    for code in doc:gmatch("\n| `([%w_]+)` |") do listed[code] = true end
    local missing, extra = {}, {}
    for code in pairs(errors.LOCAL_CODES) do
      if not listed[code] then missing[#missing + 1] = code end
    end
    for code in pairs(listed) do
      if not errors.LOCAL_CODES[code] then extra[#extra + 1] = code end
    end
    table.sort(missing)
    table.sort(extra)
    assert.same({}, missing)
    assert.same({}, extra)
  end)
end)
