// @modelcontextprotocol/sdk 1.32.2 (legacy era) against any stdio server,
// for the specs that check what a user's server looks like to the
// official client. The plan is one JSON argument:
//   {"command": "lua5.4", "args": ["server.lua"], "env": {...}?, "version": "2025-06-18"?,
//    "calls": [{"name": "add", "arguments": {...}}, ...], "elicit": true?}
// and it prints one JSON line per step: the tools as listTools() returned
// them (each schema as the JSON text the client holds, so key order shows),
// then each call's result or error; "client errors" (what the client could
// not read); "stderr" last, the server's stderr.
// With "env", the server gets exactly that environment (nothing inherited).
// With "elicit", the client offers elicitation and prints each request's
// requestedSchema ("elicited"), then accepts.
const { Client } = require('@modelcontextprotocol/sdk/client/index.js');
const { StdioClientTransport } = require('@modelcontextprotocol/sdk/client/stdio.js');
const { ElicitRequestSchema } = require('@modelcontextprotocol/sdk/types.js');
const { step, run } = require('./mcp_common.js');

// The client announces a version it speaks; SDK 1.32 offers its newest
// (2025-11-25). "version" makes it offer an older one instead.
function pinVersion(transport, version) {
  const send = transport.send.bind(transport);
  transport.send = (msg, opts) => {
    if (msg.method === 'initialize') msg = { ...msg, params: { ...msg.params, protocolVersion: version } };
    return send(msg, opts);
  };
}

async function main() {
  const plan = JSON.parse(process.argv[2]);
  const transport = new StdioClientTransport({ command: plan.command, args: plan.args || [], env: plan.env,
    stderr: 'pipe' });
  let stderr = '';
  transport.stderr.on('data', (chunk) => { stderr += chunk; });
  if (plan.version) pinVersion(transport, plan.version);
  const client = new Client({ name: 'jrpc-sdk1-probe', version: '1.0.0' },
    { capabilities: plan.elicit ? { elicitation: {} } : {} });
  if (plan.elicit) {  // the schema of each elicitation, as the client holds it; accept with no content
    client.setRequestHandler(ElicitRequestSchema, (req) => {
      step('elicited', { requestedSchema: JSON.stringify(req.params.requestedSchema) });
      return { action: 'accept', content: {} };
    });
  }
  const errors = [];  // what the client could not read (a line of stdout that is not a message)
  client.onerror = (e) => errors.push(String(e && e.message).split('\n')[0]);
  await client.connect(transport);
  step('initialize', { server: client.getServerVersion().name });
  try {
    const { tools } = await client.listTools();
    step('tools/list', { tools: tools.map((t) => ({ name: t.name, inputSchema: JSON.stringify(t.inputSchema),
      outputSchema: t.outputSchema && JSON.stringify(t.outputSchema) })) });
  } catch (e) { step('tools/list', { error: String(e.message).split('\n')[0] }); }
  for (const call of plan.calls || []) {
    try {
      step('call ' + call.name, { result: await client.callTool({ name: call.name, arguments: call.arguments }) });
    } catch (e) { step('call ' + call.name, { code: e.code, message: e.message }); }
  }
  await client.close();
  step('client errors', { errors });
  step('stderr', { text: stderr });
}

run(main);
