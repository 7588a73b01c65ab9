'use strict';
// A jayson JSON-RPC server over HTTP (or HTTPS) on 127.0.0.1, the peer for
// spec/cli_http_spec.lua:
//
//   node node/jayson_http_server.js                  plain HTTP
//   node node/jayson_http_server.js KEY.pem CERT.pem HTTPS with that certificate
//
// Binds port 0 and prints {"port":N} on stdout once listening. jayson's
// HTTP transport answers every POST of application/json 200 with the
// response (204 for a notification), and 415 for another content type.
// Exits when stdin ends, so it cannot outlive the spec that started it.
const fs = require('fs');
const jayson = require('jayson/promise');

// The headers of the HTTP request being served. jayson emits 'http request'
// before it reads the body, and the spec sends one request at a time, so
// when a method runs these are its own request's headers.
let headers = {};
const notes = [];

const server = new jayson.Server({
  add: async ([a, b]) => a + b,
  // header([name]): that request header's value (names are lower case), or null
  header: async ([name]) => (name in headers ? headers[name] : null),
  fail: async () => { throw server.error(-32000, 'custom failure', { list: [1, 2] }); },
  note: async (p) => { notes.push(p); },
  notes: async () => notes,
});
server.on('http request', (req) => { headers = req.headers; });

const [key, cert] = process.argv.slice(2);
const http = key
  ? server.https({ key: fs.readFileSync(key), cert: fs.readFileSync(cert) })
  : server.http();
http.listen(0, '127.0.0.1', () => {
  process.stdout.write(JSON.stringify({ port: http.address().port }) + '\n');
});
process.stdin.on('end', () => process.exit(0));
process.stdin.resume();
