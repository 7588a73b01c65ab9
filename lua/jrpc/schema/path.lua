--- Failures and the JSON pointer paths that name them. A check builds
-- paths only when it reports failures (`errs` is a list), never on the
-- fast path, where it stops at the first failure.
local escape = require("jrpc.schema.uri").escape

local M = {}

--- The path of `key` (a property name or a 0-based index) under `path`.
function M.child(path, key)
  return path .. "/" .. escape(key)
end

--- Record a failure at `path`.
function M.push(errs, path, message)
  errs[#errs + 1] = { path = path, message = message }
end

--- One failure as a line: "/items/2/name: expected string, got number"
--- ("(root)" for the whole value).
function M.format(e)
  return (e.path == "" and "(root)" or e.path) .. ": " .. e.message
end

return M
