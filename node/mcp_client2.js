// @modelcontextprotocol/client 2.4.0 in version negotiation mode 'auto':
// it probes server/discover and, on a modern answer, speaks 2026-07-28
// (_meta on every request, MRTR for input). It drives
// examples/mcp/everything_server.lua over stdio or Streamable HTTP and
// prints one JSON line per step (node/mcp_common.js), for
// spec/mcp_interop_spec.lua to compare exactly. From the repository root:
//   node node/mcp_client2.js stdio lua5.4 | http http://127.0.0.1:PORT/mcp
const { Client, StreamableHTTPClientTransport } = require('@modelcontextprotocol/client');
const { StdioClientTransport } = require('@modelcontextprotocol/client/stdio');
const { transportFrom, step, failure, prompts, run } = require('./mcp_common.js');

// The answer to each question the server may ask (keyed by what it asks
// for), so a multi-round tool gets a different answer each round.
const ANSWERS = {
  name: { name: 'alice' },
  colour: { colour: 'green' },
  context: { context: 'interop' },
};

// MRTR: the client fulfils each inputRequest with the handler registered
// for its method and retries. This one answers from ANSWERS and keeps what
// was asked, so the spec checks both directions.
function answerInputRequests(client, asked) {
  client.setRequestHandler('elicitation/create', (req) => {
    asked.push(req.params.message);
    const field = Object.keys(req.params.requestedSchema.properties)[0];
    return { action: 'accept', content: ANSWERS[field] };
  });
}

async function tools(client) {
  step('tools/list', { names: (await client.listTools()).tools.map((t) => t.name) });
  const progress = [];
  const result = await client.callTool({ name: 'test_tool_with_progress', arguments: {} },
    { onprogress: (p) => progress.push(p) });
  step('tools/call progress', { result, progress });
  step('tools/call isError', { result: await client.callTool({ name: 'test_error_handling', arguments: {} }) });
  step('tools/call structured', { result: await client.callTool({ name: 'test_echo', arguments: { message: 'hi' } }) });
  // the client declares elicitation only: a tool that needs sampling is refused
  step('tools/call missing capability',
    await failure(client.callTool({ name: 'test_missing_capability', arguments: {} })));
  step('tools/call unknown', await failure(client.callTool({ name: 'no_such_tool', arguments: {} })));
}

async function resources(client) {
  step('resources/list', { uris: (await client.listResources()).resources.map((r) => r.uri) });
  step('resources/templates/list',
    { templates: (await client.listResourceTemplates()).resourceTemplates.map((r) => r.uriTemplate) });
  step('resources/read', { result: await client.readResource({ uri: 'test://static-text' }) });
  step('resources/read binary', { result: await client.readResource({ uri: 'test://static-binary' }) });
  step('resources/read template', { result: await client.readResource({ uri: 'test://template/123/data' }) });
  step('resources/read missing', await failure(client.readResource({ uri: 'test://nonexistent' })));
}

async function inputRequired(client, asked) {
  let result = await client.callTool({ name: 'test_input_required_result_elicitation', arguments: {} });
  step('input_required', { result, asked: asked.splice(0) });
  result = await client.callTool({ name: 'test_input_required_result_multi_round', arguments: {} });
  step('input_required multi_round', { result, asked: asked.splice(0) });
  result = await client.getPrompt({ name: 'test_input_required_result_prompt' });
  step('input_required prompt', { result, asked: asked.splice(0) });
}

async function main() {
  const client = new Client({ name: 'jrpc-client2-probe', version: '2.0.0' },
    { capabilities: { elicitation: {} }, versionNegotiation: { mode: 'auto' } });
  const asked = [];
  answerInputRequests(client, asked);
  await client.connect(transportFrom(process.argv,
    { Stdio: StdioClientTransport, Http: StreamableHTTPClientTransport }));
  const discover = client.getDiscoverResult();
  step('server/discover', { era: client.getProtocolEra(), version: client.getNegotiatedProtocolVersion(),
    supportedVersions: discover && discover.supportedVersions, serverVersion: client.getServerVersion(),
    capabilities: client.getServerCapabilities(), instructions: client.getInstructions() });
  await tools(client);
  await resources(client);
  await prompts(client);
  await inputRequired(client, asked);
  await client.close();
}

run(main);
