// An HTTPS front for an HTTP MCP server on 127.0.0.1 (node's https module,
// with a certificate of the spec's test CA): node spec/mcp/https_proxy.js
// KEY CERT TARGET_PORT. Prints "listening PORT" on stderr, then one line a
// request: "METHOD AUTHORIZATION". Bodies and SSE streams are piped as they
// come; a client that goes away takes the upstream request with it (MCP's
// cancellation over HTTP).
'use strict';
const fs = require('fs'), http = require('http'), https = require('https');
const [key, cert, target] = process.argv.slice(2);
const server = https.createServer({ key: fs.readFileSync(key), cert: fs.readFileSync(cert) }, (req, res) => {
  process.stderr.write(`${req.method} ${req.headers.authorization || '-'}\n`);
  // the server behind checks Host against its own address (DNS rebinding)
  const headers = { ...req.headers, host: `127.0.0.1:${target}` };
  const up = http.request({ host: '127.0.0.1', port: target, method: req.method, path: req.url, headers }, (ur) => {
    res.writeHead(ur.statusCode, ur.headers);
    res.flushHeaders();
    ur.pipe(res);
  });
  up.on('error', () => res.destroy());
  res.on('close', () => up.destroy());
  req.pipe(up);
});
server.listen(0, '127.0.0.1', () => process.stderr.write(`listening ${server.address().port}\n`));
