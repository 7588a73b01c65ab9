// What node/mcp_sdk1_client.js and node/mcp_client2.js share: the server
// to drive, from the command line, and the transcript they print (one JSON
// line per step, which spec/mcp_interop_spec.lua compares exactly).
//   node node/mcp_X.js stdio lua5.4|luajit    (spawns examples/mcp/everything_server.lua)
//   node node/mcp_X.js http http://127.0.0.1:PORT/mcp

// The transport the command line names, made from the SDK's own classes.
function transportFrom(argv, { Stdio, Http }) {
  const [kind, target] = argv.slice(2);
  if (kind === 'stdio') {
    return new Stdio({ command: target, args: ['examples/mcp/everything_server.lua'], stderr: 'pipe' });
  }
  if (kind === 'http') return new Http(new URL(target));
  throw new Error('usage: node SCRIPT stdio lua5.4|luajit | http URL');
}

function step(name, value) {
  process.stdout.write(JSON.stringify({ step: name, ...value }) + '\n');
}

// The JSON-RPC error of a call that must fail (a success is an answer too).
async function failure(promise) {
  try {
    return { unexpected: await promise };
  } catch (e) { return { code: e.code, data: e.data }; }
}

// The prompt steps, the same for both SDKs (their Client APIs agree here).
async function prompts(client) {
  step('prompts/list', { names: (await client.listPrompts()).prompts.map((p) => p.name) });
  step('prompts/get', { result: await client.getPrompt({ name: 'test_prompt_with_arguments',
    arguments: { arg1: 'testValue1', arg2: 'testValue2' } }) });
  step('completion/complete', { result: await client.complete({
    ref: { type: 'ref/prompt', name: 'test_prompt_with_arguments' }, argument: { name: 'arg1', value: 'tes' } }) });
}

function run(main) {
  main().catch((e) => { console.error(e && e.stack || String(e)); process.exit(1); });
}

module.exports = { transportFrom, step, failure, prompts, run };
