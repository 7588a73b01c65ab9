-- spec/tls_support.lua: a test PKI made with the `openssl` command (Debian
-- `openssl`, in `make deps`) and `openssl s_server` children, for
-- spec/core_tls_spec.lua and spec/uv_http_client_spec.lua (loaded with
-- dofile; not a spec itself). Nothing here is trusted by the system: the CA
-- exists only in a temporary directory for the length of a run.
local files = dofile("spec/files.lua")

local M = {}

local function sh(cmd)
  local ok = os.execute(cmd)
  assert(ok == true or ok == 0, "failed: " .. cmd)
end

local pki  -- made once per process

--- The test PKI, made on first use: `dir` with `ca.pem`; `srv.pem`/`srv.key`
--- for DNS:localhost and IP:127.0.0.1; `wrong.pem`/`wrong.key` for
--- DNS:wrong.example only (same CA); `www/hello.txt` for `s_server -WWW`.
function M.pki()
  if pki then return pki end
  local p = assert(io.popen("mktemp -d /tmp/jrpc-tls-XXXXXX"))
  local dir = p:read("*l")
  p:close()
  local q = "'" .. dir .. "'"
  local ec = "-newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes"
  sh(("cd %s && openssl req -x509 %s -keyout ca.key -out ca.pem -days 2 -subj '/CN=jrpc test CA' 2>/dev/null"):format(q, ec))
  for _, leaf in ipairs({ { "srv", "localhost", "DNS:localhost,IP:127.0.0.1" },
                          { "wrong", "wrong.example", "DNS:wrong.example" } }) do
    local name, cn, san = leaf[1], leaf[2], leaf[3]
    files.write(dir .. "/" .. name .. ".cnf", "subjectAltName=" .. san .. "\nbasicConstraints=CA:FALSE\n"
      .. "keyUsage=digitalSignature\nextendedKeyUsage=serverAuth\n")
    sh(("cd %s && openssl req %s -keyout %s.key -out %s.csr -subj '/CN=%s' 2>/dev/null && "
      .. "openssl x509 -req -in %s.csr -CA ca.pem -CAkey ca.key -CAcreateserial -out %s.pem -days 2 "
      .. "-extfile %s.cnf 2>/dev/null"):format(q, ec, name, name, cn, name, name, name))
  end
  sh(("mkdir %s/www"):format(q))
  files.write(dir .. "/www/hello.txt", "hello over TLS\n")
  pki = { dir = dir, ca = dir .. "/ca.pem" }
  return pki
end

--- Start `openssl s_server -WWW` (files from www/) with the leaf `name`
--- ("srv" or "wrong") on a free port of 127.0.0.1; returns port, pid.
function M.s_server(name)
  local d = M.pki().dir
  local port, pid = M.start(("cd '%s/www' && exec openssl s_server -accept 127.0.0.1:0 -cert ../%s.pem "
    .. "-key ../%s.key -WWW -naccept 100"):format(d, name, name), "ACCEPT 127%.0%.0%.1:(%d+)")
  return tonumber(port), pid
end

--- Start `cmd` (a shell command, in the background) and wait for a line of
--- its output (stdout and stderr) to match `pattern`; returns the first
--- capture and the pid.
function M.start(cmd, pattern)
  local log = os.tmpname()
  local p = assert(io.popen(("{ %s > '%s' 2>&1 < /dev/null & echo $!; }"):format(cmd, log)))
  local pid = tonumber(p:read("*l"))
  p:close()
  for _ = 1, 250 do
    local f = io.open(log, "rb")
    local text = f and f:read("*a") or ""
    if f then f:close() end
    local got = text:match(pattern)
    if got then
      os.remove(log)
      return got, pid
    end
    os.execute("sleep 0.02")
  end
  M.kill(pid)
  error("did not start: " .. cmd .. ": " .. files.take(log))
end

function M.kill(pid)
  if pid then os.execute("kill " .. pid .. " 2>/dev/null") end
end

--- Remove the PKI directory (at the end of a spec file).
function M.cleanup()
  if pki then os.execute("rm -rf '" .. pki.dir .. "'") end
  pki = nil
end

return M
