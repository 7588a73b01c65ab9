// bench/servers/vscode_server.js: a vscode-jsonrpc server on stdin/stdout
// (Content-Length framing) with one request handler, `subtract` [a, b].
// Exits 0 when its input ends.
//
//   node bench/servers/vscode_server.js
'use strict';
const path = require('path');
// Resolved as from node/ (where make node-deps installs it), honouring the
// package's "exports" map.
const nodeRequire = require('module').createRequire(path.join(__dirname, '../../node/package.json'));
const rpc = nodeRequire('vscode-jsonrpc/node');

const connection = rpc.createMessageConnection(
  new rpc.StreamMessageReader(process.stdin),
  new rpc.StreamMessageWriter(process.stdout));

// Positional params arrive as separate arguments.
connection.onRequest('subtract', (a, b) => a - b);
connection.onClose(() => process.exit(0));
process.stdin.on('end', () => process.exit(0));
connection.listen();
