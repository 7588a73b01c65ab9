-- spec/once.lua (loaded with dofile; not a spec itself): specs whose subject
-- does not depend on the interpreter running busted (a build, a rock
-- install, an outside client against servers the spec starts under both
-- interpreters) run once in `make test`, in its Lua 5.4 pass.
-- scripts/test.sh names the other passes in JRPC_SPEC_PASS (jit, asan);
-- a busted run by hand, with it unset, runs them all.
--
--   if dofile("spec/once.lua")(pending, "why it runs once") then return end
--
-- (busted's `pending` is passed in: a file loaded with dofile does not see
-- the spec's environment)
return function(pending, why)
  local pass = os.getenv("JRPC_SPEC_PASS")
  if pass == nil or pass == "" then return false end
  pending(("runs once in make test, in its Lua 5.4 pass (this is the %s pass): %s"):format(pass, why))
  return true
end
