-- Undefined behaviour in the core that only the sanitizers see: each case
-- runs in a child interpreter (the one running the specs, with the same
-- package.cpath, so under `make test-asan` the child is the ASan/UBSan
-- lua5.4 loading build/asan). With a plain build the results happen to be
-- right and the cases pass; under UBSan the child stops at the first
-- report, and the case fails with the report as its message.
local is_jit = rawget(_G, "jit") ~= nil
local INTERP = is_jit and "luajit" or "lua5.4"

local slurp = dofile("spec/files.lua").take

-- Run `body` (Lua source) in a child; returns exit status, stdout, stderr.
local function child(body)
  local script, out, err = os.tmpname(), os.tmpname(), os.tmpname()
  local f = assert(io.open(script, "wb"))
  f:write(("package.path = %q\npackage.cpath = %q\nlocal core = require 'jrpc.core'\n")
    :format(package.path, package.cpath), body)
  f:close()
  local p = assert(io.popen(("%s %s > %s 2> %s; echo $?"):format(INTERP, script, out, err)))
  local status = tonumber(p:read("*a"))
  p:close()
  os.remove(script)
  return status, slurp(out), slurp(err)
end

local function check(body, expected)
  local status, stdout, stderr = child(body)
  assert.are.equal("", stderr)
  assert.are.equal(0, status)
  assert.are.equal(expected, stdout)
end

describe("sanitizers: undefined behaviour in the core", function()
  it("decodes a response whose string id starts with an escape on a fresh codec"
    .. " (buf_add: memcpy to NULL with length 0)", function()
    check([[
local c = core.codec{}
c:feed('{"jsonrpc":"2.0","result":1,"id":"\\u00e9x"}\n')
print(c:next())
]], 'result\t"éx"\t1\téx\n')
  end)

  it("decodes a number too large for an integer (push_number: float to integer overflow)", function()
    check([[
print(core.decode("[1e300]")[1], core.decode('{"a":-1e300}').a)
]], "1e+300\t-1e+300\n")
  end)

  it("rejects an error.code too large for an integer (check_error_table: float to integer overflow)", function()
    check([[
local c = core.codec{}
c:feed('{"jsonrpc":"2.0","error":{"code":1e300,"message":"m"},"id":1}\n')
print(c:next())
]], "invalid\t-32600\tInvalid Request\t1\tfalse\terror.code must be an integer\n")
  end)

  it("rejects a huge error code in codec:error (float to integer overflow)", function()
    check([[
local c = core.codec{}
print(pcall(c.error, c, "1", 1e300, "m"))
print(pcall(c.error, c, "1", 0/0, "m"))
]], "false\tbad argument #3 to '?' (error code must be an integer)\n"
      .. "false\tbad argument #3 to '?' (error code must be an integer)\n")
  end)

  it("rejects a huge integer option (opt_int: float to integer overflow)", function()
    check([[
print(pcall(core.codec, {max_depth = 1e300}))
print(pcall(core.codec, {max_batch = 0/0}))
]], "false\toption 'max_depth' must be an integer from 2 to 1000\n"
      .. "false\toption 'max_batch' must be an integer from 1 to 1073741824\n")
  end)
end)
