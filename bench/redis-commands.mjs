// `npm run bench:redis` (also run by `npm run bench`): Redis commands per operation, read from
// `INFO commandstats` deltas, with the echo server (dist/bench/echo-server.js) on Redis.
//
// Starts its own redis-server on a free port, so that no other client's commands land in the
// deltas (BENCH_REDIS_COMMANDS_URL uses an existing Redis instead: only meaningful when nothing
// else talks to it). Counts every command Redis ran, those run inside Lua scripts included, and
// subtracts the INFO calls of the measurement itself. The instance heartbeat (one script every
// 5 s) may land in a window: it shows as a fraction of a command per operation.
//
// Environment: BENCH_REDIS_COMMANDS_OPS operations per kind (default 300), BENCH_DIST (default
// <repo>/dist), BENCH_REDIS_COMMANDS_URL (see above).
// Exits with 1 when a figure misses its target: 2026-07-28 tools/call 0, legacy tools/call ≤ 2,
// session open (initialize) ≤ 4.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { McpWire } from './load.mjs';

const root = dirname(dirname(fileURLToPath(import.meta.url)));
const dist = process.env.BENCH_DIST ?? join(root, 'dist');
const ops = Number(process.env.BENCH_REDIS_COMMANDS_OPS ?? 300);
if (!Number.isSafeInteger(ops) || ops <= 0)
  throw new Error(
    `BENCH_REDIS_COMMANDS_OPS must be a positive integer, got "${process.env.BENCH_REDIS_COMMANDS_OPS}".`,
  );

const children = [];
const cleanups = [];
const shutdown = () => {
  for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  for (const cleanup of cleanups) cleanup();
};
process.on('exit', shutdown);

function freePort() {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

/** Spawns a process and resolves once a line of its output matches `ready`. */
function startProcess(what, command, args, ready, env = process.env) {
  const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe'], env });
  children.push(child);
  return new Promise((resolve, reject) => {
    let output = '';
    const timer = setTimeout(() => reject(new Error(`${what} did not start within 20 s:\n${output}`)), 20_000);
    child.once('error', (error) => reject(new Error(`could not start ${what} (${command}: ${error.message})`)));
    child.once('exit', (code) => reject(new Error(`${what} exited with ${code}:\n${output}`)));
    for (const stream of [child.stdout, child.stderr]) {
      createInterface({ input: stream }).on('line', (line) => {
        output += `${line}\n`;
        if (ready.test(line)) {
          clearTimeout(timer);
          resolve({ child, line });
        }
      });
    }
  });
}

/** A tiny RESP client: enough for INFO. */
function infoClient(url) {
  const { hostname, port } = new URL(url);
  const socket = net.connect({ host: hostname, port: Number(port || 6379) });
  socket.setEncoding('utf8');
  let buffer = '';
  let waiting;
  let failed;
  socket.on('error', (error) => failed?.(error));
  socket.on('data', (chunk) => {
    buffer += chunk;
    const header = /^\$(\d+)\r\n/.exec(buffer);
    if (!header) return;
    const length = Number(header[1]);
    const start = header[0].length;
    if (Buffer.byteLength(buffer.slice(start)) < length + 2) return;
    const body = Buffer.from(buffer.slice(start)).subarray(0, length).toString();
    buffer = '';
    waiting?.(body);
  });
  return {
    /** Calls per command name. */
    async commandstats() {
      const text = await new Promise((resolve, reject) => {
        waiting = resolve;
        failed = reject;
        socket.write('*2\r\n$4\r\nINFO\r\n$12\r\ncommandstats\r\n');
      });
      const calls = new Map();
      for (const match of text.matchAll(/^cmdstat_([^:]+):calls=(\d+)/gm)) calls.set(match[1], Number(match[2]));
      return calls;
    },
    close: () => socket.destroy(),
  };
}

let redisUrl = process.env.BENCH_REDIS_COMMANDS_URL;
if (!redisUrl) {
  const port = await freePort();
  const dir = mkdtempSync(join(tmpdir(), 'mcp-bench-redis-'));
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  await startProcess(
    'redis-server',
    'redis-server',
    ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', dir],
    /Ready to accept connections/,
  );
  redisUrl = `redis://127.0.0.1:${port}`;
}
const serverPort = await freePort();
await startProcess('the echo server', process.execPath, [join(dist, 'bench/echo-server.js')], /^READY /, {
  ...process.env,
  REDIS_URL: redisUrl,
  MCP_SESSIONS: 'stateful',
  PORT: String(serverPort),
  HOST: '127.0.0.1',
});
const url = `http://127.0.0.1:${serverPort}/mcp`;
const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
const redis = infoClient(redisUrl);

/** Runs `operation` `n` times, one after the other, and returns Redis commands per operation. */
async function measure(operation, n = ops) {
  const before = await redis.commandstats();
  for (let i = 0; i < n; i++) await operation(i);
  const after = await redis.commandstats();
  const perCommand = {};
  let total = 0;
  for (const [name, calls] of after) {
    // The INFO that read `before` is counted in `after`.
    const delta = calls - (before.get(name) ?? 0) - (name === 'info' ? 1 : 0);
    if (delta > 0) {
      perCommand[name] = delta / n;
      total += delta;
    }
  }
  return { perOp: total / n, perCommand, n };
}

// Warm-up: loads the scripts and the server's code paths (one of each operation).
const warm = new McpWire(url, 'legacy-stateful', agent);
await warm.open();
await warm.callEcho();
await new McpWire(url, 'modern', agent).callEcho();

// Every session comes from 127.0.0.1: the opens measured stay under limits.sessionsPerAddress
// (100 by default, the warm-up holds one); the opens beyond it are measured apart.
const SESSIONS_PER_ADDRESS = 100;
const underCap = Math.min(ops, SESSIONS_PER_ADDRESS - 10);
const opened = [];
const open = async () => {
  const wire = new McpWire(url, 'legacy-stateful', agent);
  const { answer } = await wire.request('initialize', {
    protocolVersion: '2025-11-25',
    capabilities: {},
    clientInfo: { name: 'bench-redis', version: '1.0.0' },
  });
  wire.sessionId = answer.headers['mcp-session-id'];
  opened.push(wire);
};
const results = [];
results.push({ name: 'session open (initialize)', target: 4, ...(await measure(open, underCap)) });
results.push({
  name: 'notifications/initialized',
  ...(await measure((i) => opened[i].notify('notifications/initialized'), underCap)),
});
results.push({ name: 'legacy tools/call (2025-11-25)', target: 2, ...(await measure(() => warm.callEcho())) });
const modern = new McpWire(url, 'modern', agent);
results.push({ name: '2026-07-28 tools/call', target: 0, ...(await measure(() => modern.callEcho())) });
results.push({ name: 'session end (DELETE)', ...(await measure(() => opened.pop().terminate(), underCap)) });
for (let i = 1; i < SESSIONS_PER_ADDRESS; i++) await open();
results.push({
  name: 'session open at the address cap',
  note: "each ends the caller's least recently used session; the first reads the TTL of each of its sessions",
  ...(await measure(open, 50)),
});

const format = (n) => (Number.isInteger(n) ? String(n) : n.toFixed(2));
console.log('\nRedis commands per operation (INFO commandstats deltas, commands inside scripts included):');
let missed = 0;
for (const result of results) {
  const parts = Object.entries(result.perCommand)
    .sort((x, y) => y[1] - x[1])
    .map(([name, n]) => `${name} ${format(n)}`)
    .join(', ');
  const verdict = result.target === undefined ? '     ' : result.perOp <= result.target ? 'met  ' : 'MISS ';
  if (verdict === 'MISS ') missed++;
  const target = result.target === undefined ? '' : ` (target ≤ ${result.target})`;
  console.log(
    `  ${verdict}${result.name.padEnd(32)} ${format(result.perOp).padStart(6)}${target}  over ${result.n} ops${parts ? `  [${parts}]` : ''}${result.note ? `  (${result.note})` : ''}`,
  );
}
console.log(
  '  Each legacy call is one GETEX and the SET of its time of use; a session open sends its SET, ZADD, ZLEXCOUNT and ZCARD pipelined (one round trip).\n',
);
redis.close();
agent.destroy();
shutdown();
process.exit(missed ? 1 : 0);
