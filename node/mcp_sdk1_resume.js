// @modelcontextprotocol/sdk 1.32.2 (legacy era, 2025-11-25) resuming an
// SSE stream of a jrpc MCP server: the client talks through a TCP relay on
// 127.0.0.1 that cuts the connection carrying the tools/call stream right
// after the server's second progress notification; the SDK then resumes
// with GET + Last-Event-ID. Prints one JSON line: the progress seen, the
// result, and the Last-Event-ID of every GET. Used by
// spec/mcp_http_resume_spec.lua:
//   node node/mcp_sdk1_resume.js PORT TOOL N
const net = require('net');
const { Client } = require('@modelcontextprotocol/sdk/client/index.js');
const { StreamableHTTPClientTransport } = require('@modelcontextprotocol/sdk/client/streamableHttp.js');

const [port, tool, n] = [Number(process.argv[2]), process.argv[3], Number(process.argv[4])];
const resumedFrom = [];
let cut = false;

// Relay each connection to the server; watch both directions as text.
const relay = net.createServer((down) => {
  const up = net.connect(port, '127.0.0.1');
  let seen = '';
  down.on('data', (chunk) => {
    const text = chunk.toString('latin1');
    for (const m of text.matchAll(/^last-event-id: *(\S+)/gim)) resumedFrom.push(m[1]);
    // as a reverse proxy does, Host names the server it relays to
    up.write(Buffer.from(text.replace(/^host: *127\.0\.0\.1:\d+\r$/gim, `host: 127.0.0.1:${port}\r`), 'latin1'));
  });
  up.on('data', (chunk) => {
    seen += chunk.toString('latin1');
    if (!cut && /"progress":2[,}]/.test(seen)) {
      // once: the server's end goes at once; the client gets the bytes so
      // far, then the end of a body whose chunked coding never finished
      cut = true;
      up.destroy();
      down.end(chunk);
      return;
    }
    down.write(chunk);
  });
  down.on('error', () => up.destroy());
  up.on('error', () => down.destroy());
  down.on('close', () => up.destroy());
  up.on('close', () => { if (!down.writableEnded) down.destroy(); });
});

async function main() {
  await new Promise((resolve) => relay.listen(0, '127.0.0.1', resolve));
  const url = new URL(`http://127.0.0.1:${relay.address().port}/mcp`);
  const transport = new StreamableHTTPClientTransport(url, {
    reconnectionOptions: { initialReconnectionDelay: 50, maxReconnectionDelay: 200,
      reconnectionDelayGrowFactor: 1.5, maxRetries: 3 },
  });
  const client = new Client({ name: 'resume', version: '1.0.0' });
  const errors = [];
  transport.onerror = (e) => errors.push(String(e));
  await client.connect(transport);
  const progress = [];
  const result = await client.callTool({ name: tool, arguments: { n, pause: 2 } }, undefined,
    { onprogress: (p) => progress.push(p.progress), timeout: 10000 });
  process.stdout.write(JSON.stringify({ cut, progress, result, resumedFrom }) + '\n');
  await client.close();
  relay.close();
}

main().then(() => process.exit(0), (e) => {
  process.stdout.write(JSON.stringify({ error: String(e) }) + '\n');
  process.exit(1);
});
