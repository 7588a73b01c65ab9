// node/bench_client.js: a Node.js load generator for JSON-RPC servers on
// stdio, spawned the way editors and MCP hosts spawn them: child_process
// with 'pipe' stdio (libuv makes each a Unix socketpair). It keeps W
// `subtract` requests in flight and, on each chunk of replies, writes the
// burst of new requests in one write: a client that answers each burst with
// the next one, which is what exposes a server that only writes at the end
// of a read.
//
//   node node/bench_client.js [--framing ndjson|lsp] [--inflight W]
//        [--seconds S] [--warmup S] [--latency] -- server command...
//
// Prints one line of key=value: rps (round trips/s), client_cpu (cores the
// client itself used while measuring), replies_per_read (how many replies
// each read of the server's output brought, on average), and with --latency (one request in
// flight) p50_us and p99_us. Every reply is checked (an id in flight, the
// right result); exits 1 on a wrong reply, a dead or stalled server.
// Raw framing on purpose: this is a load generator, its own ceiling is
// measured against build/bench/null_server.
'use strict';
const { spawn } = require('child_process');

function parseArgs(argv) {
  const o = { framing: 'ndjson', inflight: 64, seconds: 2, warmup: 0.5, latency: false, cmd: [] };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === '--') { o.cmd = argv.slice(i + 1); break; }
    if (a === '--latency') { o.latency = true; continue; }
    const v = argv[++i];
    if (a === '--framing') o.framing = v;
    else if (a === '--inflight') o.inflight = Number(v);
    else if (a === '--seconds') o.seconds = Number(v);
    else if (a === '--warmup') o.warmup = Number(v);
    else throw new Error('unknown option ' + a);
  }
  if (o.latency) o.inflight = 1;
  if (o.cmd.length === 0 || !(o.inflight > 0)) {
    throw new Error('usage: bench_client.js [options] -- server command...');
  }
  return o;
}

const opt = parseArgs(process.argv.slice(2));
const lsp = opt.framing === 'lsp';

function fail(msg) {
  process.stderr.write('bench_client: ' + msg + '\n');
  process.exit(1);
}

// {====== requests: params vary with the id, the expected result is kept
const expected = new Map();  // id -> a - b
const sentAt = new Map();    // id -> hrtime (latency mode only)
let nextId = 1;

function request(id) {
  const a = (id % 100000) * 3, b = id % 1000;
  expected.set(id, a - b);
  const body = '{"jsonrpc":"2.0","method":"subtract","params":[' + a + ',' + b + '],"id":' + id + '}';
  if (!lsp) return body + '\n';
  return 'Content-Length: ' + Buffer.byteLength(body) + '\r\n\r\n' + body;
}

// n new requests as one string: one write per burst
function burst(n) {
  let s = '';
  for (let i = 0; i < n; i++) {
    const id = nextId++;
    if (opt.latency) sentAt.set(id, process.hrtime.bigint());
    s += request(id);
  }
  return s;
}
// }======

// {====== replies: framed by byte offsets into the chunk read (no string
// made of the headers, no copy of what is left until the chunk is done)
let pending = Buffer.alloc(0);
let pos = 0;                       // where the next message starts in `pending`
const HEADER_END = Buffer.from('\r\n\r\n');
const CONTENT_LENGTH = 'content-length:';

// The Content-Length value of the header block pending[from, to), or -1.
// Whether the header line at `at` names Content-Length, in any case: byte
// by byte, so that no string is made for each reply's header.
const NAME_LOWER = Buffer.from(CONTENT_LENGTH, 'latin1');
const NAME_UPPER = Buffer.from(CONTENT_LENGTH.toUpperCase(), 'latin1');
function isContentLength(at) {
  for (let i = 0; i < NAME_LOWER.length; i++) {
    const c = pending[at + i];
    if (c !== NAME_LOWER[i] && c !== NAME_UPPER[i]) return false;
  }
  return true;
}

function contentLength(from, to) {
  let at = from;
  while (at < to) {
    let eol = pending.indexOf(13, at);
    if (eol < 0 || eol > to) eol = to;
    if (eol - at > CONTENT_LENGTH.length && isContentLength(at)) {
      let i = at + CONTENT_LENGTH.length, n = 0, digits = 0;
      while (i < eol && pending[i] === 32) i++;
      while (i < eol && pending[i] >= 48 && pending[i] <= 57) { n = n * 10 + pending[i] - 48; i++; digits++; }
      return digits > 0 ? n : -1;
    }
    at = eol + 2;
  }
  return -1;
}

// The next complete message body in `pending` from `pos`, or null.
function nextBody() {
  if (!lsp) {
    const nl = pending.indexOf(10, pos);
    if (nl < 0) return null;
    const body = pending.toString('utf8', pos, nl);
    pos = nl + 1;
    return body;
  }
  const end = pending.indexOf(HEADER_END, pos);
  if (end < 0) return null;
  const len = contentLength(pos, end);
  if (len < 0) fail('reply without Content-Length');
  const start = end + 4;
  if (pending.length < start + len) return null;
  const body = pending.toString('utf8', start, start + len);
  pos = start + len;
  return body;
}
// }======

let done = 0;        // replies checked
const latencies = [];
let measuring = false;

function check(body) {
  if (body.trim() === '') return;
  let m;
  try { m = JSON.parse(body); } catch (e) { fail('reply is not JSON: ' + body.slice(0, 200)); }
  const want = expected.get(m.id);
  if (want === undefined) fail('reply for an id not in flight: ' + body.slice(0, 200));
  if (m.result !== want) fail('wrong result: ' + body.slice(0, 200));
  expected.delete(m.id);
  if (opt.latency) {
    if (measuring) latencies.push(Number(process.hrtime.bigint() - sentAt.get(m.id)) / 1000);
    sentAt.delete(m.id);
  }
  done++;
}
// }======

const child = spawn(opt.cmd[0], opt.cmd.slice(1), { stdio: ['pipe', 'pipe', 'inherit'] });
child.on('error', (e) => fail('spawn: ' + e.message));
child.on('exit', (code, sig) => { if (!finished) fail('server exited early: ' + (sig || code)); });
child.stdin.on('error', () => {});  // the server may go first at the end

let finished = false;
let lastProgress = Date.now();
let reads = 0;       // data events (reads of the server's output)
child.stdout.on('data', (chunk) => {
  reads++;
  pending = pos < pending.length ? Buffer.concat([pending.subarray(pos), chunk]) : chunk;
  pos = 0;
  const before = done;
  let body;
  while ((body = nextBody()) !== null) check(body);
  const answered = done - before;
  if (answered > 0) {
    lastProgress = Date.now();
    if (!finished) child.stdin.write(burst(answered));
  }
});

function percentile(sorted, p) {
  if (sorted.length === 0) return 0;
  return sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))];
}

let t0, cpu0, done0, reads0;
function startMeasuring() {
  measuring = true;
  t0 = process.hrtime.bigint();
  cpu0 = process.cpuUsage();
  done0 = done;
  reads0 = reads;
  setTimeout(stopMeasuring, opt.seconds * 1000);
}

function stopMeasuring() {
  const secs = Number(process.hrtime.bigint() - t0) / 1e9;
  const cpu = process.cpuUsage(cpu0);
  finished = true;
  const fields = [
    'framing=' + opt.framing, 'inflight=' + opt.inflight,
    'rps=' + Math.round((done - done0) / secs),
    'client_cpu=' + ((cpu.user + cpu.system) / 1e6 / secs).toFixed(2),
    'replies_per_read=' + ((done - done0) / Math.max(1, reads - reads0)).toFixed(1),
  ];
  if (opt.latency) {
    latencies.sort((a, b) => a - b);
    fields.push('p50_us=' + percentile(latencies, 0.5).toFixed(1),
      'p99_us=' + percentile(latencies, 0.99).toFixed(1));
  }
  process.stdout.write(fields.join(' ') + '\n');
  child.stdin.end();
  child.kill('SIGTERM');
  process.exit(0);
}

setInterval(() => {
  if (!finished && Date.now() - lastProgress > 5000) fail('server stalled: no reply for 5 s');
}, 1000).unref();

child.stdin.write(burst(opt.inflight));
setTimeout(startMeasuring, opt.warmup * 1000);
