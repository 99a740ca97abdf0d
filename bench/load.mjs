// The bench's load generator: a small Streamable HTTP client (keep-alive node:http, JSON or SSE
// answers, Accept / MCP-Protocol-Version / Mcp-Session-Id / Mcp-Method / Mcp-Name headers, the
// 2026-07-28 `_meta` envelope) that runs one scenario against one server and prints one JSON line.
//
//   node bench/load.mjs '{"scenario":"throughput","op":"call","wire":"legacy-stateless","url":"http://127.0.0.1:3000/mcp"}'
//
// Scenarios (options in the JSON argument):
//   throughput  op call|list, concurrency, warmupMs, durationMs, serverPid?, expectTools?
//               -> requests/s, server CPU ms per call (from /proc/<serverPid>/stat), latency
//   init        concurrency, warmupMs, durationMs, serverPid?
//               -> legacy sessions/s, one iteration = initialize + notifications/initialized + DELETE
//   memory      sessions, serverPid, memFile (the server runs with bench/preload.mjs)
//               -> bytes per idle legacy session after a forced GC
//   sse         repeats -> ms for one call streaming 100 progress notifications vs 100 plain calls
// Every answer is checked (status, JSON-RPC id, tool result); failures are counted as errors.
import http from 'node:http';
import { readFileSync, existsSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';

export const LEGACY_VERSION = '2025-11-25';
export const MODERN_VERSION = '2026-07-28';
const PROGRESS_STEPS = 100;

// ------------------------------------------------------------------------------------ HTTP

/** Sends one request on the agent and resolves with status, headers and the parsed answer. */
function send(agent, url, method, headers, body) {
  return new Promise((resolve, reject) => {
    const req = http.request(
      { agent, host: url.hostname, port: url.port, path: url.pathname, method, headers },
      (res) => {
        const chunks = [];
        res.on('data', (chunk) => chunks.push(chunk));
        res.on('error', reject);
        res.on('end', () => {
          const text = chunks.length === 1 ? chunks[0].toString('utf8') : Buffer.concat(chunks).toString('utf8');
          const type = res.headers['content-type'] ?? '';
          let messages = [];
          try {
            if (type.includes('text/event-stream')) messages = parseSse(text);
            else if (text.length > 0) messages = [JSON.parse(text)];
          } catch (error) {
            reject(new Error(`unparseable ${type || 'untyped'} answer (${error.message}): ${text.slice(0, 200)}`));
            return;
          }
          resolve({ status: res.statusCode, headers: res.headers, messages, sse: type.includes('text/event-stream') });
        });
      },
    );
    req.on('error', reject);
    if (body !== undefined) req.end(body);
    else req.end();
  });
}

/** Parses a complete SSE body into the JSON payloads of its `data:` fields. */
export function parseSse(text) {
  const out = [];
  for (const block of text.split(/\r?\n\r?\n/)) {
    let data = '';
    for (const line of block.split(/\r?\n/)) {
      if (line.startsWith('data:')) data += (data ? '\n' : '') + line.slice(line[5] === ' ' ? 6 : 5);
    }
    if (data) out.push(JSON.parse(data));
  }
  return out;
}

// ------------------------------------------------------------------------------------ MCP wire

/**
 * One client conversation on one wire: `legacy-stateless` (2025-11-25, initialize once, no
 * session), `legacy-stateful` (2025-11-25 with an Mcp-Session-Id) or `modern` (2026-07-28
 * envelope and headers on every request, no initialize).
 */
export class McpWire {
  constructor(url, wire, agent) {
    this.url = new URL(url);
    this.wire = wire;
    this.agent = agent;
    this.sessionId = undefined;
    this.nextId = 1;
  }

  headers(method, name) {
    const headers = { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream' };
    if (this.wire === 'modern') {
      headers['MCP-Protocol-Version'] = MODERN_VERSION;
      headers['Mcp-Method'] = method;
      if (name !== undefined) headers['Mcp-Name'] = name;
    } else if (method !== 'initialize') {
      headers['MCP-Protocol-Version'] = LEGACY_VERSION;
    }
    if (this.sessionId !== undefined) headers['Mcp-Session-Id'] = this.sessionId;
    return headers;
  }

  params(params = {}) {
    if (this.wire !== 'modern') return params;
    return {
      ...params,
      _meta: {
        ...params._meta,
        'io.modelcontextprotocol/protocolVersion': MODERN_VERSION,
        'io.modelcontextprotocol/clientCapabilities': {},
      },
    };
  }

  /** Sends a request and returns its JSON-RPC response (plus the notifications that preceded it). */
  async request(method, params, name) {
    const id = this.nextId++;
    const body = JSON.stringify({ jsonrpc: '2.0', id, method, params: this.params(params) });
    const answer = await send(this.agent, this.url, 'POST', this.headers(method, name), body);
    const response = answer.messages.find((m) => m.id === id && ('result' in m || 'error' in m));
    if (answer.status !== 200 || !response) {
      throw new Error(`${method}: HTTP ${answer.status}, answer ${JSON.stringify(answer.messages).slice(0, 300)}`);
    }
    if (response.error) throw new Error(`${method}: JSON-RPC error ${JSON.stringify(response.error)}`);
    return { response, notifications: answer.messages.filter((m) => m.id === undefined), answer };
  }

  async notify(method, params) {
    const body = JSON.stringify({ jsonrpc: '2.0', method, params: this.params(params) });
    const answer = await send(this.agent, this.url, 'POST', this.headers(method), body);
    if (answer.status !== 202 && answer.status !== 200) throw new Error(`${method}: HTTP ${answer.status}`);
  }

  /** The legacy handshake; keeps the session id the server issues (if any). */
  async initialize() {
    this.sessionId = undefined;
    const { answer } = await this.request('initialize', {
      protocolVersion: LEGACY_VERSION,
      capabilities: {},
      clientInfo: { name: 'bench-load', version: '1.0.0' },
    });
    const sessionId = answer.headers['mcp-session-id'];
    if (this.wire === 'legacy-stateful' && typeof sessionId !== 'string') {
      throw new Error('initialize: a stateful server answered without an Mcp-Session-Id header');
    }
    this.sessionId = typeof sessionId === 'string' ? sessionId : undefined;
    await this.notify('notifications/initialized');
  }

  /** Sets up the conversation: the handshake on legacy wires, nothing on the modern one. */
  async open() {
    if (this.wire !== 'modern') await this.initialize();
  }

  async terminate() {
    if (this.sessionId === undefined) return;
    const answer = await send(this.agent, this.url, 'DELETE', this.headers('DELETE'));
    if (answer.status !== 200 && answer.status !== 204) throw new Error(`DELETE: HTTP ${answer.status}`);
    this.sessionId = undefined;
  }

  async callEcho() {
    const { response } = await this.request('tools/call', { name: 'echo', arguments: { text: 'hi' } }, 'echo');
    const content = response.result?.content;
    if (response.result?.isError || content?.[0]?.text !== 'hello') {
      throw new Error(`tools/call echo: unexpected result ${JSON.stringify(response.result).slice(0, 200)}`);
    }
  }

  async listTools(expected) {
    const { response } = await this.request('tools/list', {});
    const count = response.result?.tools?.length;
    if (expected !== undefined && count !== expected) {
      throw new Error(`tools/list: expected ${expected} tools, got ${count}`);
    }
  }

  /** Calls the `progress` tool with a progressToken; returns how many progress notifications came. */
  async callProgress() {
    const { response, notifications } = await this.request(
      'tools/call',
      { name: 'progress', arguments: { text: 'hi' }, _meta: { progressToken: `p${this.nextId}` } },
      'progress',
    );
    if (response.result?.isError) throw new Error(`tools/call progress: ${JSON.stringify(response.result)}`);
    return notifications.filter((n) => n.method === 'notifications/progress').length;
  }
}

// ------------------------------------------------------------------------------------ measuring

/** utime + stime of a process in clock ticks (all threads), or undefined if unreadable. */
export function cpuTicks(pid) {
  if (!pid) return undefined;
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return Number(fields[11]) + Number(fields[12]);
  } catch {
    return undefined;
  }
}

/** Busy ticks of the whole machine (steal included: time the hypervisor took is lost to us too). */
export function machineBusyTicks() {
  try {
    const [user, nice, system, , , irq, softirq, steal] = readFileSync('/proc/stat', 'utf8')
      .slice(0, 200)
      .split('\n')[0]
      .trim()
      .split(/\s+/)
      .slice(1)
      .map(Number);
    return user + nice + system + irq + softirq + (steal || 0);
  } catch {
    return undefined;
  }
}

function percentile(sorted, p) {
  if (sorted.length === 0) return 0;
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}

/**
 * Runs `iteration(worker)` in `concurrency` closed loops for warmup + duration and measures the
 * window after the warm-up: completed iterations, errors, latency and the server's CPU.
 */
async function closedLoop({ concurrency, warmupMs, durationMs, serverPid, clkTck = 100 }, setup, iteration) {
  const agent = new http.Agent({ keepAlive: true, maxSockets: concurrency });
  const workers = [];
  for (let i = 0; i < concurrency; i++) workers.push(await setup(agent, i));
  let measuring = false;
  let stop = false;
  let count = 0;
  let errors = 0;
  let firstError;
  const latencies = [];
  const loop = async (worker) => {
    while (!stop) {
      const started = performance.now();
      try {
        await iteration(worker);
        if (measuring) {
          count++;
          if (latencies.length < 200_000) latencies.push(performance.now() - started);
        }
      } catch (error) {
        if (measuring) errors++;
        firstError ??= error.message;
        await sleep(1);
      }
    }
  };
  const running = workers.map(loop);
  await sleep(warmupMs);
  measuring = true;
  const t0 = performance.now();
  const cpu0 = cpuTicks(serverPid);
  const busy0 = machineBusyTicks();
  const self0 = process.cpuUsage();
  await sleep(durationMs);
  measuring = false;
  const elapsed = (performance.now() - t0) / 1000;
  const cpu1 = cpuTicks(serverPid);
  const busy1 = machineBusyTicks();
  const self = process.cpuUsage(self0);
  stop = true;
  await Promise.all(running);
  agent.destroy();
  latencies.sort((a, b) => a - b);
  const serverCpuMs = cpu0 !== undefined && cpu1 !== undefined ? ((cpu1 - cpu0) * 1000) / clkTck : undefined;
  const clientCpuMs = (self.user + self.system) / 1000;
  // CPU burnt by anything but this server and this client (other processes sharing the machine).
  const foreignMs =
    busy0 !== undefined && busy1 !== undefined && serverCpuMs !== undefined
      ? Math.max(0, ((busy1 - busy0) * 1000) / clkTck - serverCpuMs - clientCpuMs)
      : undefined;
  return {
    workers,
    count,
    errors,
    firstError,
    seconds: elapsed,
    perSecond: count / elapsed,
    serverCpuMsPerOp: serverCpuMs !== undefined && count > 0 ? serverCpuMs / count : undefined,
    serverCpuShare: serverCpuMs !== undefined ? serverCpuMs / 1000 / elapsed : undefined,
    clientCpuShare: clientCpuMs / 1000 / elapsed,
    foreignCpuShare: foreignMs !== undefined ? foreignMs / 1000 / elapsed : undefined,
    p50Ms: percentile(latencies, 50),
    p99Ms: percentile(latencies, 99),
  };
}

async function throughput(opts) {
  const { url, wire, op, expectTools } = opts;
  const result = await closedLoop(
    opts,
    async (agent) => {
      const client = new McpWire(url, wire, agent);
      await client.open();
      return client;
    },
    op === 'list' ? (client) => client.listTools(expectTools) : (client) => client.callEcho(),
  );
  for (const client of result.workers) await client.terminate().catch(() => undefined);
  delete result.workers;
  return result;
}

async function init(opts) {
  const result = await closedLoop(
    opts,
    async (agent) => new McpWire(opts.url, 'legacy-stateful', agent),
    async (client) => {
      await client.initialize();
      await client.terminate();
    },
  );
  delete result.workers;
  return result;
}

/** Forces a GC in the server (SIGWINCH to bench/preload.mjs) and reads its memoryUsage(). */
async function serverMemory(serverPid, memFile) {
  const before = existsSync(memFile) ? readFileSync(memFile, 'utf8') : '';
  process.kill(serverPid, 'SIGWINCH');
  for (let i = 0; i < 500; i++) {
    await sleep(10);
    const now = existsSync(memFile) ? readFileSync(memFile, 'utf8') : '';
    if (now && now !== before) {
      try {
        return JSON.parse(now);
      } catch {
        // Partly written: read again.
      }
    }
  }
  throw new Error(
    `the server (pid ${serverPid}) did not write ${memFile} after SIGWINCH; was it started with --expose-gc --import bench/preload.mjs?`,
  );
}

async function memory({ url, sessions = 1000, serverPid, memFile }) {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 8 });
  const churn = async (n, keep) => {
    const clients = [];
    let next = 0;
    await Promise.all(
      Array.from({ length: 8 }, async () => {
        while (next < n) {
          next++;
          const client = new McpWire(url, 'legacy-stateful', agent);
          await client.initialize();
          await client.callEcho();
          if (keep) clients.push(client);
          else await client.terminate();
        }
      }),
    );
    return clients;
  };
  await churn(200, false); // warm every code path the idle sessions will have touched
  const base = await serverMemory(serverPid, memFile);
  const kept = await churn(sessions, true);
  const after = await serverMemory(serverPid, memFile);
  for (const client of kept) await client.terminate().catch(() => undefined);
  agent.destroy();
  const delta = (key) => (after[key] - base[key]) / kept.length;
  return {
    sessions: kept.length,
    heapBytesPerSession: delta('heapUsed'),
    externalBytesPerSession: delta('external'),
    bytesPerSession: delta('heapUsed') + delta('external'),
    rssBytesPerSession: delta('rss'),
    base,
    after,
  };
}

async function sse({ url, wire, repeats = 5 }) {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  const client = new McpWire(url, wire, agent);
  await client.open();
  const streamed = [];
  const plain = [];
  let notifications = 0;
  for (let round = -2; round < repeats; round++) {
    let t = performance.now();
    notifications = await client.callProgress();
    const stream = performance.now() - t;
    t = performance.now();
    for (let i = 0; i < PROGRESS_STEPS; i++) await client.callEcho();
    const calls = performance.now() - t;
    if (round >= 0) {
      streamed.push(stream);
      plain.push(calls);
    }
  }
  await client.terminate().catch(() => undefined);
  agent.destroy();
  streamed.sort((a, b) => a - b);
  plain.sort((a, b) => a - b);
  const streamMs = percentile(streamed, 50);
  const plainMs = percentile(plain, 50);
  return {
    notifications,
    complete: notifications === PROGRESS_STEPS,
    streamMs,
    plainMs,
    ratio: streamMs / plainMs,
  };
}

export const SCENARIOS = { throughput, init, memory, sse };

async function runOne(opts) {
  const scenario = SCENARIOS[opts.scenario];
  if (!scenario)
    return { failed: `unknown scenario "${opts.scenario}"; use one of ${Object.keys(SCENARIOS).join(', ')}` };
  try {
    return await scenario(opts);
  } catch (error) {
    return { failed: error.message };
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  if (process.argv[2] === '--serve') {
    // Long-lived mode for bench/run.mjs: one JSON scenario per stdin line, one JSON answer per
    // stdout line, so the client stays JIT-warm across measurements.
    const { createInterface } = await import('node:readline');
    for await (const line of createInterface({ input: process.stdin })) {
      if (line.trim() === '') continue;
      process.stdout.write(`${JSON.stringify(await runOne(JSON.parse(line)))}\n`);
    }
  } else {
    const result = await runOne(JSON.parse(process.argv[2] ?? '{}'));
    process.stdout.write(`${JSON.stringify(result)}\n`);
    if (result.failed) process.exitCode = 1;
  }
}
