-- examples/embed: build/embed, a C program embedding Lua 5.4, drives
-- examples/spec_server.lua (a real child process) from a 60 frames/s loop
-- through jrpc.uv's loop:pump(budget). `make test` builds it first.
local BINARY = "build/embed"

local slurp = dofile("spec/files.lua").read

local function exists(path)
  local f = io.open(path, "rb")
  if f then f:close() end
  return f ~= nil
end

-- Run build/embed with `args`; returns its exit status, stdout and stderr.
-- A pump that blocks for good must fail the spec, not hang it: after 30 s
-- `timeout` kills the program (status 124).
local function run_embed(args)
  local out, err = os.tmpname(), os.tmpname()
  local p = assert(io.popen(("timeout -s KILL 30 %s %s > %s 2> %s; echo $?"):format(
    BINARY, args, out, err)))
  local status = tonumber(p:read("*a"))
  p:close()
  local stdout, stderr = slurp(out), slurp(err)
  os.remove(out); os.remove(err)
  return status, stdout, stderr
end

local function lines_of(s)
  local t = {}
  for line in s:gmatch("[^\n]+") do t[#t + 1] = line end
  return t
end

-- The answer lines must read "frame N: <text>"; returns {text = count}.
local function answers_by_text(lines)
  local texts = {}
  for _, line in ipairs(lines) do
    local text = line:match("^frame %d+: (.*)$")
    if text then texts[text] = (texts[text] or 0) + 1 end
  end
  return texts
end

describe("examples/embed (build/embed)", function()
  if rawget(_G, "jit") then
    pending("the embed host embeds Lua 5.4; it is tested under lua5.4 only")
    return
  end
  if not exists(BINARY) then
    pending(BINARY .. " is not built: run `make embed` (make test builds it)")
    return
  end

  it("answers every request in a 60 frames/s loop without blocking a frame", function()
    local status, stdout, stderr = run_embed("--seconds 10")
    assert.equal(0, status, stdout .. stderr)
    local lines = lines_of(stdout)
    local expected = { ["child exited with code 0"] = 1 }
    for i = 1, 6 do
      local subtract = ("subtract(%d,23) = %d"):format(40 + i, 17 + i)
      local sum = ("sum(%d,2,4) = %d"):format(i, i + 6)
      expected[subtract] = 1
      expected[sum] = 1
    end
    expected['get_data() = ["hello",5]'] = 6
    expected["fail() failed: jrpc error -32603: Internal error"] = 6
    assert.same(expected, answers_by_text(lines))

    local summary = lines[#lines]
    local frames, ms = summary:match(
      "^frames: (%d+), answers: 24, errors: 6, max frame work: (%d+%.%d) ms$")
    assert.is_truthy(frames, summary)
    -- six rounds a quarter second apart at 60 frames/s: at least 75 frames
    assert.is_true(tonumber(frames) >= 75, summary)
    -- a pump that waits for the child would take far longer than this
    assert.is_true(tonumber(ms) < 50, summary)
  end)

  it("refuses a repository without game.lua with a clear error and status 2", function()
    local status, stdout, stderr = run_embed("--root /nonexistent --seconds 1")
    assert.equal(2, status)
    assert.equal("", stdout)
    assert.equal("embed: cannot open /nonexistent/examples/embed/game.lua: No such file or directory\n",
      stderr)
  end)

  it("refuses bad arguments with its usage and status 2", function()
    local status, stdout, stderr = run_embed("--seconds soon")
    assert.equal(2, status)
    assert.equal("", stdout)
    assert.equal("usage: " .. BINARY .. " [--root DIR] [--seconds N]\n", stderr)
  end)
end)
