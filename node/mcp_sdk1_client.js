// @modelcontextprotocol/sdk 1.32.2 (legacy era, 2025-11-25: initialize)
// drives examples/mcp/everything_server.lua over stdio or Streamable HTTP
// and prints one JSON line per step (node/mcp_common.js), for
// spec/mcp_interop_spec.lua to compare exactly. From the repository root:
//   node node/mcp_sdk1_client.js stdio lua5.4 | http http://127.0.0.1:PORT/mcp
const { Client } = require('@modelcontextprotocol/sdk/client/index.js');
const { StdioClientTransport } = require('@modelcontextprotocol/sdk/client/stdio.js');
const { StreamableHTTPClientTransport } = require('@modelcontextprotocol/sdk/client/streamableHttp.js');
const {
  LoggingMessageNotificationSchema, CreateMessageRequestSchema, ElicitRequestSchema,
} = require('@modelcontextprotocol/sdk/types.js');
const { transportFrom, step, failure, prompts, run } = require('./mcp_common.js');

// The legacy era asks the client in the middle of a call: these handlers
// answer, and keep what the server asked so the spec can check it too.
function answerServerRequests(client, asked) {
  client.setRequestHandler(CreateMessageRequestSchema, (req) => {
    asked.push({ method: req.method, params: req.params });
    return { role: 'assistant', model: 'interop-model', content: { type: 'text', text: 'Paris' } };
  });
  client.setRequestHandler(ElicitRequestSchema, (req) => {
    asked.push({ method: req.method, params: req.params });
    return { action: 'accept', content: { username: 'alice', email: 'alice@example.com' } };
  });
}

async function tools(client) {
  step('tools/list', { names: (await client.listTools()).tools.map((t) => t.name) });
  const progress = [];
  const result = await client.callTool({ name: 'test_tool_with_progress', arguments: {} }, undefined,
    { onprogress: (p) => progress.push(p) });
  step('tools/call progress', { result, progress });
  step('tools/call isError', { result: await client.callTool({ name: 'test_error_handling', arguments: {} }) });
  step('tools/call structured', { result: await client.callTool({ name: 'test_echo', arguments: { message: 'hi' } }) });
  step('tools/call unknown', await failure(client.callTool({ name: 'no_such_tool', arguments: {} })));
}

async function logging(client) {
  const logs = [];
  client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => logs.push(n.params));
  await client.setLoggingLevel('info');
  const result = await client.callTool({ name: 'test_tool_with_logging', arguments: {} });
  step('logging', { result, logs });
}

async function resources(client) {
  step('resources/list', { uris: (await client.listResources()).resources.map((r) => r.uri) });
  step('resources/templates/list',
    { templates: (await client.listResourceTemplates()).resourceTemplates.map((r) => r.uriTemplate) });
  step('resources/read', { result: await client.readResource({ uri: 'test://static-text' }) });
  step('resources/read template', { result: await client.readResource({ uri: 'test://template/123/data' }) });
  step('resources/read missing', await failure(client.readResource({ uri: 'test://nonexistent' })));
  step('resources/subscribe', { result: await client.subscribeResource({ uri: 'test://watched-resource' }) });
}

async function askingTools(client, asked) {
  let result = await client.callTool({ name: 'test_sampling', arguments: { prompt: 'Capital of France?' } });
  step('sampling', { result, asked: asked.splice(0) });
  result = await client.callTool({ name: 'test_elicitation', arguments: { message: 'Who are you?' } });
  step('elicitation', { result, asked: asked.splice(0) });
}

// HTTP only: end the legacy session with DELETE, then show that the
// server forgot it (a POST naming it is 404, unknown session).
async function endSession(transport, url) {
  const id = transport.sessionId;
  await transport.terminateSession();
  const res = await fetch(url, { method: 'POST', body: '{"jsonrpc":"2.0","id":99,"method":"ping"}',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream',
      'mcp-session-id': id, 'mcp-protocol-version': '2025-11-25' } });
  step('DELETE session', { sessionId: /^[0-9a-f]{32}$/.test(id), forgotten: res.status });
}

async function main() {
  const client = new Client({ name: 'jrpc-sdk1-probe', version: '1.0.0' },
    { capabilities: { sampling: {}, elicitation: {} } });
  const asked = [];
  answerServerRequests(client, asked);
  const transport = transportFrom(process.argv, { Stdio: StdioClientTransport, Http: StreamableHTTPClientTransport });
  await client.connect(transport);
  step('initialize', { serverVersion: client.getServerVersion(), capabilities: client.getServerCapabilities(),
    instructions: client.getInstructions() });
  step('ping', { result: await client.ping() });
  await tools(client);
  await logging(client);
  await resources(client);
  await prompts(client);
  await askingTools(client, asked);
  if (transport instanceof StreamableHTTPClientTransport) await endSession(transport, process.argv[3]);
  await client.close();
}

run(main);
