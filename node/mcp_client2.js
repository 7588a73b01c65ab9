// @modelcontextprotocol/client 2.4.0 speaking 2026-07-28 (modern era:
// it probes server/discover, then sends _meta on every request) drives
// examples/mcp/everything_server.lua over stdio and prints what it got as
// one JSON line, for spec/mcp_interop_spec.lua to compare exactly.
// Usage (from the repository root): node node/mcp_client2.js lua5.4
const { Client } = require('@modelcontextprotocol/client');
const { StdioClientTransport } = require('@modelcontextprotocol/client/stdio');

async function main() {
  const lua = process.argv[2] || 'lua5.4';
  const transport = new StdioClientTransport({
    command: lua, args: ['examples/mcp/everything_server.lua'], stderr: 'pipe',
  });
  const client = new Client({ name: 'jrpc-client2-probe', version: '2.0.0' },
    { versionNegotiation: { mode: { pin: '2026-07-28' } } });
  await client.connect(transport);
  const out = {};
  out.era = client.getProtocolEra();
  out.version = client.getNegotiatedProtocolVersion();
  out.serverVersion = client.getServerVersion();
  out.capabilities = client.getServerCapabilities();
  out.instructions = client.getInstructions();
  const tools = await client.listTools();
  out.toolNames = tools.tools.map((t) => t.name);
  out.simple = await client.callTool({ name: 'test_simple_text' });
  const progress = [];
  out.progressResult = await client.callTool({ name: 'test_tool_with_progress', arguments: {} },
    { onprogress: (p) => progress.push(p) });
  out.progress = progress;
  out.error = await client.callTool({ name: 'test_error_handling', arguments: {} });
  out.echo = await client.callTool({ name: 'test_echo', arguments: { message: 'hi' } });
  try {
    await client.callTool({ name: 'test_missing_capability', arguments: {} });
  } catch (e) { out.missingCapability = { code: e.code, data: e.data }; }
  try {
    await client.callTool({ name: 'no_such_tool', arguments: {} });
  } catch (e) { out.unknownTool = { code: e.code }; }
  out.resources = (await client.listResources()).resources.map((r) => r.uri);
  out.templates = (await client.listResourceTemplates()).resourceTemplates.map((r) => r.uriTemplate);
  out.text = await client.readResource({ uri: 'test://static-text' });
  out.binary = await client.readResource({ uri: 'test://static-binary' });
  try {
    await client.readResource({ uri: 'test://nonexistent' });
  } catch (e) { out.missing = { code: e.code, data: e.data }; }
  out.prompts = (await client.listPrompts()).prompts.map((p) => p.name);
  out.prompt = await client.getPrompt({ name: 'test_prompt_with_arguments',
    arguments: { arg1: 'testValue1', arg2: 'testValue2' } });
  out.completion = await client.complete({ ref: { type: 'ref/prompt', name: 'test_prompt_with_arguments' },
    argument: { name: 'arg1', value: 'tes' } });
  await client.close();
  process.stdout.write(JSON.stringify(out) + '\n');
}

main().catch((e) => { console.error(e && e.stack || String(e)); process.exit(1); });
