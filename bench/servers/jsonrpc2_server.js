// bench/servers/jsonrpc2_server.js: a json-rpc-2.0 JSONRPCServer on
// stdin/stdout, one JSON message per line, with `subtract` [a, b].
// Exits 0 when its input ends and every reply is written.
//
//   node bench/servers/jsonrpc2_server.js
'use strict';
const path = require('path');
const readline = require('readline');
// Resolved as from node/, where make node-deps installs it.
const nodeRequire = require('module').createRequire(path.join(__dirname, '../../node/package.json'));
const { JSONRPCServer } = nodeRequire('json-rpc-2.0');

const server = new JSONRPCServer();
server.addMethod('subtract', ([a, b]) => a - b);

let pending = 0;
let ended = false;
const exitWhenDone = () => { if (ended && pending === 0) process.exit(0); };

const lines = readline.createInterface({ input: process.stdin, crlfDelay: Infinity });
lines.on('line', (line) => {
  pending += 1;
  server.receiveJSON(line).then((reply) => {
    if (reply) process.stdout.write(JSON.stringify(reply) + '\n');
    pending -= 1;
    exitWhenDone();
  });
});
lines.on('close', () => { ended = true; exitWhenDone(); });
