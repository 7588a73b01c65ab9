'use strict';
// The official TypeScript SDK v2 server (@modelcontextprotocol/server with
// its Node HTTP adapter @modelcontextprotocol/node), stateless, one process,
// serving `ping` and the tool `test_echo` in the shape of
// examples/mcp/everything_server.lua's (text and structured content):
// bench/http_edges.lua measures the two side by side.
//
//   node node/mcp_edge_server.js PORT
//
// Wired as node/mcp_add_server2.js: the Host and Origin guards, then
// createMcpHandler (a fresh McpServer per request) through toNodeHandler.
// Prints "listening on http://127.0.0.1:PORT/mcp" on stderr.
const { createServer } = require('node:http');
const { McpServer, createMcpHandler } = require('@modelcontextprotocol/server');
const {
  toNodeHandler, localhostHostValidation, localhostOriginValidation,
} = require('@modelcontextprotocol/node');
const { z } = require('zod');

function makeServer() {
  const server = new McpServer({ name: 'sdk-edge-server', version: '1.0.0' });
  server.registerTool('test_echo', {
    description: 'Echoes its message (structured content too)',
    inputSchema: z.object({ message: z.string() }),
    outputSchema: z.object({ echo: z.string() }),
  }, async ({ message }) => ({
    content: [{ type: 'text', text: message }],
    structuredContent: { echo: message },
  }));
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
http.keepAliveTimeout = 30000;
http.listen(port, '127.0.0.1', () => {
  process.stderr.write(`listening on http://127.0.0.1:${http.address().port}/mcp\n`);
});
process.on('SIGTERM', () => http.close(() => process.exit(0)));
