--- Compiling a schema document into one check function made of closures:
-- every subschema becomes a function `f(v, path, errs, ev)` that returns
-- whether `v` is valid. With `errs` nil it stops at the first failure and
-- builds no path (the fast path); with a list it records every failure
-- (`path` is then the value's JSON pointer). `ev`, when the document uses
-- `unevaluated*`, collects what this subschema evaluated in the value (see
-- `merge`), for the keywords of the schema around it.
local index = require "jrpc.schema.index"
local cycles = require "jrpc.schema.cycles"
local value = require "jrpc.schema.value"
local path_ = require "jrpc.schema.path"

local kind, push = value.kind, path_.push

local M = {}

-- The keyword compilers, in the order their failures are reported.
local KEYWORDS = {}
for _, name in ipairs { "ref", "scalar", "array", "object", "logic", "unevaluated" } do
  local list = require("jrpc.schema.keywords." .. name)
  for i = 1, #list do KEYWORDS[#KEYWORDS + 1] = list[i] end
end

local merge = require("jrpc.schema.annotations").merge

local function pass() return true end
local function reject(_, path, errs)
  if errs then push(errs, path, "not allowed") end
  return false
end

local Compiler = {}
Compiler.__index = Compiler

--- Raise a compile error naming the schema location `ptr`.
function Compiler.fail(_, ptr, message)
  error({ schema_error = ("schema %s: %s"):format(ptr == "" and "(root)" or ptr, message) }, 0)
end

--- The check function of the subschema `node` found at schema location
--- `ptr` (compiled once per table).
function Compiler:compile(node, ptr)
  if node == true then return pass end
  if node == false then return reject end
  local cached = self.cache[node]
  if cached then return cached end
  if type(node) ~= "table" or kind(node) ~= "object" then
    local k = kind(node)
    if k == "integer" then k = "number" end
    self:fail(ptr, "expected a schema (an object or a boolean), got " .. (k or type(node)))
  end
  -- A recursive $ref reaches this table again before its check exists:
  -- it finds this forwarder, which calls the real check once built.
  local real
  self.cache[node] = function(v, path, errs, ev) return real(v, path, errs, ev) end
  local base = self.ix.base[node] or self.base_hint or index.ROOT
  local checks = {}
  for i = 1, #KEYWORDS do
    local kw = KEYWORDS[i]
    local v = node[kw[1]]
    if v ~= nil then
      local f = kw[2](self, v, node, ptr .. "/" .. kw[1], base)
      if f then checks[#checks + 1] = f end
    end
  end
  local n, track = #checks, self.track
  if n == 0 then
    real = pass
  elseif not track and n == 1 then
    local f = checks[1]
    real = function(v, path, errs) return f(v, kind(v), path, errs, nil) end
  elseif not track then
    real = function(v, path, errs)
      local k, ok = kind(v), true
      for i = 1, n do
        if not checks[i](v, k, path, errs, nil) then
          if not errs then return false end
          ok = false
        end
      end
      return ok
    end
  else
    -- Annotations are gathered only where some schema will read them: for
    -- the schema around (ev) or this one's own unevaluated* keywords.
    local reads = node.unevaluatedProperties ~= nil or node.unevaluatedItems ~= nil
    real = function(v, path, errs, ev)
      local k, ok = kind(v), true
      local my = (ev or reads) and {} or nil
      for i = 1, n do
        if not checks[i](v, k, path, errs, my) then
          if not errs then return false end
          ok = false
        end
      end
      if ok and ev then merge(ev, my) end
      return ok
    end
  end
  if self.scope and (node["$id"] ~= nil or node == self.root) then
    real = self:enter(base, real)
  end
  self.cache[node] = real
  return real
end

--- `f` wrapped so that while it runs, the schema resource `base` is in the
--- dynamic scope (the resources evaluation went through, outermost first),
--- where $dynamicRef looks for its anchor. Only documents that use
--- $dynamicRef pay for it.
function Compiler:enter(base, f)
  local scope = self.scope
  return function(v, path, errs, ev)
    local n = scope.n + 1
    scope[n] = base
    scope.n = n
    local ok = f(v, path, errs, ev)
    scope.n = n - 1
    return ok
  end
end

--- The check of the subschema a $ref names, compiled once the document's
--- own walk is over (so a reference to an enclosing schema works).
function Compiler:target(node, ptr, base)
  if node == true then return pass end
  if node == false then return reject end
  self.pending[#self.pending + 1] = { node, ptr, base }
  local cache = self.cache
  local f = function(v, path, errs, ev)
    return cache[node](v, path, errs, ev)
  end
  if self.scope then return self:enter(base, f) end
  return f
end

--- Compile the document `root`; raises {schema_error = message}.
function M.compile(root, opts)
  local ix = index.build(root)
  local c = setmetatable({ ix = ix, opts = opts, cache = {}, pending = {}, track = ix.track,
    root = root, scope = ix.scoped and { n = 0 } or nil }, Compiler)
  local top = c:compile(root, "")
  local loop = cycles.find(ix, root)
  if loop then
    c:fail("", ("$ref %s leads back to itself without moving into the value"):format(value.show(loop)))
  end
  local i = 1
  while i <= #c.pending do
    local p = c.pending[i]
    if not c.cache[p[1]] then
      c.base_hint = p[3]
      c:compile(p[1], p[2])
      c.base_hint = nil
    end
    i = i + 1
  end
  -- Checks that reached a forwarder keep it; it calls the finished check.
  local scope = c.scope
  if scope then
    -- A check that raised (a stack overflow) may have left entries.
    local inner = top
    top = function(v, path, errs, ev)
      scope.n = 0
      return inner(v, path, errs, ev)
    end
  end
  return top
end

return M
