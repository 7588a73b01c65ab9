// @modelcontextprotocol/sdk 1.32.2 (Streamable HTTP) against the example
// plugin examples/nvim/lua/jrpc_editor served by jrpc.nvim.serve_mcp in a
// headless Neovim (spec/nvim/mcp_serve.lua): lists the tools and buffers,
// reads buffer BUFNR, replaces a range, reads it again, asks for an unknown
// buffer, and sends a foreign Origin and Host. One JSON line per step, for
// spec/nvim/headless_test.lua to compare exactly.
//   node node/mcp_nvim_client.js http://127.0.0.1:PORT/mcp BUFNR
const { Client } = require('@modelcontextprotocol/sdk/client/index.js');
const { StreamableHTTPClientTransport } = require('@modelcontextprotocol/sdk/client/streamableHttp.js');
const http = require('node:http');
const { run } = require('./mcp_common.js');

// A copy of `v` with object keys sorted: the server's Lua tables have no
// key order, and the spec compares the lines as text.
function sorted(v) {
  if (Array.isArray(v)) return v.map(sorted);
  if (v === null || typeof v !== 'object') return v;
  return Object.fromEntries(Object.keys(v).sort().map((k) => [k, sorted(v[k])]));
}

function step(name, value) {
  process.stdout.write(JSON.stringify({ step: name, ...sorted(value) }) + '\n');
}

// A tool result's text (all of its text items, one after another).
function text(result) {
  return result.content.filter((c) => c.type === 'text').map((c) => c.text).join('');
}

// The status of a POST to `url` with `headers` added (node:http, which
// lets a Host header through as given).
function status(url, headers) {
  const u = new URL(url);
  return new Promise((resolve, reject) => {
    const req = http.request({ host: u.hostname, port: u.port, path: u.pathname, method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers } },
    (res) => { res.resume(); resolve(res.statusCode); });
    req.on('error', reject);
    req.end('{"jsonrpc":"2.0","id":1,"method":"ping"}');
  });
}

async function main() {
  const [url, arg] = process.argv.slice(2);
  const bufnr = Number(arg);
  const client = new Client({ name: 'jrpc-nvim-probe', version: '1.0.0' });
  const transport = new StreamableHTTPClientTransport(new URL(url));
  await client.connect(transport);
  step('initialize', { serverVersion: client.getServerVersion() });
  step('tools/list', { names: (await client.listTools()).tools.map((t) => t.name) });
  const listed = await client.callTool({ name: 'list_buffers', arguments: {} });
  step('list_buffers', { structured: listed.structuredContent });
  const before = await client.callTool({ name: 'read_buffer', arguments: { bufnr } });
  step('read_buffer', { text: text(before), isError: before.isError === true });
  const replaced = await client.callTool({ name: 'replace_text', arguments: {
    bufnr, start_line: 1, start_col: 6, end_line: 1, end_col: 11, text: 'editor\nfrom MCP' } });
  step('replace_text', { text: text(replaced), isError: replaced.isError === true });
  const after = await client.callTool({ name: 'read_buffer', arguments: { bufnr } });
  step('read_buffer again', { text: text(after), isError: after.isError === true });
  const outside = await client.callTool({ name: 'replace_text', arguments: {
    bufnr, start_line: 99, start_col: 0, end_line: 99, end_col: 0, text: 'x' } });
  step('replace_text outside', { text: text(outside), isError: outside.isError === true });
  const missing = await client.callTool({ name: 'read_buffer', arguments: { bufnr: 999 } });
  step('read_buffer missing', { text: text(missing), isError: missing.isError === true });
  const diags = await client.callTool({ name: 'diagnostics', arguments: { bufnr } });
  step('diagnostics', { structured: diags.structuredContent });
  step('foreign Origin', { status: await status(url, { origin: 'http://example.com' }) });
  step('foreign Host', { status: await status(url, { host: 'example.com' }) });
  await transport.terminateSession();
  await client.close();
}

run(main);
