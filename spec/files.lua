-- spec/files.lua: whole-file reads and writes for the specs (loaded with
-- dofile; not a spec itself).
local M = {}

--- The bytes of a file.
function M.read(path)
  local f = assert(io.open(path, "rb"))
  local s = f:read("*a")
  f:close()
  return s
end

--- The bytes of a temporary file, which is then removed.
function M.take(path)
  local s = M.read(path)
  os.remove(path)
  return s
end

--- Write `s` as the whole file.
function M.write(path, s)
  local f = assert(io.open(path, "wb"))
  f:write(s)
  f:close()
end

return M
