-- spec/task_times.lua (loaded with dofile; not a spec itself): a task as the
-- wire carries it, its two times checked as ISO 8601 UTC and taken out, for
-- the specs of MCP tasks. Takes busted's assert (a file loaded with dofile
-- does not see the spec's environment).
local ISO = "^%d%d%d%d%-%d%d%-%d%dT%d%d:%d%d:%d%dZ$"

return function(assert)
  return function(t)
    assert.matches(ISO, t.createdAt)
    assert.matches(ISO, t.lastUpdatedAt)
    t.createdAt, t.lastUpdatedAt = nil, nil
    return t
  end
end
