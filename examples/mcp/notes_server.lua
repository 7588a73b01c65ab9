-- A server whose offer changes while it serves: the README's example of
-- change notifications ("Change notifications: subscriptions/listen and
-- the legacy ones"), word for word below the first line, and run by
-- spec/mcp_subscriptions_spec.lua. Listeners hear resources/updated for
-- notes://all, and tools/list_changed as clear_notes comes and goes.
-- Run from the repository root: lua5.4 examples/mcp/notes_server.lua (or luajit).
dofile((debug.getinfo(1, "S").source:match("^@(.*)[/\\]") or ".") .. "/../paths.lua")
local mcp = require "jrpc.mcp"
local server = mcp.server{ name = "notes", version = "1.0.0" }
local notes = {}
server:resource{ uri = "notes://all", name = "all notes", mime_type = "text/plain",
  handler = function() return table.concat(notes, "\n") end }

local function clear()
  notes = {}
  server:remove_tool("clear_notes")        -- tools/list_changed
  server:resource_updated("notes://all")   -- resources/updated, to its subscribers
  return "cleared"
end

server:tool{ name = "add_note", description = "Add a note",
  input_schema = { type = "object", properties = { text = { type = "string" } }, required = { "text" } },
  handler = function(args)
    notes[#notes + 1] = args.text
    if #notes == 1 then                    -- something to clear: a new tool, tools/list_changed
      server:tool{ name = "clear_notes", description = "Remove every note", handler = clear }
    end
    server:resource_updated("notes://all")
    return #notes .. " notes"
  end }
server:serve_stdio(require("jrpc").uv.new(require "luv"))
