'use strict';
// A vscode-jsonrpc client that spawns a jrpc LSP server and drives it over
// its stdio (Content-Length framing):
//
//   node node/vscode_client.js lua5.4 spec/interop_lsp_server.lua [uv|blocking]
//
// Prints one JSON line per step on stdout: {"step":..., "result":...} or
// {"step":..., "error":{"code":..,"message":..,"data":..}}; then
// {"step":"exit","code":..,"signal":..} and, last, {"step":"responses",
// "count":<ids answered>,"more_than_once":<ids answered twice or more>}. The server's stderr is passed
// through to ours. Gives up after 10 s (prints {"step":"timeout"}, exit 1),
// and never leaves the server running.
const { spawn } = require('child_process');
const rpc = require('vscode-jsonrpc/node');

const STEP_TIMEOUT_MS = 3000;
const [cmd, ...args] = process.argv.slice(2);
const child = spawn(cmd, args, { stdio: ['pipe', 'pipe', 'inherit'] });
process.on('exit', () => { if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL'); });

function report(step, fields) {
  process.stdout.write(JSON.stringify({ step, ...fields }) + '\n');
}

const watchdog = setTimeout(() => { report('timeout', {}); process.exit(1); }, 10000);

// Count the responses to each of our request ids, to catch a request
// answered twice (vscode-jsonrpc itself would drop the second one quietly).
const responses = new Map();
const reader = new rpc.StreamMessageReader(child.stdout);
const listen = reader.listen.bind(reader);
reader.listen = (callback) => listen((msg) => {
  if (msg.method === undefined && msg.id !== undefined) responses.set(msg.id, (responses.get(msg.id) || 0) + 1);
  callback(msg);
});
const conn = rpc.createMessageConnection(reader, new rpc.StreamMessageWriter(child.stdin));

// Resolves with the first value `register` hands to `resolve`, or rejects after a while.
function expect(what, register) {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no ${what} within ${STEP_TIMEOUT_MS} ms`)), STEP_TIMEOUT_MS);
    register((value) => { clearTimeout(timer); resolve(value); });
  });
}

// Handlers for what the server sends us; each one-shot waiter is kept here.
const waiters = {};
function arrival(name) {
  return expect(name, (resolve) => { waiters[name] = resolve; });
}
function arrived(name, value) {
  const resolve = waiters[name];
  delete waiters[name];
  if (resolve) resolve(value);
}

let unblock;
conn.onRequest('client/name', (p) => `vscode:${p.asked}`);
conn.onRequest('client/block', (p) => new Promise((resolve) => {
  unblock = resolve;
  arrived('client/block', p);
}));
conn.onNotification('noted', (p) => arrived('noted', p));
conn.onNotification('server/saw_cancel', (p) => arrived('server/saw_cancel', p));
conn.listen();

async function call(step, method, ...params) {
  try {
    report(step, { result: await conn.sendRequest(method, ...params) });
  } catch (err) {
    report(step, { error: { code: err.code, message: err.message, data: err.data } });
  }
}

// The client cancels `hold` while the jrpc handler waits in client/block.
async function cancelWhileWaiting() {
  const source = new rpc.CancellationTokenSource();
  const blocked = arrival('client/block');
  const held = call('cancel', 'hold', { tag: 'h' }, source.token);
  report('blocked', { params: await blocked });
  source.cancel();
  await held;
  const saw = arrival('server/saw_cancel');
  unblock('unblocked');
  report('saw_cancel', { params: await saw });
}

async function main() {
  await call('sum_named', 'sum', { a: 2, b: 3 });
  await call('sum_positional', 'sum', 40, 2);
  await call('invalid_params', 'sum', { a: 1 });
  await call('not_found', 'nope', { x: 1 });
  await call('custom_error', 'fail', { tag: 'f' });
  await call('throws', 'throw', {});
  await call('ask', 'ask', { who: 'vs' });
  const noted = arrival('noted');
  await conn.sendNotification('note', { n: 1 });
  report('noted', { params: await noted });
  await cancelWhileWaiting();
  await call('after_cancel', 'sum', { a: 1, b: 1 });
  const exited = new Promise((resolve) => child.on('exit', (code, signal) => resolve({ code, signal })));
  conn.dispose();
  child.stdin.end();
  report('exit', await exited);
  const answered = [...responses.values()];
  report('responses', { count: answered.length, more_than_once: answered.filter((n) => n !== 1).length });
}

main().then(() => { clearTimeout(watchdog); }, (err) => {
  report('failed', { message: String(err && err.message) });
  process.exit(1);
});
