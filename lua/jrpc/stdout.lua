--- Stdout kept for a stdio transport's protocol alone: the transports
-- write to a private copy of the descriptor, and descriptor 1 becomes a
-- copy of stderr, so `print`, `io.write`, `io.stdout` and anything C code
-- or a child writes to stdout go to stderr instead of into the middle of
-- the message stream. Descriptors are the process's, so this state is too:
-- this module owns it, and both stdio transports ask it where to write.
local has_lineread, lineread = pcall(require, "jrpc.lineread")

local M = {}

local kept_fd  -- the protocol's descriptor once kept, else nil

--- Keep stdout for the protocol (once per process; later calls return the
--- same descriptor). Returns that descriptor, or nil and why.
---@return integer|nil fd
---@return string|nil err
function M.keep()
  if kept_fd then return kept_fd end
  if not has_lineread then return nil, "cannot keep stdout: the C module jrpc.lineread is not installed" end
  local fd, err = lineread.keep_stdout()
  if not fd then return nil, err end
  kept_fd = fd
  io.stdout:setvbuf("line")  -- it is stderr now: show each line as it is written
  return fd
end

--- The descriptor the protocol's output goes to: the kept one, or 1.
---@return integer
function M.fd()
  return kept_fd or 1
end

--- True once stdout is kept.
---@return boolean
function M.kept()
  return kept_fd ~= nil
end

--- Write `bytes` to the kept descriptor; true, or nil and why.
---@param bytes string
---@return true|nil ok
---@return string|nil err
function M.write(bytes)
  return lineread.write(assert(kept_fd, "stdout is not kept"), bytes)
end

return M
