'use strict';
// A JSON-RPC server over HTTP that answers in the shapes a client must
// read, for spec/cli_http_spec.lua (Node's http module, no packages):
//
//   node node/sse_http_server.js
//
// POST /sse: text/event-stream with a priming event (no data), a comment,
// a notification, a request to the client, a response to another id, then
// the response to the request (params echoed) as an event of two `data:`
// lines; the stream then stays open (a comment every 50 ms) until the
// client closes it. POST /pretty: the response as pretty-printed JSON.
// POST /empty: 200 with no body (no response at all).
// Binds port 0 and prints {"port":N} on stdout once listening. Exits when
// stdin ends, so it cannot outlive the spec that started it.
const http = require('http');

function sse(res, id, params) {
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  res.write('id: 0\ndata:\n\n');
  res.write(': a comment\n\n');
  res.write('data: {"jsonrpc":"2.0","method":"note","params":{"n":1}}\n\n');
  res.write('data: {"jsonrpc":"2.0","id":"s1","method":"roots/list"}\n\n');
  res.write('data: {"jsonrpc":"2.0","id":999,"result":"not yours"}\n\n');
  res.write('data: {"jsonrpc":"2.0","id":' + JSON.stringify(id) + ',\ndata: "result":'
    + JSON.stringify({ echo: params }) + '}\n\n');
  const tick = setInterval(() => res.write(': still here\n\n'), 50);
  res.on('close', () => clearInterval(tick));
}

const server = http.createServer((req, res) => {
  let body = '';
  req.on('data', (d) => { body += d; });
  req.on('end', () => {
    const msg = JSON.parse(body);
    if (req.url === '/sse') return sse(res, msg.id, msg.params);
    if (req.url === '/empty') { res.writeHead(200); return res.end(); }
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ jsonrpc: '2.0', id: msg.id, result: { echo: msg.params } }, null, 2) + '\n');
  });
});
server.listen(0, '127.0.0.1', () => {
  process.stdout.write(JSON.stringify({ port: server.address().port }) + '\n');
});
process.stdin.on('end', () => process.exit(0));
process.stdin.resume();
