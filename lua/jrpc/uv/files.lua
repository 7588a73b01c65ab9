--- Regular files (and character devices such as /dev/null) as stream ends.
-- libuv cannot poll them, so stdin or stdout redirected to a file cannot be
-- a pipe handle. These two objects offer the few stream methods a
-- connection uses: the reader reads with uv.fs_read on libuv's thread pool,
-- one read at a time; the writer writes at once with a synchronous
-- uv.fs_write (a file write does not wait on a slow reader).
local co = require "jrpc.uv.co"

local M = {}

local CHUNK = 65536

---@class jrpc.uv.FileReader
local Reader = {}
Reader.__index = Reader

--- A reader on file descriptor `fd`, from its current position.
---@param uv table
---@param fd integer
function M.reader(uv, fd)
  return setmetatable({ uv = uv, fd = fd, reading = false, busy = false, closing = false }, Reader)
end

-- One read at a time keeps the chunks in order. A read already under way
-- when read_stop is called is still delivered (one chunk at most).
function Reader:_next()
  if not self.reading or self.busy or self.closing then return end
  self.busy = true
  self.uv.fs_read(self.fd, CHUNK, -1, self._on_data)
end

function Reader:read_start(cb)
  self.cb, self.reading = cb, true
  self._on_data = self._on_data or co.guard(function(err, data)
    self.busy = false
    if self.closing then return end
    if err then return self.cb(err) end
    if data == "" then
      self.reading = false
      return self.cb(nil, nil)  -- the end, as a stream reports it
    end
    self.cb(nil, data)
    self:_next()
  end, "file read")
  self:_next()
  return true
end

function Reader:read_stop()
  self.reading = false
  return true
end

function Reader:is_closing() return self.closing end

--- Stop reading for good. The descriptor stays open: it is not ours.
function Reader:close() self.closing, self.reading = true, false end

---@class jrpc.uv.FileWriter
local Writer = {}
Writer.__index = Writer

--- A writer on file descriptor `fd` (appends at its current position).
---@param uv table
---@param fd integer
function M.writer(uv, fd)
  return setmetatable({ uv = uv, fd = fd, closing = false }, Writer)
end

--- Write all of `data` now. Returns true (the callback is not called on
--- success: nothing is ever queued), or nil, err.
function Writer:write(data)
  local pos = 1
  while pos <= #data do
    local n, err = self.uv.fs_write(self.fd, pos == 1 and data or data:sub(pos), -1)
    if not n then return nil, err end
    if n == 0 then return nil, "EIO: file write made no progress" end
    pos = pos + n
  end
  return true
end

function Writer.get_write_queue_size() return 0 end
function Writer:is_closing() return self.closing end
function Writer:close() self.closing = true end

return M
