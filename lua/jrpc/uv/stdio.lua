--- This process's stdin and stdout as a non-blocking connection.
-- Each descriptor is opened as what it is: a pipe (also a Unix socket, as
-- libuv gives its children), a TCP socket, a tty, or a file (a redirect
-- from or to a file, or /dev/null), which libuv cannot poll.
local stream = require "jrpc.uv.stream"
local files = require "jrpc.uv.files"
local handles = require "jrpc.uv.handles"
local connection = require "jrpc.connection"
local options = require "jrpc.options"
local errors = require "jrpc.errors"
local stdout = require "jrpc.stdout"

local M = {}

M.OPTIONS = options.set({}, stream.OPTIONS, connection.PEER_OPTIONS)

local function open_fd(uv, fd, readable)
  local kind = uv.guess_handle(fd)
  if kind == "pipe" then
    local pipe = uv.new_pipe(false)
    local ok, err = pipe:open(fd)
    if not ok then handles.close(uv, pipe); return nil, err end
    return pipe
  elseif kind == "tty" then
    return uv.new_tty(fd, readable)
  elseif kind == "tcp" then
    local tcp = uv.new_tcp()
    local ok, err = tcp:open(fd)
    if not ok then handles.close(uv, tcp); return nil, err end
    return tcp
  elseif kind == "file" then
    return readable and files.reader(uv, fd) or files.writer(uv, fd)
  end
  return nil, ("descriptor %d is a %s, which cannot be used as a stream"):format(fd, tostring(kind))
end

--- A connection on stdin (fd 0) and stdout (fd 1, or the descriptor
--- jrpc.stdout kept for the protocol). At the end of input the
--- peer decodes what is left, replies are flushed and it closes with
--- "end of input".
---@param loop table
---@param opts? table  peer options + transport options
---@return jrpc.uv.Connection|nil conn
---@return jrpc.Error|nil err  code "stdio"
function M.open(loop, opts)
  opts = options.check("stdio", opts, 2, M.OPTIONS)
  local uv = loop.uv
  local input, err = open_fd(uv, 0, true)
  if not input then return nil, errors.new("stdio", "stdin: " .. err) end
  -- stdout, or the descriptor kept for the protocol (jrpc.stdout)
  local output, err2 = open_fd(uv, stdout.fd(), false)
  if not output then
    handles.close(uv, input)
    return nil, errors.new("stdio", "stdout: " .. err2)
  end
  return stream.new(loop, input, output, opts, { eof_reason = "end of input" }):start()
end

return M
