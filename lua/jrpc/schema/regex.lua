--- The regular expressions of JSON Schema (`pattern`, `patternProperties`)
-- are ECMA-262's. Lua has none, and Lua patterns differ (no alternation,
-- no counted repeats), so this is a small backtracking matcher for the part
-- of ECMA-262 that schemas use, working on code points: literals, `.`,
-- classes and ranges, `\d \w \s` and their negations, `\b`, anchors,
-- groups, alternation, greedy and lazy `* + ? {n,m}`, and lookahead.
-- What it does not do (backreferences, lookbehind, `\p{...}`, flags) is an
-- error when the pattern is compiled, never a pattern that passes silently.
local M = {}

local byte, char = string.byte, string.char

-- The code points of `s` (a byte that starts no valid sequence stands for
-- itself, so a match never fails on bad input).
local function codepoints(s)
  local out, n, i, len = {}, 0, 1, #s
  while i <= len do
    local c = byte(s, i)
    local cp, extra = c, 0
    if c >= 0xF0 and c < 0xF8 then cp, extra = c - 0xF0, 3
    elseif c >= 0xE0 then cp, extra = c - 0xE0, 2
    elseif c >= 0xC0 then cp, extra = c - 0xC0, 1 end
    if c >= 0xF8 or (c >= 0x80 and c < 0xC0) then extra = 0 end
    local ok = i + extra <= len
    local v = cp
    for j = 1, extra do
      local b = ok and byte(s, i + j)
      if not b or b < 0x80 or b >= 0xC0 then ok = false; break end
      v = v * 64 + (b - 0x80)
    end
    n = n + 1
    if ok then
      out[n] = v
      i = i + extra + 1
    else
      out[n] = c
      i = i + 1
    end
  end
  return out, n
end
M.codepoints = codepoints

local function is_digit(c) return c >= 48 and c <= 57 end
local function is_word(c)
  return (c >= 48 and c <= 57) or (c >= 65 and c <= 90) or (c >= 97 and c <= 122) or c == 95
end
local SPACE = {
  [9] = true, [10] = true, [11] = true, [12] = true, [13] = true, [32] = true,
  [0xA0] = true, [0x1680] = true, [0x2028] = true, [0x2029] = true,
  [0x202F] = true, [0x205F] = true, [0x3000] = true, [0xFEFF] = true,
}
local function is_space(c) return SPACE[c] or (c >= 0x2000 and c <= 0x200A) end
local function is_line_end(c) return c == 10 or c == 13 or c == 0x2028 or c == 0x2029 end

local CLASS = {
  [100] = is_digit, [119] = is_word, [115] = is_space,                        -- d w s
  [68] = function(c) return not is_digit(c) end,                              -- D
  [87] = function(c) return not is_word(c) end,                               -- W
  [83] = function(c) return not is_space(c) end,                              -- S
}
local CONTROL = { [116] = 9, [110] = 10, [118] = 11, [102] = 12, [114] = 13 } -- t n v f r

-- Parser: a recursive descent over the pattern's code points. Errors are
-- raised as {regex = reason} and turned into `nil, reason` by M.compile.
local Parser = {}
Parser.__index = Parser

local function fail(reason) error({ regex = reason }, 0) end

function Parser:peek(k) return self.cp[self.i + (k or 0)] end

function Parser:hex(count)
  local v = 0
  for _ = 1, count do
    local c = self:peek()
    local d = c and tonumber(char(c), 16)
    if not c or c > 127 or not d then return nil end
    v = v * 16 + d
    self.i = self.i + 1
  end
  return v
end

-- After a backslash: a code point, or a predicate for a class escape.
function Parser:escape(in_class)
  local c = self:peek()
  if c == nil then fail("a pattern cannot end with a backslash") end
  self.i = self.i + 1
  if CLASS[c] then return nil, CLASS[c] end
  if CONTROL[c] then return CONTROL[c] end
  if c == 98 and in_class then return 8 end                                 -- \b in a class
  if c == 48 and not (self:peek() and is_digit(self:peek())) then return 0 end
  if c >= 49 and c <= 57 then fail("backreferences (\\" .. char(c) .. ") are not supported") end
  if c == 107 then fail("named backreferences (\\k) are not supported") end
  if c == 112 or c == 80 then fail("Unicode property escapes (\\p{...}) are not supported") end
  if c == 99 then                                                           -- \cX
    local x = self:peek()
    if x and ((x >= 65 and x <= 90) or (x >= 97 and x <= 122)) then
      self.i = self.i + 1
      return x % 32
    end
    fail("\\c must be followed by a letter")
  end
  if c == 120 then                                                          -- \xHH
    local v = self:hex(2)
    if not v then fail("\\x needs two hex digits") end
    return v
  end
  if c == 117 then                                                          -- \uHHHH, \u{...}
    if self:peek() == 123 then
      self.i = self.i + 1
      local v, digits = 0, 0
      while self:peek() and self:peek() ~= 125 do
        local d = self:peek() < 128 and tonumber(char(self:peek()), 16)
        if not d then fail("\\u{...} needs hex digits") end
        v = v * 16 + d
        digits = digits + 1
        self.i = self.i + 1
      end
      if self:peek() ~= 125 or digits == 0 or v > 0x10FFFF then fail("bad \\u{...} escape") end
      self.i = self.i + 1
      return v
    end
    local v = self:hex(4)
    if not v then fail("\\u needs four hex digits") end
    if v >= 0xD800 and v <= 0xDBFF and self:peek() == 92 and self:peek(1) == 117 then
      local save = self.i
      self.i = self.i + 2
      local lo = self:hex(4)
      if lo and lo >= 0xDC00 and lo <= 0xDFFF then
        return 0x10000 + (v - 0xD800) * 0x400 + (lo - 0xDC00)
      end
      self.i = save
    end
    return v
  end
  if (c >= 48 and c <= 57) or (c >= 65 and c <= 90) or (c >= 97 and c <= 122) then
    fail("unknown escape \\" .. char(c))
  end
  return c                                                                  -- \. \\ \/ \- ...
end

-- [...]: a predicate over code points.
function Parser:class()
  local neg = false
  if self:peek() == 94 then neg = true; self.i = self.i + 1 end
  local ranges, preds = {}, {}
  local first = true
  while true do
    local c = self:peek()
    if c == nil then fail("unterminated character class") end
    if c == 93 and not first then self.i = self.i + 1; break end
    if c == 93 then self.i = self.i + 1; break end                           -- [] matches nothing
    first = false
    local lo, pred
    self.i = self.i + 1
    if c == 92 then lo, pred = self:escape(true) else lo = c end
    if pred then
      preds[#preds + 1] = pred
    else
      local hi = lo
      if self:peek() == 45 and self:peek(1) and self:peek(1) ~= 93 then     -- a-z
        self.i = self.i + 1
        local d = self:peek()
        self.i = self.i + 1
        local p
        if d == 92 then hi, p = self:escape(true) else hi = d end
        if p then fail("a class escape cannot end a range") end
        if hi < lo then fail("range out of order in character class") end
      end
      ranges[#ranges + 1] = { lo, hi }
    end
  end
  local nr, np = #ranges, #preds
  return function(cp)
    local hit = false
    for k = 1, nr do
      local r = ranges[k]
      if cp >= r[1] and cp <= r[2] then hit = true; break end
    end
    if not hit then
      for k = 1, np do
        if preds[k](cp) then hit = true; break end
      end
    end
    return hit ~= neg
  end
end

-- {n}, {n,}, {n,m} at self.i (on the "{"): min, max (nil: no limit), or
-- nothing when the brace is a literal.
function Parser:braces()
  local j = self.i + 1
  local function number()
    local v, start = 0, j
    while self.cp[j] and is_digit(self.cp[j]) do v = v * 10 + self.cp[j] - 48; j = j + 1 end
    if j == start then return nil end
    return v
  end
  local lo = number()
  if not lo then return nil end
  local hi = lo
  if self.cp[j] == 44 then
    j = j + 1
    hi = number()
    if hi == nil then hi = false end
  end
  if self.cp[j] ~= 125 then return nil end
  self.i = j + 1
  if hi and hi < lo then fail("numbers out of order in {} quantifier") end
  return lo, hi or nil, true
end

function Parser:atom()
  local c = self:peek()
  self.i = self.i + 1
  if c == 46 then return { t = "pred", f = function(x) return not is_line_end(x) end } end
  if c == 94 then return { t = "bol" } end
  if c == 36 then return { t = "eol" } end
  if c == 91 then return { t = "pred", f = self:class() } end
  if c == 40 then
    local look
    if self:peek() == 63 then                                                -- (?
      local d = self:peek(1)
      if d == 58 then self.i = self.i + 2                                    -- (?:
      elseif d == 61 or d == 33 then look = d == 33; self.i = self.i + 2     -- (?= (?!
      elseif d == 60 and (self:peek(2) == 61 or self:peek(2) == 33) then
        fail("lookbehind is not supported")
      elseif d == 60 then                                                    -- (?<name>
        self.i = self.i + 2
        while self:peek() and self:peek() ~= 62 do self.i = self.i + 1 end
        if self:peek() ~= 62 then fail("unterminated group name") end
        self.i = self.i + 1
      else
        fail("group flags (?" .. (d and char(d % 256) or "") .. ") are not supported")
      end
    end
    local inner = self:alternation()
    if self:peek() ~= 41 then fail("missing )") end
    self.i = self.i + 1
    if look ~= nil then return { t = "look", neg = look, node = inner } end
    return inner
  end
  if c == 41 then fail("unmatched )") end
  if c == 42 or c == 43 or c == 63 then fail("nothing to repeat") end
  if c == 92 then
    local d = self:peek()
    if d == 98 or d == 66 then self.i = self.i + 1; return { t = "wordb", neg = d == 66 } end
    local v, pred = self:escape(false)
    if pred then return { t = "pred", f = pred } end
    return { t = "char", c = v }
  end
  if c == 123 then
    self.i = self.i - 1
    if self:braces() then fail("nothing to repeat") end
    self.i = self.i + 1
  end
  return { t = "char", c = c }
end

-- A quantifier at self.i: min, max (nil: no limit), true; or nothing.
function Parser:quantifier()
  local c = self:peek()
  if c == 42 then self.i = self.i + 1; return 0, nil, true end
  if c == 43 then self.i = self.i + 1; return 1, nil, true end
  if c == 63 then self.i = self.i + 1; return 0, 1, true end
  if c == 123 then return self:braces() end
  return nil
end

function Parser:term()
  local node = self:atom()
  local lo, hi, ok = self:quantifier()
  if not ok then return node end
  if node.t == "bol" or node.t == "eol" or node.t == "wordb" then fail("nothing to repeat") end
  local greedy = true
  if self:peek() == 63 then greedy = false; self.i = self.i + 1 end
  if select(3, self:quantifier()) then fail("nothing to repeat") end
  return { t = "rep", node = node, min = lo, max = hi, greedy = greedy }
end

function Parser:sequence()
  local list = {}
  while true do
    local c = self:peek()
    if c == nil or c == 124 or c == 41 then break end
    list[#list + 1] = self:term()
  end
  return { t = "seq", list = list }
end

function Parser:alternation()
  local alts = { self:sequence() }
  while self:peek() == 124 do
    self.i = self.i + 1
    alts[#alts + 1] = self:sequence()
  end
  if #alts == 1 then return alts[1] end
  return { t = "alt", list = alts }
end

-- Matchers: m(i, k) tries the node at code point i and calls the
-- continuation k with the position after it; true when k accepted.
-- `st` holds the subject (st.s code points, st.n their count) and the steps
-- left: a pattern that backtracks without end on some string (`^(a+)+$`)
-- stops there instead of holding the server, and the match is reported
-- undecided.
local STEPS = 250000

local function out_of_steps() error({ regex_steps = true }, 0) end

-- A predicate for a node that matches exactly one code point (a char, a
-- class, or an alternation of those), or nil.
local function single(node)
  if node.t == "char" then
    local want = node.c
    return function(c) return c == want end
  end
  if node.t == "pred" then return node.f end
  if node.t == "seq" and #node.list == 1 then return single(node.list[1]) end
  if node.t == "alt" then
    local preds = {}
    for j = 1, #node.list do
      preds[j] = single(node.list[j])
      if not preds[j] then return nil end
    end
    return function(c)
      for j = 1, #preds do
        if preds[j](c) then return true end
      end
      return false
    end
  end
  return nil
end

-- The predicates of a node that matches a fixed sequence of single code
-- points (`ab`, `(?:a|b)c`), or nil.
local function fixed(node)
  local one = single(node)
  if one then return { one } end
  if node.t ~= "seq" or #node.list == 0 then return nil end
  local list = {}
  for j = 1, #node.list do
    local p = single(node.list[j])
    if not p then return nil end
    list[j] = p
  end
  return list
end

-- A repeat of a fixed-width node, without recursion: count how many
-- repetitions match from i, then hand each possible end to k, longest
-- first when greedy.
local function repeat_fixed(preds, lo, hi, greedy, st)
  local w = #preds
  return function(i, k)
    local s, n = st.s, st.n
    local count, at = 0, i
    while (not hi or count < hi) and at + w - 1 <= n do
      local ok = true
      for j = 1, w do
        if not preds[j](s[at + j - 1]) then ok = false; break end
      end
      if not ok then break end
      count, at = count + 1, at + w
    end
    st.steps = st.steps - count - 1
    if st.steps < 0 then out_of_steps() end
    if count < lo then return false end
    if greedy then
      for c = count, lo, -1 do
        if k(i + c * w) then return true end
      end
    else
      for c = lo, count do
        if k(i + c * w) then return true end
      end
    end
    return false
  end
end

local function repeat_general(m, lo, hi, greedy, st)
  local function step(i, count, k)
    st.steps = st.steps - 1
    if st.steps < 0 then out_of_steps() end
    local function more()
      if hi and count >= hi then return false end
      return m(i, function(j)
        if j == i and count >= lo then return false end      -- an empty pass repeats forever
        return step(j, count + 1, k)
      end)
    end
    if count < lo then return more() end
    if greedy then return more() or k(i) end
    return k(i) or more()
  end
  return function(i, k) return step(i, 0, k) end
end

local build

build = function(node, st)
  local t = node.t
  local pred = single(node)
  if pred then
    return function(i, k)
      local c = st.s[i]
      if c ~= nil and pred(c) then return k(i + 1) end
      return false
    end
  end
  if t == "seq" then
    local n = #node.list
    if n == 0 then return function(i, k) return k(i) end end
    local ms = {}
    for j = 1, n do ms[j] = build(node.list[j], st) end
    local function from(j, i, k)
      if j == n then return ms[j](i, k) end
      return ms[j](i, function(p) return from(j + 1, p, k) end)
    end
    return function(i, k) return from(1, i, k) end
  end
  if t == "alt" then
    local ms = {}
    for j = 1, #node.list do ms[j] = build(node.list[j], st) end
    return function(i, k)
      for j = 1, #ms do
        if ms[j](i, k) then return true end
      end
      return false
    end
  end
  if t == "rep" then
    local preds = fixed(node.node)
    if preds then return repeat_fixed(preds, node.min, node.max, node.greedy, st) end
    return repeat_general(build(node.node, st), node.min, node.max, node.greedy, st)
  end
  if t == "look" then
    local m, neg = build(node.node, st), node.neg
    local function accept() return true end
    return function(i, k)
      if m(i, accept) ~= neg then return k(i) end
      return false
    end
  end
  if t == "bol" then return function(i, k) return i == 1 and k(i) end end
  if t == "eol" then return function(i, k) return i == st.n + 1 and k(i) end end
  if t == "wordb" then
    local neg = node.neg
    return function(i, k)
      local a = i > 1 and is_word(st.s[i - 1])
      local b = i <= st.n and is_word(st.s[i])
      if (a ~= b) ~= neg then return k(i) end
      return false
    end
  end
  error("unknown regex node " .. tostring(t))
end

--- A function `find(s)` that says whether the regular expression `source`
--- matches somewhere in the string s (ECMA-262 `RegExp.prototype.test`
--- without flags): true or false, or nil and why it could not tell (the
--- match took too many steps or nested too deep); or, from compile, nil and
--- the reason the pattern cannot be compiled.
function M.compile(source)
  local cp, n = codepoints(source)
  local p = setmetatable({ cp = cp, n = n, i = 1 }, Parser)
  local ok, tree = pcall(function()
    local root = p:alternation()
    if p.i <= n then fail("unmatched )") end
    return root
  end)
  if not ok then
    if type(tree) == "table" and tree.regex then return nil, tree.regex end
    error(tree, 0)
  end
  local st = { s = nil, n = 0, steps = 0 }
  local m = build(tree, st)
  local anchored = tree.t == "seq" and tree.list[1] and tree.list[1].t == "bol"
  local function accept() return true end
  local function search()
    for i = 1, anchored and 1 or st.n + 1 do
      if m(i, accept) then return true end
    end
    return false
  end
  return function(s)
    st.s, st.n = codepoints(s)
    st.steps = STEPS
    local done, found = pcall(search)
    st.s = nil
    if done then return found end
    if type(found) == "table" and found.regex_steps then
      return nil, "the match took more than " .. STEPS .. " steps"
    end
    if type(found) == "string" and found:find("stack overflow", 1, true) then
      return nil, "the match nested too deep"
    end
    error(found, 0)
  end
end

return M
