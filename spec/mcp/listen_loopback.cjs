// Preloaded (node -r) into a server that calls listen(PORT) without a host
// (@modelcontextprotocol/server-everything's Streamable HTTP mode): every
// listen on a port binds 127.0.0.1 instead of every interface, and the
// port really bound is printed on stderr (PORT=0 asks for a free one).
'use strict';
const net = require('net');
const listen = net.Server.prototype.listen;
net.Server.prototype.listen = function (...args) {
  if (typeof args[0] !== 'number' && !/^\d+$/.test(String(args[0]))) return listen.apply(this, args);
  const cb = args.find((a) => typeof a === 'function');
  this.once('listening', () => process.stderr.write(`listening on 127.0.0.1:${this.address().port}\n`));
  return listen.call(this, Number(args[0]), '127.0.0.1', cb);
};
