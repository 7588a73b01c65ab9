-- Replays of the fuzz targets' inputs (fuzz/) through the same paths from Lua.
--
-- fuzz/regress/: inputs that made a target fail, each asserted to have its
-- documented outcome (some bugs are undefined behaviour that only a
-- sanitizer build sees: under the plain build those replays pass, under
-- a sanitizer build of the core they must not crash).
-- fuzz/corpus/: every seed through the codec under every profile and
-- framing: only documented events, nothing raises.
-- fuzz_mcp: its seeds (fuzz/corpus/fuzz_mcp/) and past failures
-- (fuzz/regress/mcp_*) through fuzz/mcp_host.lua, the Lua the target runs:
-- the MCP server on each input, every answer checked (it raises if not).
local core = require "jrpc.core"

local unpack = table.unpack or unpack
local mtype = math.type or function(x) return x % 1 == 0 and "integer" or "float" end

local root = debug.getinfo(1, "S").source:match("^@(.-)spec[/\\]fuzz_regress_spec%.lua$")
if root == nil or root == "" then root = "./" end

local function read(path)
  local f = assert(io.open(path, "rb"))
  local s = f:read("*a")
  f:close()
  return s
end

local function files(dir)
  local out = {}
  local p = assert(io.popen('ls "' .. root .. dir .. '" 2>/dev/null'))
  for name in p:lines() do out[#out + 1] = name end
  p:close()
  table.sort(out)
  return out
end

-- canonical text of a value: sorted keys, marker metatables, number subtypes
local function dump(v)
  local t = type(v)
  if t == "table" then
    local mt = getmetatable(v)
    local tag = mt == nil and "-" or mt == core.array_mt and "A" or mt == core.object_mt and "O" or "?"
    local items = {}
    for k, x in pairs(v) do items[#items + 1] = dump(k) .. "=" .. dump(x) end
    table.sort(items)
    return "{" .. tag .. table.concat(items, ",") .. "}"
  elseif t == "number" then
    if v ~= v then return "fnan" end
    return (mtype(v) == "integer" and "i" or "f") .. string.format("%.17g", v)
  elseif t == "string" then
    return "s" .. #v .. ":" .. v
  elseif v == core.null then
    return "null"
  end
  return tostring(v)
end

local counts = {request = 5, notification = 3, result = 4, error = 4, batch = 2, invalid = 6}
local messages = {["Parse error"] = -32700, ["Invalid Request"] = -32600,
  ["Message too large"] = -32600, ["Nesting too deep"] = -32600,
  ["Batch too large"] = -32600, ["Batches are not allowed"] = -32600}

-- an event as CORE_API.md documents it (kinds, counts, codes)
local function check_event(ev, profile, in_batch)
  local kind = ev[1]
  assert(counts[kind], "unknown event kind " .. tostring(kind))
  assert(ev.n == counts[kind], kind .. ": " .. ev.n .. " values")
  if kind == "invalid" then
    assert(messages[ev[3]] == ev[2], "invalid: " .. tostring(ev[2]) .. " " .. tostring(ev[3]))
    assert(type(ev[4]) == "string" and type(ev[5]) == "boolean" and type(ev[6]) == "string")
  elseif kind == "batch" then
    assert(not in_batch and profile == "jsonrpc", "batch here")
    assert(#ev[2] >= 1)
    for _, item in ipairs(ev[2]) do check_event(item, profile, true) end
  elseif kind == "request" or kind == "notification" then
    assert(type(ev[2]) == "string", kind .. ": method")
    assert(ev[3] == nil or type(ev[3]) == "table", kind .. ": params")
  else
    -- a plain integer id is its own rawid (CORE_API.md), any other its text
    assert(type(ev[2]) == "string" or (type(ev[2]) == "number" and ev[2] == ev[4]), kind .. ": rawid")
  end
end

local function pack(...) return {n = select("#", ...), ...} end

local interpreter = rawget(_G, "jit") and "luajit" or "lua5.4"

-- run 'code' in a child interpreter with our module paths (a crash there
-- fails one test instead of ending the run); returns its output and status
local function in_child(lua, code, ...)
  local tmp = os.tmpname()
  local f = assert(io.open(tmp, "w"))
  f:write(("package.path = %q\npackage.cpath = %q\n"):format(package.path, package.cpath), code)
  f:close()
  local args = {}
  for i, a in ipairs({...}) do args[i] = ("%q"):format(a) end
  local p = assert(io.popen(lua .. " " .. tmp .. " " .. table.concat(args, " ") .. ' 2>&1; echo "exit $?"'))
  local out = p:read("*a")
  p:close()
  os.remove(tmp)
  return (out:gsub("%s+$", ""))
end

-- codec:next() until nothing; each event checked and rendered
local function drain(c, profile, out)
  while true do
    local ev = pack(c:next())
    if ev[1] == nil then return out end
    check_event(ev, profile)
    local parts = {}
    for i = 1, ev.n do parts[i] = dump(ev[i]) end
    out[#out + 1] = table.concat(parts, " ")
  end
end

-- the settings byte for a codec's max_depth: 0 default, 1 read as 2 (a
-- codec takes 2 to 1000), else itself
local function pick_depth(b)
  if b == 0 then return nil end
  return b == 1 and 2 or b
end

-- the settings byte for max_message_bytes, as fuzz_framer reads it
local function pick_bytes(b)
  if b == 0 then return nil end
  if b < 200 then return b end
  return (b - 199) * 256
end

local profiles = {"jsonrpc", "mcp", "lsp"}

-- fuzz_framer (fuzz/host.c): settings, chunk sizes, then the stream, fed
-- whole and in those chunks; returns both renderings
local function framer(input, framing)
  local b = {input:byte(1, 5)}
  for i = 1, 5 do b[i] = b[i] or 0 end
  local nsizes = b[5] % 16
  local sizes = {input:byte(6, 5 + nsizes)}
  for i = 1, #sizes do sizes[i] = sizes[i] + 1 end
  local stream = input:sub(6 + nsizes)
  local opts = {framing = framing, profile = profiles[b[1] % 3 + 1],
    max_message_bytes = pick_bytes(b[2]), max_depth = pick_depth(b[3]),
    max_batch = b[4] > 0 and b[4] or nil}
  local whole, pieces = core.codec(opts), core.codec(opts)
  local a, c = {}, {}
  if #stream > 0 then whole:feed(stream) end
  drain(whole, opts.profile, a)
  whole:finish()
  drain(whole, opts.profile, a)
  local off, k = 1, 0
  while off <= #stream do
    local n = #sizes > 0 and sizes[k % #sizes + 1] or 1
    k = k + 1
    pieces:feed(stream:sub(off, off + n - 1))
    off = off + n
    drain(pieces, opts.profile, c)
  end
  pieces:finish()
  drain(pieces, opts.profile, c)
  return a, c
end

-- fuzz_message (fuzz/fuzz_message.c): settings, then one message body,
-- framed with Content-Length; returns its one event
local function message(input)
  local b = {input:byte(1, 5)}
  for i = 1, 5 do b[i] = b[i] or 0 end
  local body = input:sub(6)
  local profile = profiles[b[1] % 3 + 1]
  local c = core.codec{framing = "lsp", profile = profile,
    max_depth = pick_depth(b[2]), max_batch = b[3] > 0 and b[3] or nil,
    max_message_bytes = b[4] > 0 and 16 * b[4] or nil}
  c:feed("Content-Length: " .. #body .. "\r\n\r\n" .. body)
  c:finish()
  local ev = pack(c:next())
  check_event(ev, profile)
  assert.are.equal(0, select("#", c:next()))
  return ev
end

describe("fuzz regressions", function()
  it("ndjson: an over-limit blank line gives the same events whole or in chunks", function()
    -- max_message_bytes = 1, stream "  \n\255": the blank line is skipped when
    -- it comes whole, but reported as "Message too large" when it streams in
    local whole, pieces = framer(read(root .. "fuzz/regress/ndjson_blank_line_over_limit"), "ndjson")
    assert.are.same(whole, pieces)
  end)

  it("lsp: a junk line past 8192 bytes gives the same events whole or in chunks", function()
    -- a 9000-byte line that is no header, then a frame: whole, the line is
    -- reported (Parse error, no reply); in 256-byte chunks it is dropped
    -- silently once 8192 bytes came without a newline
    local whole, pieces = framer(read(root .. "fuzz/regress/lsp_long_junk_line"), "lsp")
    assert.are.same(whole, pieces)
  end)

  it("ndjson: next() before any feed gives nothing (UB in frame.c under UBSan)", function()
    local c = core.codec{}
    assert.are.equal(0, select("#", c:next()))
    local whole, pieces = framer(read(root .. "fuzz/regress/ndjson_next_before_feed"), "ndjson")
    assert.are.same({}, whole)
    assert.are.same({}, pieces)
  end)

  it("ndjson: a key that starts with an escape (UB in buf.c under UBSan)", function()
    local whole, pieces = framer(read(root .. "fuzz/regress/ndjson_unescape_into_empty_buffer"), "ndjson")
    -- the line is {"\n" (an escaped key, then the end of input)
    assert.are.same({"s7:invalid i-32700 s11:Parse error s4:null true s22:expected ':' at byte 6"}, whole)
    assert.are.same(whole, pieces)
  end)

  it("ndjson: numbers past 2^63 decode as floats (UB in tolua.c under UBSan)", function()
    local whole, pieces = framer(read(root .. "fuzz/regress/ndjson_params_huge_number"), "ndjson")
    assert.are.same(whole, pieces)
    local c = core.codec{}
    c:feed('{"jsonrpc":"2.0","method":"m","params":[1e300, -1e300, 1e19]}\n')
    local kind, _, params = c:next()
    assert.are.equal("notification", kind)
    assert.are.same({1e300, -1e300, 1e19}, {params[1], params[2], params[3]})
    assert.are.equal(1e300, core.decode("1e300"))
  end)
end)

describe("fuzz regressions: messages and writers", function()
  it("a response's long escaped string id is matched by core.rawid(id) (heap use after free)", function()
    -- push_match_id encoded the unescaped id from the scratch buffer into
    -- the same buffer, which moved when it grew. This can crash the
    -- interpreter, so it runs in a child process.
    local ev = in_child(interpreter, [[
      local core = require "jrpc.core"
      local f = assert(io.open(arg[1], "rb"))
      local body = f:read("*a"):sub(6)
      f:close()
      local id = "\195\169" .. string.rep("x", 200)
      local c = core.codec{framing = "lsp"}
      c:feed("Content-Length: " .. #body .. "\r\n\r\n" .. body)
      local kind, rawid, result, got = c:next()
      assert(kind == "result" and rawid == core.rawid(id) and result == 1 and got == id, "wrong rawid")
      for _, n in ipairs({10, 100, 1000, 100000}) do
        c = core.codec{}
        local long = string.rep("y", n)
        c:feed('{"jsonrpc":"2.0","error":{"code":1,"message":"m"},"id":"\\n' .. long .. '"}\n')
        kind, rawid = c:next()
        assert(kind == "error" and rawid == core.rawid("\n" .. long), "wrong rawid at " .. n)
      end
      print("ok")
    ]], root .. "fuzz/regress/message_response_long_escaped_id")
    assert.are.equal("ok\nexit 0", ev)
  end)

  it("a response with a params member: core.peek tells a result, as the codec does", function()
    local input = read(root .. "fuzz/regress/message_result_with_params")
    local ev = message(input)
    assert.are.equal("result", ev[1])
    assert.are.same({ "result", "1" }, { core.peek(input:sub(6)) })
  end)

  it("an error code past 2^63 is not an integer (UB in message.c under UBSan)", function()
    local ev = message(read(root .. "fuzz/regress/message_error_code_huge"))
    assert.are.same({"invalid", -32600, "Invalid Request", "1", false, "error.code must be an integer"},
      {unpack(ev, 1, 6)})
  end)

  it("codec:error raises for a code of 2^63 (UB in codec.c under UBSan)", function()
    -- fuzz/regress/encode_error_code_2p63: codec:error("5", 2^63, "m")
    local c = core.codec{}
    assert.has_error(function() c:error("5", 2 ^ 63, "m") end)
    assert.has_error(function() c:error("5", 1e300, "m") end)
    assert.has_error(function() c:error("5", 0 / 0, "m") end)
    assert.has_error(function() c:error("5", math.huge, "m") end)
  end)

  it("codec:error takes codes within 2^53 only, so every reader gets them back exactly", function()
    -- fuzz/regress/encode_error_code_maxinteger(_readback): a code of
    -- math.maxinteger was written, and the same codec read it back as invalid
    local c = core.codec{}
    if not rawget(_G, "jit") then
      assert.has_error(function() c:error("5", math.maxinteger, "m") end,
        "bad argument #2 to 'error' (error code must be within 2^53)")
    end
    assert.has_error(function() c:error("5", 2 ^ 53 + 2, "m") end)
    c:feed(assert(c:error("5", 2 ^ 53, "m")))
    assert.are.equal("error", (c:next()))
  end)

  it("a codec reads back an error response with any code its codec:error writes", function()
    -- fuzz/regress/encode_error_code_maxinteger_readback: the reader checks
    -- the code as a double, where 9223372036854775807 becomes 2^63
    if rawget(_G, "jit") then return end
    for _, code in ipairs({math.maxinteger, math.mininteger, math.maxinteger - 1, 2 ^ 53 + 1}) do
      local c = core.codec{}
      local ok, out = pcall(c.error, c, "1", code, "m")
      if ok then  -- refusing to write is fine; writing what cannot be read is not
        c:feed(out)
        local kind, rawid, err = c:next()
        assert.are.same({"error", 1, "m"}, {kind, rawid, err and err.message}, "code " .. code)
      end
    end
  end)

  it("a codec reads back what its writers wrote at its max_depth", function()
    -- max_depth counts every container of a message, the envelope included
    -- (and the error object around error data): the writers refuse exactly
    -- what the reader of the same settings would refuse
    for _, framing in ipairs({"ndjson", "lsp"}) do
      local w = core.codec{framing = framing, max_depth = 4}
      local r = core.codec{framing = framing, max_depth = 4}
      r:feed(assert(w:result("1", {{{1}}})))
      r:feed(assert(w:request("2", "m", {{{2}}})))
      r:feed(assert(w:notification("n", {{{3}}})))
      r:feed(assert(w:error("4", 1, "e", {{4}})))
      local kinds = {}
      for i = 1, 4 do kinds[i] = (r:next()) end
      assert.are.same({"result", "request", "notification", "error"}, kinds)
      assert.are.same({nil, "nesting too deep"}, {w:result("1", {{{{1}}}})})
      assert.are.same({nil, "nesting too deep"}, {w:request("2", "m", {{{{2}}}})})
      assert.are.same({nil, "nesting too deep"}, {w:error("4", 1, "e", {{{4}}})})
    end
  end)
end)

describe("fuzz regressions: a codec with max_depth = 1", function()
  it("is refused; at max_depth = 2 it reads back the error responses it writes", function()
    -- fuzz/regress/encode_error_max_depth_1: the error object is itself
    -- nested in the envelope, so a codec with max_depth = 1 refused every
    -- error response, its own included ("Nesting too deep"); such a codec
    -- would go mute, so it cannot be made any more
    assert.has_error(function() core.codec{max_depth = 1} end,
      "option 'max_depth' must be an integer from 2 to 1000")
    for _, framing in ipairs({"ndjson", "lsp"}) do
      local w = core.codec{framing = framing, max_depth = 2}
      local r = core.codec{framing = framing, max_depth = 2}
      local out = assert(w:error("1", -32601, "Method not found"))
      r:feed(out)
      local kind, rawid, err = r:next()
      assert.are.same({"error", 1, -32601}, {kind, rawid, err and err.code})
    end
  end)
end)

describe("fuzz corpus smoke test", function()
  local targets = files("fuzz/corpus")
  it("has seeds", function()
    assert.is_true(#targets >= 4)
  end)
  for _, target in ipairs(targets) do
    for _, name in ipairs(files("fuzz/corpus/" .. target)) do
      it(target .. "/" .. name .. " gives documented events under every profile", function()
        local data = read(root .. "fuzz/corpus/" .. target .. "/" .. name)
        for _, framing in ipairs({"ndjson", "lsp"}) do
          for _, profile in ipairs(profiles) do
            local c = core.codec{framing = framing, profile = profile}
            local out = {}
            -- the raw bytes, also as one LSP body so every seed is decoded
            c:feed(data)
            drain(c, profile, out)
            c:finish()
            drain(c, profile, out)
            if framing == "lsp" then
              c = core.codec{framing = framing, profile = profile}
              c:feed("Content-Length: " .. #data .. "\r\n\r\n" .. data)
              c:finish()
              assert.is_true(#drain(c, profile, {}) == 1)
            end
          end
        end
        if target == "fuzz_ndjson" or target == "fuzz_lsp" then
          local whole, pieces = framer(data, target == "fuzz_lsp" and "lsp" or "ndjson")
          assert.are.same(whole, pieces)
        end
        assert.is_true(unpack({true}))
      end)
    end
  end
end)


-- fuzz_mcp (fuzz/fuzz_mcp.c) runs fuzz/mcp_host.lua on each input: the MCP
-- server fed JSON-RPC lines or HTTP bytes, every answer checked
local mcp_host
local function mcp_run(path)
  if mcp_host == nil then
    package.path = root .. "fuzz/?.lua;" .. package.path
    mcp_host = require "mcp_host"
  end
  return mcp_host.run(read(path))
end

-- the HTTP responses in a connection's output: their status lines
local function statuses(out)
  local list = {}
  for status in out:gmatch("HTTP/1%.1 (%d%d%d) ") do list[#list + 1] = tonumber(status) end
  return list
end

describe("fuzz_mcp regressions", function()
  it("HTTP: a POSTed notification the peer finds invalid gets one answer, 400 with -32600", function()
    -- fuzz/regress/mcp_http_invalid_notification: {"jsonrwc":"2.0","method":...}
    -- has no id, so post() handed it to the peer and answered 202; but the
    -- peer had already answered it Invalid Request (id null), so the 202 hit
    -- a response already sent and the handler raised
    local out = mcp_run(root .. "fuzz/regress/mcp_http_invalid_notification")
    assert.are.same({400}, statuses(out[1]))
    assert.matches('"code":%-32600', out[1])
  end)

  it("HTTP: an answer before dispatch names the id only when it is a string or an integer", function()
    -- fuzz/regress/mcp_http_object_id: {"jsonrpc":"2.0","id":{"a":[1]},"result":1}
    -- was refused (400, -32600) with that object as the answer's id, which
    -- no JSON-RPC reader takes; it is null now, as for any unreadable id
    local out = mcp_run(root .. "fuzz/regress/mcp_http_object_id")
    assert.are.same({400}, statuses(out[1]))
    assert.matches('"id":null', out[1])
    assert.matches('"code":%-32600', out[1])
  end)

  it("_meta and logging/setLevel: a log level that is not a string is named by kind, not by address", function()
    -- fuzz/regress/mcp_meta_log_level_object (a modern _meta logLevel {"a":1})
    -- and mcp_legacy_set_level_array (logging/setLevel {"level":[]}) were
    -- -32602 "unknown log level table: 0x55da3f9f5b70", a Lua address
    for _, name in ipairs({"mcp_meta_log_level_object", "mcp_legacy_set_level_array"}) do
      local out = mcp_run(root .. "fuzz/regress/" .. name)
      assert.matches('"code":%-32602', out)
      assert.matches('"message":"Invalid params: unknown log level %(an object or array%)"', out)
      assert.is_nil(out:find("0x", 1, true))
    end
  end)

  it("notifications/initialized sent as a request is -32601, not a null result", function()
    -- fuzz/regress/mcp_initialized_as_request: with an id, before and after
    -- initialize; its handler returned nothing, so the answer was
    -- {"result":null}, and an MCP result is an object
    local out = mcp_run(root .. "fuzz/regress/mcp_initialized_as_request")
    local lines = {}
    for line in out:gmatch("[^\n]+") do lines[#lines + 1] = core.decode(line) end
    assert.are.same({1, 2, 3}, {lines[1].id, lines[2].id, lines[3].id})
    assert.are.same({-32601, -32601}, {lines[1].error.code, lines[3].error.code})
    assert.are.equal("2025-11-25", lines[2].result.protocolVersion)
  end)
end)

describe("fuzz_mcp: the MCP server on the target's inputs", function()
  local seeds = files("fuzz/corpus/fuzz_mcp")
  it("has seeds of both modes", function()
    local modes = {}
    for _, name in ipairs(seeds) do modes[read(root .. "fuzz/corpus/fuzz_mcp/" .. name):byte(1) % 2] = true end
    assert.are.same({ [0] = true, [1] = true }, modes)
  end)
  for _, name in ipairs(seeds) do
    it("seed " .. name .. " gets documented answers only", function()
      mcp_run(root .. "fuzz/corpus/fuzz_mcp/" .. name)
    end)
  end
  for _, name in ipairs(files("fuzz/regress")) do
    if name:find("^mcp_") then
      it("regress " .. name .. " gets documented answers only", function()
        mcp_run(root .. "fuzz/regress/" .. name)
      end)
    end
  end
end)
