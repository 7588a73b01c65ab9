-- spec/uv_support.lua: shared by the spec/uv_*_spec.lua files (loaded with
-- dofile; not a spec itself). Real child processes, pipes and sockets on
-- luv's default loop; a watchdog so a bug fails a test instead of hanging it.
local jrpc = require "jrpc"
local uv = require "luv"

local M = {}
local slurp = dofile("spec/files.lua").take

local function pack(...) return { n = select("#", ...), ... } end

M.uv = uv
M.null = jrpc.null
M.loop = jrpc.uv.new(uv, { catch_sigpipe = true })  -- a child that is gone never ends the spec run
-- the interpreter running the specs, for child processes
M.INTERP = rawget(_G, "jit") and "luajit" or "lua5.4"

--- Seconds since `t0` (from M.now()).
function M.now() return uv.hrtime() / 1e9 end
function M.since(t0) return M.now() - t0 end

local children = {}

--- loop:spawn, remembering the child so `cleanup` can kill it.
function M.spawn(opts)
  local child, err = M.loop:spawn(opts)
  if child then children[#children + 1] = child end
  return child, err
end

--- Kill what a test left running.
function M.cleanup()
  for _, child in ipairs(children) do
    if child.exit_code == nil then child:kill("sigkill") end
    child:close("test over")
  end
  children = {}
end

--- A child running `sh -c script` that talks JSON-RPC (or does not).
function M.sh(script, opts)
  local o = { cmd = "/bin/sh", args = { "-c", script }, on_error = function() end }
  for k, v in pairs(opts or {}) do o[k] = v end
  return M.spawn(o)
end

--- The spec server under the running interpreter.
function M.spec_server(opts, extra_args)
  local args = { "examples/spec_server.lua" }
  for _, a in ipairs(extra_args or {}) do args[#args + 1] = a end
  local o = { cmd = M.INTERP, args = args }
  for k, v in pairs(opts or {}) do o[k] = v end
  return M.spawn(o)
end

--- jrpc.uv.http.listen on a free port of 127.0.0.1 with `handler`, the
--- errors it logs dropped; `opts` are more listen options (limits).
function M.http_serve(handler, opts)
  opts = opts or {}
  opts.handler = handler
  opts.port = 0
  opts.on_error = opts.on_error or function() end
  return assert(require("jrpc.uv.http").listen(M.loop, opts))
end

--- loop:run(fn) with a watchdog: after `limit` seconds (default 10) the
--- loop is stopped and run raises instead of hanging the spec run.
function M.run(fn, limit)
  local loop = M.loop
  local watchdog = uv.new_timer()
  -- from now, not from the loop's cached time (stale by however long the
  -- specs ran without the loop: it would fire at once)
  uv.update_time()
  watchdog:start(math.floor((limit or 10) * 1000), 0, function() loop:stop() end)
  local results = pack(pcall(loop.run, loop, fn))
  require("jrpc.uv.handles").close(uv, watchdog)  -- safely, outside the loop
  if not results[1] then error(results[2], 0) end
  return (table.unpack or unpack)(results, 2, results.n)
end

--- In a coroutine: wait until cond() is true (checked every millisecond),
--- at most `limit` seconds. Returns whether it became true.
function M.wait_until(cond, limit)
  local deadline = M.now() + (limit or 5)
  while not cond() do
    if M.now() > deadline then return false end
    M.loop:sleep(0.001)
  end
  return true
end

--- Take the complete lines off the front of `buffer` (appended to `lines`);
--- returns what is left. string.find, not gmatch("([^\n]*)\n"): that pattern
--- rescans a long unterminated line from every position (quadratic).
function M.split_lines(buffer, lines)
  local start = 1
  while true do
    local nl = buffer:find("\n", start, true)
    if nl == nil then return buffer:sub(start) end
    lines[#lines + 1] = buffer:sub(start, nl - 1)
    start = nl + 1
  end
end

--- Run a shell command; returns exit status, stdout, stderr, seconds taken.
function M.shell(cmd)
  local out, err = os.tmpname(), os.tmpname()
  local t0 = M.now()
  local p = assert(io.popen(("( %s ) > %s 2> %s; echo $?"):format(cmd, out, err)))
  local status = tonumber(p:read("*a"))
  p:close()
  return status, slurp(out), slurp(err), M.since(t0)
end

--- Run `cmd` through sh without blocking the loop, waiting for it in the
--- running coroutine (a jrpc wait); returns its exit status and stdout.
function M.shell_wait(cmd)
  local workers = require "jrpc.workers"
  local me = coroutine.running()
  local out, chunks, result = uv.new_pipe(false), {}, nil
  local handle
  handle = uv.spawn("/bin/sh", { args = { "-c", cmd }, stdio = { nil, out, 2 } }, function(code)
    handle:close()
    out:read_stop()
    out:close()
    result = { code, table.concat(chunks) }
    if coroutine.status(me) == "suspended" then workers.wake(me, print) end
  end)
  out:read_start(function(_, data) if data then chunks[#chunks + 1] = data end end)
  if result == nil then workers.wait() end
  return result[1], result[2]
end

--- A fresh temporary directory (removed by `rmdir`).
function M.tmpdir()
  local p = assert(io.popen("mktemp -d /tmp/jrpc-uv-XXXXXX"))
  local dir = p:read("*l")
  p:close()
  return dir
end

function M.rmdir(dir)
  os.execute("rm -rf '" .. dir .. "'")
end

return M
