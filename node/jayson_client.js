'use strict';
// A jayson TCP client against a JSON-RPC server on 127.0.0.1:
//
//   node node/jayson_client.js PORT
//
// jayson opens one TCP connection per call (or batch), writes the JSON and a
// "\n", and reads one "\n"-terminated reply. Prints one JSON line per step:
// {"step":..., "sent_id":<the request's id>, "response":<the reply as jayson
// parsed it>} (no sent_id for a batch) or
// {"step":..., "failed":<message>}; the last line is {"step":"done"}.
// Gives up after 10 s ({"step":"timeout"}, exit 1).
const jayson = require('jayson');

const port = Number(process.argv[2]);
const client = jayson.client.tcp({ host: '127.0.0.1', port });
const watchdog = setTimeout(() => { report('timeout', {}); process.exit(1); }, 10000);

function report(step, fields) {
  process.stdout.write(JSON.stringify({ step, ...fields }) + '\n');
}

// client.request with a two-argument callback hands over the whole reply.
function send(request) {
  return new Promise((resolve, reject) => {
    client.request(request, (err, response) => (err ? reject(err) : resolve(response)));
  });
}

async function step(name, request) {
  try {
    const response = await send(request);
    report(name, Array.isArray(request) ? { response } : { sent_id: request.id, response });
  } catch (err) {
    report(name, { failed: String(err && err.message) });
  }
}

// A request object built by jayson itself (callback false: build, do not send).
function req(method, params, id) {
  return client.request(method, params, id, false);
}

async function main() {
  await step('add_positional', req('add', [2, 3], 1));
  await step('add_named', req('add', { a: 40, b: 2 }, 'two'));
  await step('invalid_params', req('add', { a: 1 }, 3));
  await step('not_found', req('nope', [], 4));
  await step('custom_error', req('fail', { tag: 't' }, 5));
  await step('throws', req('throws', [], 6));
  await step('generated_id', req('add', [1, 1]));
  await step('notification', req('note', { n: 1 }, null));
  await step('batch', [
    req('add', [1, 2], 'b1'),
    req('note', { n: 2 }, null),
    req('nope', [], 'b2'),
    req('add', { a: 'x', b: 1 }, 'b3'),
    req('throws', [], 'b4'),
    req('fail', { tag: 'b' }, 'b5'),
    req('add', [10, 20], 'b6'),
  ]);
  report('done', {});
}

main().then(() => clearTimeout(watchdog), (err) => {
  report('failed', { message: String(err && err.message) });
  process.exit(1);
});
