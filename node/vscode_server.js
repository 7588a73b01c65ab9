'use strict';
// A vscode-jsonrpc server on stdio (Content-Length framing), the peer for
// spec/interop_vscode_spec.lua: `node node/vscode_server.js`.
//
// Every message it reads or writes is also logged to stderr as one JSON line
// {"dir":"in"|"out","msg":...}, so the spec can check what went over the wire
// (e.g. the -32800 reply to a request jrpc cancelled, which jrpc drops as late).
// It exits when stdin ends.
const rpc = require('vscode-jsonrpc/node');

function trace(dir, msg) {
  process.stderr.write(JSON.stringify({ dir, msg }) + '\n');
}

const reader = new rpc.StreamMessageReader(process.stdin);
const writer = new rpc.StreamMessageWriter(process.stdout);
const listen = reader.listen.bind(reader);
reader.listen = (callback) => listen((msg) => { trace('in', msg); callback(msg); });
const write = writer.write.bind(writer);
writer.write = (msg) => { trace('out', msg); return write(msg); };

const conn = rpc.createMessageConnection(reader, writer);
let notes = 0;

conn.onRequest('add', (p) => p.a + p.b);
conn.onRequest('echo', (p) => p);

// Calls the client back while the client's request is still open.
conn.onRequest('greet', async (p) => {
  const name = await conn.sendRequest('client/name', { asked: p.who });
  return `hello ${name}`;
});

// Sits on the request until the client cancels it; then says so with a
// notification and answers -32800 RequestCancelled (LSP's code), the way an
// LSP server built on vscode-jsonrpc does.
// (A token cancelled before the handler ran is CancellationToken.Cancelled,
// whose onCancellationRequested never fires: check isCancellationRequested.)
conn.onRequest('wait', (p, token) => new Promise((resolve, reject) => {
  const cancelled = () => {
    conn.sendNotification('observed/cancel', { tag: p.tag, cancelled: token.isCancellationRequested });
    reject(new rpc.ResponseError(-32800, 'Request cancelled'));
  };
  if (token.isCancellationRequested) cancelled();
  else token.onCancellationRequested(cancelled);
}));

conn.onRequest('fail', (p) => {
  throw new rpc.ResponseError(-32001, 'custom failure', { tag: p.tag, list: [1, 2] });
});
conn.onRequest('throw', () => { throw new Error('boom'); });

conn.onNotification('note', (p) => {
  notes += 1;
  conn.sendNotification('noted', { echo: p, count: notes });
});

// Let handlers still running at end of input write their replies first.
function exitSoon() { setTimeout(() => process.exit(0), 100); }
conn.onClose(exitSoon);
process.stdin.on('end', exitSoon);
conn.listen();
