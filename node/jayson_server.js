'use strict';
// A jayson TCP server on 127.0.0.1, the peer for spec/interop_jayson_spec.lua:
//
//   node node/jayson_server.js
//
// Binds port 0 and prints {"port":N} on stdout once listening. jayson's TCP
// transport is newline-delimited JSON both ways: it splits its input on "\n"
// outside strings and ends every reply with "\n". Exits when stdin ends, so
// it cannot outlive the spec that started it.
const jayson = require('jayson/promise');

const notes = [];

function isNumber(v) { return typeof v === 'number'; }

const server = new jayson.Server({
  // add([a, b]) or add({a, b}); anything else is -32602 as jayson words it.
  add: async (p) => {
    const [a, b] = Array.isArray(p) ? p : [p && p.a, p && p.b];
    if (!isNumber(a) || !isNumber(b)) throw server.error(-32602);
    return a + b;
  },
  echo: async (p) => p,
  // A custom server error with data.
  fail: async (p) => { throw server.error(-32000, 'custom failure', { tag: p.tag, list: [1, 2] }); },
  // A method that throws: jayson answers -32603 "Internal error".
  throws: async () => { throw new Error('boom'); },
  note: async (p) => { notes.push(p); },
  notes: async () => notes,
  // Ends the process without answering (it has read everything we sent).
  vanish: async () => { process.exit(3); },
});

const tcp = server.tcp();
tcp.listen(0, '127.0.0.1', () => {
  process.stdout.write(JSON.stringify({ port: tcp.address().port }) + '\n');
});
process.stdin.on('end', () => process.exit(0));
process.stdin.resume();
