-- Every Lua example of README.md and docs/*.md runs and prints what the text
-- says. The convention (CONTRIBUTING.md, "Documentation and its examples"):
--   * a ```lua block is run from the repository root by this interpreter,
--     with the checkout's paths (examples/paths.lua), in a process of its own;
--   * the ```text block right after it is its exact stdout; a ```json block
--     is its stdout as JSON values, one a line, compared decoded (an object
--     has no key order, and Lua 5.4 and LuaJIT write keys in different ones);
--   * <!-- doc-example: stdin LINE --> lines just before it are its stdin;
--   * <!-- doc-example: not run (REASON) --> marks one that cannot run alone.
-- A block with neither expected output nor that mark fails, and the number
-- marked is fixed below, so no example is skipped without saying so.
-- Also: every relative link of these files reaches a file and a heading.
if dofile("spec/once.lua")(pending, "the documentation's examples, each a child process; their C paths are the other specs'", { "asan" }) then return end
local files = dofile("spec/files.lua")
local jrpc = require "jrpc"

local INTERP = rawget(_G, "jit") and "luajit" or "lua5.4"
-- The examples marked not run, by file: a change here is a decision.
local NOT_RUN = { ["README.md"] = 1, ["docs/api.md"] = 1, ["docs/games.md"] = 1,
  ["docs/mcp.md"] = 7, ["docs/neovim.md"] = 4 }

local function doc_files()
  local list = { "README.md" }
  local p = assert(io.popen("ls docs/*.md | LC_ALL=C sort"))
  for path in p:lines() do list[#list + 1] = path end
  p:close()
  return list
end

local function lines_of(text)
  local lines = {}
  for l in (text .. "\n"):gmatch("(.-)\n") do lines[#lines + 1] = l end
  return lines
end

-- The Lua examples of `path`: {line, code, stdin, not_run, expect, kind}.
local function examples(path)
  local lines, found = lines_of(files.read(path)), {}
  local i = 1
  while i <= #lines do
    local indent = lines[i]:match("^(%s*)```lua%s*$")
    if indent then
      local ex = { line = i, stdin = {} }
      local j = i - 1
      while j > 0 and lines[j]:match("^%s*<!%-%- doc%-example: .* %-%->%s*$") do
        local what = lines[j]:match("<!%-%- doc%-example: (.*) %-%->")
        local input = what:match("^stdin (.*)$")
        if input then table.insert(ex.stdin, 1, input)
        else ex.not_run = assert(what:match("^not run %((.+)%)$"), path .. ":" .. j .. ": unknown mark " .. what) end
        j = j - 1
      end
      local code = {}
      i = i + 1
      while not lines[i]:match("^%s*```%s*$") do
        code[#code + 1] = lines[i]:sub(#indent + 1)
        i = i + 1
      end
      ex.code = table.concat(code, "\n") .. "\n"
      local k = i + 1
      while lines[k] and lines[k]:match("^%s*$") do k = k + 1 end
      local kind = lines[k] and lines[k]:match("^%s*```(%a+)%s*$")
      if kind == "text" or kind == "json" then
        local out = {}
        k = k + 1
        while not lines[k]:match("^%s*```%s*$") do out[#out + 1] = lines[k]:sub(#indent + 1); k = k + 1 end
        ex.kind, ex.expect = kind, table.concat(out, "\n") .. "\n"
        i = k
      end
      found[#found + 1] = ex
    end
    i = i + 1
  end
  return found
end

local function quote(s) return "'" .. s:gsub("'", "'\\''") .. "'" end

-- Run `code` with `stdin`: exit status, stdout, stderr.
local function run(code, stdin)
  local script, input, out, err = os.tmpname(), os.tmpname(), os.tmpname(), os.tmpname()
  files.write(script, code)
  files.write(input, #stdin > 0 and table.concat(stdin, "\n") .. "\n" or "")
  local p = assert(io.popen(("timeout -s KILL 60 %s -e %s %s < %s > %s 2> %s; echo $?"):format(
    INTERP, quote('dofile("examples/paths.lua")'), script, input, out, err)))
  local status = tonumber(p:read("*a"))
  p:close()
  os.remove(script); os.remove(input)
  return status, files.take(out), files.take(err)
end

local function decoded_lines(text)
  local values = {}
  for l in text:gmatch("[^\n]+") do values[#values + 1] = jrpc.decode(l) or { not_json = l } end
  return values
end

describe("the documentation's Lua examples", function()
  local marked = {}
  for _, path in ipairs(doc_files()) do
    for _, ex in ipairs(examples(path)) do
      local where = ("%s:%d"):format(path, ex.line)
      if ex.not_run then
        marked[path] = (marked[path] or 0) + 1
        it(where .. " is marked not run, with a reason, and has no expected output", function()
          assert.is_nil(ex.expect)
          assert.is_true(#ex.not_run > 10)
        end)
      else
        it(where .. " runs and prints what the text says", function()
          assert(ex.expect, where .. ": no ```text or ```json block after it, and not marked not run")
          local status, out, err = run(ex.code, ex.stdin)
          if ex.kind == "json" then
            assert.same({ 0, decoded_lines(ex.expect), "" }, { status, decoded_lines(out), err })
          else
            assert.same({ 0, ex.expect, "" }, { status, out, err })
          end
        end)
      end
    end
  end

  it("marks as not run exactly the examples it means to", function()
    assert.same(NOT_RUN, marked)
    local n = 0
    for _, c in pairs(marked) do n = n + c end
    print(("doc_examples: %d examples marked not run"):format(n))
  end)
end)

-- {======================================================================
-- Links
-- =======================================================================

-- A heading's anchor as GitHub makes it: lower case, punctuation dropped
-- (not - or _), spaces to hyphens.
local function slug(heading)
  return (heading:lower():gsub("[^%w%s%-_\128-\255]", ""):gsub("%s", "-"))
end

local function anchors(path)
  local set, fenced = {}, false
  for _, l in ipairs(lines_of(files.read(path))) do
    if l:match("^%s*```") then fenced = not fenced
    elseif not fenced then
      local h = l:match("^#+ (.*)$")
      if h then set[slug(h)] = true end
    end
  end
  return set
end

local function exists(path)
  local f = io.open(path, "r")
  if f then f:close() end
  return f ~= nil
end

-- `a/b/../c` as `a/c`
local function normalize(path)
  local parts = {}
  for part in path:gmatch("[^/]+") do
    if part == ".." and #parts > 0 and parts[#parts] ~= ".." then parts[#parts] = nil
    elseif part ~= "." then parts[#parts + 1] = part end
  end
  return table.concat(parts, "/")
end

describe("the documentation's links", function()
  it("reach a file, and a heading for a #fragment", function()
    local list = doc_files()
    list[#list + 1] = "CONTRIBUTING.md"
    local p = assert(io.popen("ls bench/results/*.md | LC_ALL=C sort"))
    for path in p:lines() do list[#list + 1] = path end
    p:close()
    local broken, count = {}, 0
    for _, path in ipairs(list) do
      local text = files.read(path):gsub("\n%s*```.-\n%s*```", "")
      local dir = path:match("^(.*)/") or "."
      for target in text:gmatch("%]%(([^)%s]+)%)") do
        if not target:match("^%a+:") then
          count = count + 1
          local file, fragment = target:match("^([^#]*)#?(.*)$")
          local full = file == "" and path or normalize(dir .. "/" .. file)
          if not exists(full) then
            broken[#broken + 1] = path .. ": " .. target
          elseif fragment ~= "" and full:match("%.md$") and not anchors(full)[fragment] then
            broken[#broken + 1] = path .. ": " .. target .. " (no such heading)"
          end
        end
      end
    end
    assert.same({}, broken)
    print(("doc_links: %d links"):format(count))
  end)
end)

-- }======================================================================
