-- Run inside `nvim --clean --headless` with the repository on runtimepath
-- (see spec/nvim/headless_test.lua): only `require "jrpc.nvim"`, then two
-- children that write on their stderr: one spawned with the default (its
-- stderr captured, never on the editor's terminal), one with stderr =
-- "inherit" (passed through, as asked). Writes "key<TAB>value" lines to
-- $JRPC_NVIM_OUT and quits.
local out = assert(os.getenv("JRPC_NVIM_OUT"), "JRPC_NVIM_OUT not set")
local lines = {}
local function put(k, v) lines[#lines + 1] = k .. "\t" .. tostring(v):gsub("\n", "\\n") end

local jnvim = require "jrpc.nvim"   -- and nothing else of jrpc's
put("encode_nil", require("jrpc.core").encode({ processId = vim.NIL }))

local done = false
local loop = jnvim.loop()
-- A child that logs one line on its stderr, then serves the spec's examples.
local function child(words, opts)
  opts.cmd, opts.args = "lua5.4", { "-e", ("io.stderr:write(%q)"):format(words), "examples/spec_server.lua" }
  return assert(loop:spawn(opts))
end
coroutine.wrap(function()
  local ok, err = pcall(function()
    local quiet = child("a child's log line\n", { null = vim.NIL })
    put("subtract", quiet.peer:request("subtract", { 42, 23 }, { timeout = 10 }))
    quiet:shutdown()
    put("captured", quiet:stderr_text())
    local loud = child("passed through\n", { stderr = "inherit" })
    put("loud", loud.peer:request("subtract", { 2, 1 }, { timeout = 10 }))
    loud:shutdown()
  end)
  if not ok then put("error", err) end
  done = true
end)()

local finished = vim.wait(20000, function() return done end, 10)
put("finished", finished)
vim.fn.writefile(lines, out)
vim.cmd(finished and "qall!" or "cquit! 3")
