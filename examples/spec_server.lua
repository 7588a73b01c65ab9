#!/usr/bin/env lua5.4
--- The JSON-RPC 2.0 specification's examples (section 7), served on stdio.
--
--   lua5.4 examples/spec_server.lua [--framing ndjson|lsp] [--profile jsonrpc|mcp]
--                                   [--transport uv|blocking] [--idle-gc on|off]
--                                   [--busy-poll off|MICROSECONDS]
--                                   [--max-write-queue BYTES] [--pause-reading-at BYTES]
--   luajit examples/spec_server.lua ...
--
-- --transport uv (the default when luv is installed) serves through
-- jrpc.uv's non-blocking stdio; blocking uses jrpc.stdio. --idle-gc off
-- (uv only) keeps the collector's steps where allocation puts them instead
-- of doing them while the loop waits (jrpc.uv.idle_gc); --busy-poll
-- (uv only) sets how long the loop polls before it sleeps (jrpc.uv.busy_poll).
--
-- Writes only protocol messages to stdout, logs to stderr, exits 0 at the
-- end of input. Loaded with the single argument "--module" it serves
-- nothing and returns `install(peer)` instead (for in-process tests).

-- Find the repository from this script's own path, so it runs from a
-- checkout with no environment variables set.
local script_dir = debug.getinfo(1, "S").source:match("^@(.*)[/\\][^/\\]*$") or "."
dofile(script_dir .. "/paths.lua")  -- lua/ and build/ of this checkout

local jrpc = require "jrpc"

local function do_nothing() end

local methods = {
  sum = function(params)
    if type(params) ~= "table" or getmetatable(params) ~= jrpc.core.array_mt then
      jrpc.error(jrpc.codes.INVALID_PARAMS, "Invalid params: sum takes an array of numbers")
    end
    local total = 0
    for i = 1, #params do
      if type(params[i]) ~= "number" then
        jrpc.error(jrpc.codes.INVALID_PARAMS, "Invalid params: item " .. i .. " is not a number")
      end
      total = total + params[i]
    end
    return total
  end,
  get_data = function()
    return jrpc.array{ "hello", 5 }
  end,
  fail = function()
    error("this method always fails")
  end,
  update = do_nothing,
  notify_hello = do_nothing,
  notify_sum = do_nothing,
}

--- Register the example methods on a peer.
---@param peer jrpc.Peer
local function install(peer)
  for name, fn in pairs(methods) do peer:method(name, fn) end
  peer:method("subtract", function(p) return p.minuend - p.subtrahend end,
    jrpc.params{ "minuend:number", "subtrahend:number" })
end

local choices = {
  ["--framing"] = { ndjson = true, lsp = true },
  ["--profile"] = { jsonrpc = true, mcp = true, lsp = true },
  ["--transport"] = { uv = true, blocking = true },
  ["--idle-gc"] = { on = true, off = true },
}

local function parse_args(argv)
  local has_luv = pcall(require, "luv")
  -- (uv) by default the loop polls before it sleeps (where there is more
  -- than one CPU) and the collector works while it waits: this server is
  -- what the benchmarks measure
  local opts = { framing = "ndjson", profile = "jsonrpc", transport = has_luv and "uv" or "blocking",
    ["idle-gc"] = "on", busy_poll = true }
  local i = 1
  while argv[i] do
    local flag, value = argv[i], argv[i + 1]
    if choices[flag] and choices[flag][value] then
      opts[flag:sub(3)] = value
      i = i + 2
    -- (uv only) the connection's bound on replies not yet written (default
    -- 16 MiB): over it, the server stops reading. bench/memory.lua measures
    -- what a small bound saves when a slow client keeps 10,000 requests in
    -- flight (the replies then wait in the kernel instead of the heap).
    elseif flag == "--max-write-queue" and tonumber(value) and tonumber(value) > 0 then
      opts.max_write_queue = tonumber(value)
      i = i + 2
    -- (uv only) how much of its replies may wait unwritten before it stops
    -- reading, while it awaits no response of its own (default 64 KiB)
    elseif flag == "--pause-reading-at" and tonumber(value) and tonumber(value) > 0 then
      opts.pause_reading_at = tonumber(value)
      i = i + 2
    elseif flag == "--busy-poll" and (value == "off" or (tonumber(value) and tonumber(value) >= 0)) then
      opts.busy_poll = value ~= "off" and tonumber(value)
      i = i + 2
    else
      io.stderr:write("usage: spec_server.lua [--framing ndjson|lsp] [--profile jsonrpc|mcp|lsp]"
        .. " [--transport uv|blocking] [--idle-gc on|off] [--busy-poll off|MICROSECONDS]"
        .. " [--max-write-queue BYTES]"
        .. " [--pause-reading-at BYTES]\n")
      os.exit(2)
    end
  end
  return opts
end

if ... == "--module" then return install end

local opts = parse_args(arg or {})
local peer_opts = { framing = opts.framing, profile = opts.profile }
if opts.transport == "blocking" then
  local peer = jrpc.stdio.peer(peer_opts)
  install(peer)
  jrpc.stdio.serve(peer)
else
  local loop = jrpc.uv.new(require "luv", { catch_sigpipe = true })
  local conn = assert(loop:stdio{ framing = opts.framing, profile = opts.profile,
    max_write_queue = opts.max_write_queue, pause_reading_at = opts.pause_reading_at })
  install(conn.peer)
  -- returns once stdin ended and the replies are written
  loop:serve_forever{ idle_gc = opts["idle-gc"] == "on", busy_poll = opts.busy_poll }
end
