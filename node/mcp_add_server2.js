'use strict';
// The official TypeScript SDK v2 server (@modelcontextprotocol/server 2.4.0
// with its Node HTTP adapter @modelcontextprotocol/node 2.1.2), one
// process, serving the same `add` tool as bench/servers/mcp_add_server.lua:
// bench/deploy_load.sh measures the two side by side.
//
//   node node/mcp_add_server2.js PORT
//
// Wired as the adapter's README shows for plain node:http: the Host and
// Origin guards, then createMcpHandler (the modern 2026-07-28 entry; a
// fresh McpServer per request, as the SDK serves statelessly) through
// toNodeHandler. Prints "listening on http://127.0.0.1:PORT/mcp" on stderr.
const { createServer } = require('node:http');
const { McpServer, createMcpHandler } = require('@modelcontextprotocol/server');
const {
  toNodeHandler, localhostHostValidation, localhostOriginValidation,
} = require('@modelcontextprotocol/node');
const { z } = require('zod');

function makeServer() {
  const server = new McpServer({ name: 'sdk-add-server', version: '1.0.0' });
  server.registerTool('add', {
    description: 'Adds two numbers',
    inputSchema: z.object({ a: z.number(), b: z.number() }),
  }, async ({ a, b }) => ({ content: [{ type: 'text', text: String(a + b) }] }));
  return server;
}

const handle = toNodeHandler(createMcpHandler(makeServer));
const validateHost = localhostHostValidation();
const validateOrigin = localhostOriginValidation();
const port = Number(process.argv[2] || 0);
const http = createServer((req, res) => {
  if (!validateHost(req, res) || !validateOrigin(req, res)) return;
  handle(req, res);
});
http.keepAliveTimeout = 30000;  // as the jrpc workers' idle timeout
http.listen(port, '127.0.0.1', () => {
  process.stderr.write(`listening on http://127.0.0.1:${http.address().port}/mcp\n`);
});
process.on('SIGTERM', () => http.close(() => process.exit(0)));
