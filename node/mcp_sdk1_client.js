// @modelcontextprotocol/sdk 1.32.2 (legacy era, 2025-11-25: initialize)
// drives examples/mcp/everything_server.lua over stdio and prints what it
// got as one JSON line, for spec/mcp_interop_spec.lua to compare exactly.
// Usage (from the repository root): node node/mcp_sdk1_client.js lua5.4
const { Client } = require('@modelcontextprotocol/sdk/client/index.js');
const { StdioClientTransport } = require('@modelcontextprotocol/sdk/client/stdio.js');
const { LoggingMessageNotificationSchema } = require('@modelcontextprotocol/sdk/types.js');

async function main() {
  const lua = process.argv[2] || 'lua5.4';
  const transport = new StdioClientTransport({
    command: lua, args: ['examples/mcp/everything_server.lua'], stderr: 'pipe',
  });
  const client = new Client({ name: 'jrpc-sdk1-probe', version: '1.0.0' });
  const logs = [];
  client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => logs.push(n.params));
  await client.connect(transport);
  const out = {};
  out.serverVersion = client.getServerVersion();
  out.capabilities = client.getServerCapabilities();
  out.instructions = client.getInstructions();
  out.ping = await client.ping();
  const tools = await client.listTools();
  out.toolNames = tools.tools.map((t) => t.name);
  out.simple = await client.callTool({ name: 'test_simple_text' });
  const progress = [];
  out.progressResult = await client.callTool({ name: 'test_tool_with_progress', arguments: {} }, undefined,
    { onprogress: (p) => progress.push(p) });
  out.progress = progress;
  out.error = await client.callTool({ name: 'test_error_handling', arguments: {} });
  out.echo = await client.callTool({ name: 'test_echo', arguments: { message: 'hi' } });
  await client.setLoggingLevel('info');
  out.logging = await client.callTool({ name: 'test_tool_with_logging', arguments: {} });
  out.logs = logs;
  try {
    await client.callTool({ name: 'no_such_tool', arguments: {} });
  } catch (e) { out.unknownTool = { code: e.code, message: e.message }; }
  out.resources = (await client.listResources()).resources.map((r) => r.uri);
  out.templates = (await client.listResourceTemplates()).resourceTemplates.map((r) => r.uriTemplate);
  out.text = await client.readResource({ uri: 'test://static-text' });
  out.template = await client.readResource({ uri: 'test://template/123/data' });
  try {
    await client.readResource({ uri: 'test://nonexistent' });
  } catch (e) { out.missing = { code: e.code }; }
  out.subscribe = await client.subscribeResource({ uri: 'test://watched-resource' });
  out.prompts = (await client.listPrompts()).prompts.map((p) => p.name);
  out.prompt = await client.getPrompt({ name: 'test_prompt_with_arguments',
    arguments: { arg1: 'testValue1', arg2: 'testValue2' } });
  out.completion = await client.complete({ ref: { type: 'ref/prompt', name: 'test_prompt_with_arguments' },
    argument: { name: 'arg1', value: 'tes' } });
  await client.close();
  process.stdout.write(JSON.stringify(out) + '\n');
}

main().catch((e) => { console.error(e && e.stack || String(e)); process.exit(1); });
