// Preloaded into every driver (and the mcp-remote process a driver starts) with `--import`: a
// TCP connection to anything but loopback is refused and reported on stderr, so a client that
// phones home (telemetry, tracing export, a schema fetch) fails the matrix instead of reaching
// the network. Node's fetch (undici), node:http and the MCP SDKs all connect through
// net.Socket#connect; pipes and Unix sockets (a string `path`) are left alone.
import net from 'node:net';

export const BLOCKED_MARKER = '[loopback-only] refused a connection to';

const LOOPBACK = /^(localhost|127(\.\d{1,3}){3}|::1|::ffff:127(\.\d{1,3}){3})$/i;

/** The target of the many argument shapes Socket#connect takes (Node passes its normalized array). */
function targetOf(args) {
  const first = Array.isArray(args[0]) ? args[0][0] : args[0];
  if (first !== null && typeof first === 'object') {
    // node:http passes `path: null` here; only a non-empty string is a pipe or socket file.
    return typeof first.path === 'string' && first.path !== '' ? undefined : { host: first.host ?? 'localhost', port: first.port };
  }
  if (typeof first === 'string' && !/^\d+$/.test(first)) return undefined;
  return { host: typeof args[1] === 'string' ? args[1] : 'localhost', port: first };
}

const connect = net.Socket.prototype.connect;
net.Socket.prototype.connect = function loopbackOnlyConnect(...args) {
  const target = targetOf(args);
  if (target && !LOOPBACK.test(String(target.host).replace(/^\[|\]$/g, ''))) {
    const message = `${BLOCKED_MARKER} ${target.host}:${target.port} (the agent-client matrix allows loopback only)`;
    process.stderr.write(`${message}\n`);
    // Fail the caller as an unreachable host does, asynchronously, like a real connect error.
    process.nextTick(() => this.destroy(Object.assign(new Error(message), { code: 'ECONNREFUSED' })));
    return this;
  }
  return connect.apply(this, args);
};
