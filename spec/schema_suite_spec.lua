-- The JSON Schema Test Suite's draft2020-12 cases against jrpc.schema.
--
-- The suite (json-schema-org/JSON-Schema-Test-Suite) is read from the
-- directory named by JSON_SCHEMA_TEST_SUITE (a checkout of it: the
-- directory that holds tests/draft2020-12). No npm or Debian package ships
-- the 2020-12 cases, and third-party files are not copied into this
-- repository; without the variable the spec is reported pending, never
-- passed. Every file of tests/draft2020-12 runs except those in SKIP_FILES,
-- and every case of them except those in SKIP_CASES, each with its reason;
-- the counts are printed at the end.
local jrpc = require "jrpc"
local schema = require "jrpc.schema"
local files = dofile("spec/files.lua")

local root = os.getenv("JSON_SCHEMA_TEST_SUITE")
local dir = root and (root .. "/tests/draft2020-12")

local SKIP_FILES = {
  ["refRemote.json"] = "remote references: jrpc.schema never fetches a schema",
  ["vocabulary.json"] = "$vocabulary needs a custom meta-schema fetched by its URI",
}

-- file → case description → {reason, the compile error it gets}: each of
-- these is checked to be refused when compiled, never passed silently.
local META = { "they refer to the 2020-12 meta-schema by its URI, which is never fetched",
  'cannot resolve $ref "https://json-schema.org/draft/2020-12/schema"' }
local PROPERTY_ESCAPE = { "\\p{...} needs Unicode tables, which the matcher does not have",
  "Unicode property escapes (\\p{...}) are not supported" }
local REMOTE = { "they refer to the suite's remotes/ by URL, which are never fetched", "cannot resolve $ref" }
-- (no compile error: the host names pass as plain RFC 1123 names)
local IDNA = { "the IDNA rules for A-labels need Unicode tables: not checked" }
local SKIP_CASES = {
  ["defs.json"] = { ["validate definition against metaschema"] = META },
  ["ref.json"] = { ["remote ref, containing refs itself"] = META },
  ["pattern.json"] = { ["pattern with Unicode property escape requires unicode mode"] = PROPERTY_ESCAPE },
  ["patternProperties.json"] = { ["patternProperties with Unicode property escape"] = PROPERTY_ESCAPE },
  ["dynamicRef.json"] = {
    ["strict-tree schema, guards against misspelled properties"] = REMOTE,
    ["tests for implementation dynamic anchor and reference link"] = REMOTE,
    ["$ref and $dynamicAnchor are independent of order - $defs first"] = REMOTE,
    ["$ref and $dynamicAnchor are independent of order - $ref first"] = REMOTE,
    ["$ref to $dynamicRef finds detached $dynamicAnchor"] = REMOTE,
  },
  ["optional/ecmascript-regex.json"] = {
    ["patterns always use unicode semantics with pattern"] = PROPERTY_ESCAPE,
    ["pattern with non-ASCII digits"] = PROPERTY_ESCAPE,
    ["patterns always use unicode semantics with patternProperties"] = PROPERTY_ESCAPE,
    ["patternProperties with non-ASCII digits"] = PROPERTY_ESCAPE,
  },
  ["optional/format/hostname.json"] = { ["validation of A-label (punycode) host names"] = IDNA },
}

-- From optional/: the regular expression files, and the formats
-- jrpc.schema asserts (option formats = true); the rest is skipped.
local OPTIONAL = { "ecmascript-regex.json", "non-bmp-regex.json" }
local FORMATS = { "date-time", "date", "time", "email", "hostname", "uri", "uri-reference", "uuid",
  "ipv4", "ipv6" }

local function list_dir(path)
  local out = {}
  local p = io.popen("ls " .. path .. " 2>/dev/null")
  for name in p:lines() do out[#out + 1] = name end
  p:close()
  return out
end

-- The core holds no NUL in strings (README, "Numbers and LuaJIT"): the
-- two cases that use "\u0000" get "\u0001" instead in both schema and data,
-- which keeps their meaning (the suite uses \u0001 nowhere in 2020-12).
local function decode(text)
  return assert(jrpc.decode((text:gsub("\\u0000", "\\u0001")), 1000))
end

describe("JSON Schema Test Suite, draft2020-12", function()
  if not (dir and io.open(dir .. "/type.json")) then
    pending("set JSON_SCHEMA_TEST_SUITE to a checkout of json-schema-org/JSON-Schema-Test-Suite")
    return
  end
  local counts = { files = 0, cases = 0, tests = 0, skipped_files = {}, skipped_cases = {} }
  local function run(name, opts)
    counts.files = counts.files + 1
    local groups = decode(files.read(dir .. "/" .. name))
    describe(name, function()
      for _, group in ipairs(groups) do
        local why = SKIP_CASES[name] and SKIP_CASES[name][group.description]
        if why then
          counts.skipped_cases[#counts.skipped_cases + 1] = name .. " / " .. group.description .. ": " .. why[1]
          if why[2] then
            it(group.description .. " is refused when compiled", function()
              local check, err = schema.compile(group.schema, opts)
              assert.is_nil(check)
              assert.is_truthy(err:find(why[2], 1, true), err)
            end)
          end
        else
          counts.cases = counts.cases + 1
          describe(group.description, function()
            local check, err = schema.compile(group.schema, opts)
            for _, t in ipairs(group.tests) do
              counts.tests = counts.tests + 1
              it(t.description, function()
                assert.is_nil(err)
                local ok, msg = check(t.data)
                if t.valid then
                  assert.is_true(ok, msg)
                else
                  assert.is_false(ok)
                  assert.is_string(msg)
                end
              end)
            end
          end)
        end
      end
    end)
  end
  for _, name in ipairs(list_dir(dir)) do
    if name == "optional" then
      counts.skipped_files[#counts.skipped_files + 1] = "optional/ (but for the regex and format files below):"
        .. " optional behaviour (bignums, other formats, format-assertion meta-schemas, ...)"
    elseif SKIP_FILES[name] then
      counts.skipped_files[#counts.skipped_files + 1] = name .. ": " .. SKIP_FILES[name]
    elseif name:match("%.json$") then
      run(name)
    end
  end
  for _, f in ipairs(OPTIONAL) do run("optional/" .. f) end
  for _, f in ipairs(FORMATS) do run("optional/format/" .. f .. ".json", { formats = true }) end
  it("skips only what it lists", function()
    print(("\nJSON Schema Test Suite draft2020-12: %d files, %d cases, %d tests"):format(
      counts.files, counts.cases, counts.tests))
    print("skipped files:\n  " .. table.concat(counts.skipped_files, "\n  "))
    print("skipped cases:\n  " .. (#counts.skipped_cases > 0 and table.concat(counts.skipped_cases, "\n  ") or "none"))
    -- (at the suite's commit 44401e0c, 2026-08-22: 56 files, 385 cases, 1712 tests)
    assert.is_true(counts.files >= 40 and counts.tests >= 1000)
    -- every listed skip still names a case of the suite
    local listed = 0
    for _, cases in pairs(SKIP_CASES) do
      for _ in pairs(cases) do listed = listed + 1 end
    end
    assert.are.equal(listed, #counts.skipped_cases)
  end)
end)
