--- The `jrpc` command line (bin/jrpc): `jrpc COMMAND [OPTIONS] ...`.
--
-- Each subcommand is one module, lua/jrpc/cli/<name>.lua, returning
--   name, summary, usage, help   the texts for --help and usage errors
--   options                      option specs for jrpc.cli.args
--   run(opts, words)             -> exit code, or nil and a usage problem
--   raw                          (optional) true: the words after the
--                                command are passed on unparsed
-- and is listed in COMMANDS below (and in the rockspec). The dispatcher does
-- the rest: parsing, --help, usage errors, exit code 2.
local args = require "jrpc.cli.args"
local output = require "jrpc.cli.output"

local M = {}

--- The version printed by `jrpc --version`: the rock's version.
M.VERSION = "scm-1"

-- In the order --help lists them.
local COMMANDS = { "call", "mcp", "run" }

local function command(name)
  for _, n in ipairs(COMMANDS) do
    if n == name then return require("jrpc.cli." .. name) end
  end
end

local function top_usage()
  return "usage: jrpc COMMAND [OPTIONS] ... (jrpc --help for the commands)"
end

local function top_help()
  local lines = { "usage: jrpc COMMAND [OPTIONS] ...", "", "commands:" }
  for _, name in ipairs(COMMANDS) do
    local cmd = command(name)
    lines[#lines + 1] = ("  %-6s %s"):format(name, cmd.summary)
  end
  lines[#lines + 1] = ""
  lines[#lines + 1] = "  jrpc COMMAND --help   a command's options and exit status"
  lines[#lines + 1] = "  jrpc --version        the version"
  return table.concat(lines, "\n")
end

-- A usage error: what is wrong, then the usage line; exit status 2.
local function usage_error(prefix, problem, usage)
  output.err(prefix .. ": " .. problem)
  output.err("usage: " .. usage)
  return output.USAGE
end

local function wants_help(argv, first)
  for i = first, #argv do
    if argv[i] == "--" then return false end
    if argv[i] == "--help" or argv[i] == "-h" then return true end
  end
  return false
end

local function run_command(cmd, argv)
  output.set_command(cmd.name)
  if cmd.raw then
    -- e.g. `jrpc run server.lua --http ...`: the script's options are its own
    if argv[2] == "--help" or argv[2] == "-h" then
      io.stdout:write("usage: ", cmd.usage, "\n\n", cmd.help, "\n")
      return output.OK
    end
    local code, problem = cmd.run({}, { (table.unpack or unpack)(argv, 2, #argv) })  -- luacheck: ignore 143
    if code == nil then return usage_error("jrpc " .. cmd.name, problem, cmd.usage) end
    return code
  end
  if wants_help(argv, 2) then
    io.stdout:write("usage: ", cmd.usage, "\n\n", cmd.help, "\n")
    return output.OK
  end
  local opts, words = args.parse(argv, 2, cmd.options)
  local prefix = "jrpc " .. cmd.name
  if opts == nil then return usage_error(prefix, words, cmd.usage) end
  local code, problem = cmd.run(opts, words)
  if code == nil then return usage_error(prefix, problem, cmd.usage) end
  return code
end

--- Run the command line `argv` (bin/jrpc's `arg`); returns the exit code.
---@param argv string[]
---@return integer
function M.main(argv)
  local first = argv[1]
  if first == "--help" or first == "-h" then
    io.stdout:write(top_help(), "\n")
    return output.OK
  elseif first == "--version" then
    io.stdout:write("jrpc ", M.VERSION, "\n")
    return output.OK
  elseif first == nil then
    output.err("jrpc: no command given")
    output.err(top_usage())
    return output.USAGE
  end
  local cmd = command(first)
  if cmd == nil then
    output.err(("jrpc: unknown command %q"):format(first))
    output.err(top_usage())
    return output.USAGE
  end
  return run_command(cmd, argv)
end

return M
