-- spec/once.lua (loaded with dofile; not a spec itself): specs that `make
-- test` runs in fewer of its passes. scripts/test.sh and scripts/test_asan.sh
-- name the pass in JRPC_SPEC_PASS ("jit", "asan"; the Lua 5.4 pass and a
-- busted run by hand leave it unset, and run every spec).
--
--   if dofile("spec/once.lua")(pending, "why") then return end
--     skipped in the jit and asan passes: the spec's subject does not
--     depend on the interpreter running busted (a build, a rock install,
--     an outside client against servers the spec starts itself)
--   if dofile("spec/once.lua")(pending, "why", { "asan" }) then return end
--     skipped in the asan pass only: Lua-level behaviour (a CLI's words and
--     exit codes, session timers) whose C paths other specs give the
--     sanitizers already
--
-- (busted's `pending` is passed in: a file loaded with dofile does not see
-- the spec's environment)
return function(pending, why, passes)
  local pass = os.getenv("JRPC_SPEC_PASS")
  if pass == nil or pass == "" then return false end
  local skip = false
  for _, p in ipairs(passes or { "jit", "asan" }) do skip = skip or p == pass end
  if not skip then return false end
  pending(("not in make test's %s pass: %s"):format(pass, why))
  return true
end
