// Loaded before Portkey's gateway (node --import ./loopback.mjs): its
// server listens on every interface (server.listen(port, undefined, cb));
// this keeps the benchmark on loopback by giving such a listen the host
// 127.0.0.1.
import net from 'node:net';

const listen = net.Server.prototype.listen;
net.Server.prototype.listen = function (...args) {
  if (typeof args[0] === 'number' && (args.length < 2 || args[1] === undefined || typeof args[1] === 'function')) {
    if (args.length >= 2 && args[1] === undefined) {
      args[1] = '127.0.0.1';
    } else {
      args.splice(1, 0, '127.0.0.1');
    }
  }
  return listen.apply(this, args);
};
