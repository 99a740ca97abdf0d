/**
 * Two real app processes sharing one Redis, behind a round-robin proxy written here: sessions,
 * GET streams, notifications, elicitation answers and failover must not care which instance a
 * request reaches. Runs twice: on the Redis at REDIS_URL (default 127.0.0.1:6379) and on a
 * 3-master Redis Cluster this file starts (redis-server and redis-cli on PATH). Skipped without
 * them, except under CI=true where a missing Redis or redis-server fails the run.
 */
import assert from 'node:assert/strict';
import {
  clusterRedis,
  keysMatching,
  redisSuitesSkip,
  singleRedis,
  startRedisCluster,
  type RedisClusterHandle,
  type RedisTarget,
} from '../utils/redis-cluster.js';
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createServer, request as httpRequest, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { after, before, describe, it } from 'node:test';
import {
  ResourceUpdatedNotificationSchema,
  ToolListChangedNotificationSchema,
} from '@modelcontextprotocol/sdk/types.js';
import { connectSdkClient, modernHeaders, modernMeta, modernRpc, rpc } from '../utils/clients.js';
import { GUARDED_NODE_ARGS } from '../utils/child-guard.js';
import { readSse, type SseEvent } from '../utils/sse.js';
import { endProcess, Watched, watchGetStreams } from '../utils/wait.js';

type Json = Record<string, any>;

const APP = fileURLToPath(new URL('../fixtures/scale-out.app.js', import.meta.url));
const ACCEPT = { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream' };

const skip = await redisSuitesSkip();
let cluster: RedisClusterHandle | undefined;
if (!skip) cluster = await startRedisCluster();
after(() => cluster?.stop());

/** One app process. */
class Instance {
  url = '';
  port = 0;
  private child?: ChildProcess;
  private stderr = '';
  /** Pulses this process announced (the fixture prints one line per pulse). */
  pulsed = 0;

  constructor(
    readonly name: string,
    private readonly prefix: string,
    private readonly target: RedisTarget,
  ) {}

  async start(): Promise<void> {
    const child = spawn(process.execPath, ['--enable-source-maps', ...GUARDED_NODE_ARGS, APP], {
      env: { ...process.env, ...this.target.env(), MCP_KEY_PREFIX: this.prefix, INSTANCE: this.name, PORT: '0' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    this.child = child;
    child.stderr!.on('data', (chunk) => (this.stderr += String(chunk)));
    const lines = createInterface({ input: child.stdout! });
    this.pulsed = 0;
    lines.on('line', (line) => {
      if (line.startsWith('pulse ')) (this.pulsed++, observed.notify());
    });
    this.port = await new Promise<number>((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new Error(`instance ${this.name} did not start in 60 s:\n${this.stderr}`)),
        60_000,
      );
      child.once('exit', (code) => reject(new Error(`instance ${this.name} exited with ${code}:\n${this.stderr}`)));
      lines.on('line', (line) => {
        try {
          const { port } = JSON.parse(line) as { port: number };
          clearTimeout(timer);
          resolve(port);
        } catch {
          // not the ready line
        }
      });
    });
    this.url = `http://127.0.0.1:${this.port}/mcp`;
  }

  /** SIGKILL: no shutdown hooks, sockets reset, nothing flushed. */
  async kill(): Promise<void> {
    await endProcess(this.child, 'SIGKILL');
  }

  async stop(): Promise<void> {
    await endProcess(this.child, 'SIGTERM', 5000);
  }
}

interface ProxyLogEntry {
  method: string;
  backend: string;
  sessionId?: string;
  rpcMethod?: string;
}

/**
 * A load balancer in miniature: each request goes to the next backend in turn; a backend that
 * refuses the connection is skipped (as a health-checked balancer would), and a response cut by
 * a dying backend is cut for the client too.
 */
class RoundRobinProxy {
  readonly log: ProxyLogEntry[] = [];
  private next = 0;
  private server?: Server;
  url = '';

  constructor(private readonly backends: Instance[]) {}

  async start(): Promise<void> {
    this.server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        const body = Buffer.concat(chunks);
        const attempt = (tries: number): void => {
          const backend = this.backends[this.next++ % this.backends.length];
          const upstream = httpRequest(
            { host: '127.0.0.1', port: backend.port, method: req.method, path: req.url, headers: req.headers },
            (answer: IncomingMessage) => {
              let rpcMethod: string | undefined;
              try {
                rpcMethod = body.length ? (JSON.parse(body.toString()) as Json).method : undefined;
              } catch {
                // not JSON
              }
              this.log.push({
                method: req.method!,
                backend: backend.name,
                sessionId: req.headers['mcp-session-id'] as string | undefined,
                rpcMethod,
              });
              res.writeHead(answer.statusCode!, answer.headers);
              answer.pipe(res);
              answer.on('aborted', () => res.destroy());
              answer.on('error', () => res.destroy());
            },
          );
          upstream.on('error', (error: NodeJS.ErrnoException) => {
            if (!res.headersSent && error.code === 'ECONNREFUSED' && tries < this.backends.length)
              return attempt(tries + 1);
            res.destroy();
          });
          res.on('close', () => upstream.destroy());
          upstream.end(body);
        };
        attempt(1);
      });
    });
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/mcp`;
  }

  async stop(): Promise<void> {
    this.server?.closeAllConnections();
    await new Promise((resolve) => this.server?.close(resolve));
  }
}

async function legacySession(url: string, capabilities: Json = {}): Promise<string> {
  const init = await rpc(url, {
    jsonrpc: '2.0',
    id: 0,
    method: 'initialize',
    params: { protocolVersion: '2025-11-25', capabilities, clientInfo: { name: 'raw', version: '1' } },
  });
  assert.equal(init.status, 200);
  const sessionId = init.headers.get('mcp-session-id')!;
  await rpc(url, { jsonrpc: '2.0', method: 'notifications/initialized' }, { sessionId });
  return sessionId;
}

function legacyHeaders(sessionId: string, extra: Record<string, string> = {}): Record<string, string> {
  return { ...ACCEPT, 'Mcp-Session-Id': sessionId, 'MCP-Protocol-Version': '2025-11-25', ...extra };
}

let nextId = 1;
function call(url: string, sessionId: string, name: string, args: Json = {}, headers: Record<string, string> = {}) {
  return rpc(
    url,
    { jsonrpc: '2.0', id: nextId++, method: 'tools/call', params: { name, arguments: args } },
    { headers: legacyHeaders(sessionId, headers), timeoutMs: 60_000 },
  );
}

function resultText(res: { json?: unknown; events?: SseEvent[] }): string {
  const message =
    (res.json as Json | undefined) ?? (res.events ?? []).map((e) => e.data as Json).find((m) => m && 'result' in m);
  return message?.result?.content?.[0]?.text;
}

/** An SSE response read in the background; survives the connection being cut. */
function follow(response: Response): { events: SseEvent[]; done: Promise<void>; stop(): void } {
  const controller = new AbortController();
  const events: SseEvent[] = [];
  let stop = (): void => undefined;
  const done = readSse(response.body, {
    onEvent: (event) => (events.push(event), observed.notify()),
    until: () => controller.signal.aborted,
    timeoutMs: 60_000,
  }).then(
    () => undefined,
    () => undefined,
  );
  stop = () => {
    controller.abort();
    void response.body?.cancel().catch(() => undefined);
  };
  return { events, done, stop };
}

function openGet(url: string, sessionId: string, lastEventId?: string): Promise<Response> {
  const headers: Record<string, string> = {
    Accept: 'text/event-stream',
    'Mcp-Session-Id': sessionId,
    'MCP-Protocol-Version': '2025-11-25',
  };
  if (lastEventId) headers['Last-Event-ID'] = lastEventId;
  return fetch(url, { headers });
}

/** Everything the waits look at (SSE events, pulses, notifications) notifies this. */
const observed = new Watched();

/** Resolves when `predicate` holds, re-checked on each observed change; `ms` only guards (at least 20 s, for a loaded machine). */
function waitFor(predicate: () => boolean, ms = 3000, what = 'condition'): Promise<void> {
  return observed.until(predicate, what, Math.max(ms, 60_000));
}

const messagesOf = (events: SseEvent[]): Json[] =>
  events.filter((e) => e.data !== '' && typeof e.data === 'object').map((e) => e.data as Json);

for (const target of [singleRedis, clusterRedis(() => cluster!)]) {
  describe(`scale-out: two instances, one Redis (${target.name}), a round-robin proxy`, { skip }, () => {
    const prefix = `mcp-e2e:${randomBytes(6).toString('hex')}:`;
    /** The prefix as the keys carry it: wrapped in a hash tag. */
    const P = `{${prefix}}`;
    const a = new Instance('A', prefix, target);
    const b = new Instance('B', prefix, target);
    const proxy = new RoundRobinProxy([a, b]);
    let redis: Awaited<ReturnType<RedisTarget['client']>>;

    before(async () => {
      redis = await target.client();
      await Promise.all([a.start(), b.start()]);
      await proxy.start();
    });

    after(async () => {
      await proxy.stop();
      await Promise.all([a.stop(), b.stop()]);
      for (const key of await keysMatching(redis, `${P}*`)) await redis.del(key);
      await redis.quit();
    });

    it('serves one legacy SDK session from both instances, alternately', async () => {
      const conn = await connectSdkClient(proxy.url);
      try {
        const names: string[] = [];
        for (let i = 0; i < 4; i++) {
          const result = await conn.client.callTool({ name: 'whoami', arguments: {} });
          names.push((result.content as Json[])[0].text);
        }
        assert.deepEqual(new Set(names), new Set(['A', 'B']), `calls ran on ${names.join(', ')}`);
        const tools = await conn.client.listTools();
        assert.ok(tools.tools.some((t) => t.name === 'whoami'));
        const sessionId = conn.transport.sessionId!;
        const served = new Set(proxy.log.filter((e) => e.sessionId === sessionId).map((e) => e.backend));
        assert.deepEqual(served, new Set(['A', 'B']));
      } finally {
        await conn.close();
      }
    });

    it('delivers to a GET stream on A a notification triggered through B', async () => {
      const sessionId = await legacySession(a.url);
      const stream = follow(await openGet(a.url, sessionId));
      try {
        await waitFor(() => stream.events.length >= 1, 3000, 'priming event');
        const added = await call(b.url, sessionId, 'add_tool', { name: `dyn_${Date.now()}` });
        assert.match(resultText(added), /on B$/);
        await waitFor(
          () => messagesOf(stream.events).some((m) => m.method === 'notifications/tools/list_changed'),
          2000,
          'list_changed on A',
        );

        // A resource subscription recorded through B, an update announced through B.
        const subscribed = await rpc(
          b.url,
          { jsonrpc: '2.0', id: nextId++, method: 'resources/subscribe', params: { uri: 'test://watched' } },
          { headers: legacyHeaders(sessionId) },
        );
        assert.equal(subscribed.status, 200);
        await call(b.url, sessionId, 'touch', { uri: 'test://unwatched' });
        await call(b.url, sessionId, 'touch', { uri: 'test://watched' });
        // The watched update was announced after the unwatched one: had that one leaked, it would be here.
        await waitFor(
          () => messagesOf(stream.events).some((m) => m.method === 'notifications/resources/updated'),
          2000,
          'resources/updated on A',
        );
        const updates = messagesOf(stream.events).filter((m) => m.method === 'notifications/resources/updated');
        assert.deepEqual(
          updates.map((m) => m.params.uri),
          ['test://watched'],
        );
      } finally {
        stream.stop();
      }
    });

    it('sends a server-to-client request produced on B to the GET stream on A, and routes the answer back', async () => {
      const sessionId = await legacySession(a.url, { elicitation: {} });
      const stream = follow(await openGet(a.url, sessionId));
      try {
        await waitFor(() => stream.events.length >= 1, 3000, 'priming event');
        // A plain-JSON call (no SSE accepted) cannot carry the request; the GET stream does.
        const pending = call(b.url, sessionId, 'confirm', {}, { Accept: 'application/json' });
        await waitFor(
          () => messagesOf(stream.events).some((m) => m.method === 'elicitation/create'),
          3000,
          'elicitation/create on A',
        );
        const request = messagesOf(stream.events).find((m) => m.method === 'elicitation/create')!;
        const answered = await rpc(
          a.url,
          { jsonrpc: '2.0', id: request.id, result: { action: 'accept', content: { ok: true } } },
          { headers: legacyHeaders(sessionId) },
        );
        assert.equal(answered.status, 202);
        assert.equal(resultText(await pending), 'B got ok=true');
      } finally {
        stream.stop();
      }
    });

    it('resumes a call waiting on A with an elicitation answer that lands on B', async () => {
      const sessionId = await legacySession(a.url, { elicitation: {} });
      let answer: Promise<unknown> | undefined;
      const res = await rpc(
        a.url,
        { jsonrpc: '2.0', id: 'e1', method: 'tools/call', params: { name: 'confirm', arguments: {} } },
        {
          headers: legacyHeaders(sessionId),
          timeoutMs: 60_000,
          onEvent: (event) => {
            const message = event.data as Json;
            if (message?.method === 'elicitation/create') {
              answer = rpc(
                b.url,
                { jsonrpc: '2.0', id: message.id, result: { action: 'accept', content: { ok: false } } },
                { headers: legacyHeaders(sessionId) },
              );
            }
          },
        },
      );
      assert.equal(((await answer) as { status: number }).status, 202);
      assert.equal(resultText(res), 'A got ok=false');

      // The same through the proxy with the official client: wherever the answer lands, it counts.
      const conn = await connectSdkClient(proxy.url, {
        onElicit: async () => ({ action: 'accept', content: { ok: true } }),
      });
      try {
        const texts: string[] = [];
        for (let i = 0; i < 3; i++)
          texts.push(((await conn.client.callTool({ name: 'confirm', arguments: {} })).content as Json[])[0].text);
        assert.ok(
          texts.every((t) => /^[AB] got ok=true$/.test(t)),
          texts.join('; '),
        );
      } finally {
        await conn.close();
      }
    });

    it('streams list_changed to a modern listen stream on A within a second of a registration on B', async () => {
      const response = await fetch(a.url, {
        method: 'POST',
        headers: { ...ACCEPT, ...modernHeaders('subscriptions/listen') },
        body: JSON.stringify({
          jsonrpc: '2.0',
          id: 'L1',
          method: 'subscriptions/listen',
          params: { notifications: { toolsListChanged: true, promptsListChanged: false }, _meta: modernMeta() },
        }),
      });
      const stream = follow(response);
      try {
        await waitFor(
          () => messagesOf(stream.events).some((m) => m.method === 'notifications/subscriptions/acknowledged'),
          3000,
          'acknowledgement',
        );
        const added = await modernRpc(b.url, 'tools/call', {
          name: 'add_tool',
          arguments: { name: `modern_${Date.now()}` },
        });
        assert.match(resultText(added), /on B$/);
        await waitFor(
          () => messagesOf(stream.events).some((m) => m.method === 'notifications/tools/list_changed'),
          60_000,
          'list_changed from B',
        );
        const change = messagesOf(stream.events).find((m) => m.method === 'notifications/tools/list_changed')!;
        assert.equal(change.params._meta['io.modelcontextprotocol/subscriptionId'], 'L1');
      } finally {
        stream.stop();
      }
    });

    it('resumes a POST stream through B while its call still runs on A', async () => {
      const sessionId = await legacySession(a.url);
      const controller = new AbortController();
      const response = await fetch(a.url, {
        method: 'POST',
        headers: legacyHeaders(sessionId),
        body: JSON.stringify({
          jsonrpc: '2.0',
          id: 't1',
          method: 'tools/call',
          params: { name: 'tick', arguments: { count: 30, intervalMs: 20 }, _meta: { progressToken: 'tk' } },
        }),
        signal: controller.signal,
      });
      // Read a few events, then resume through B from the last one seen. The call goes on on A
      // (a client disconnect would cancel it, so the first reader keeps its connection open).
      const first = follow(response);
      await waitFor(() => messagesOf(first.events).length >= 5, 3000, 'first progress events');
      const seen = first.events.filter((e) => e.id);
      const lastId = seen.at(-1)!.id!;
      const countBefore = messagesOf(first.events.slice(0, first.events.indexOf(seen.at(-1)!) + 1)).length;
      const resumed = follow(await openGet(b.url, sessionId, lastId));
      await resumed.done;
      controller.abort();
      const progress = [...messagesOf(first.events).slice(0, countBefore), ...messagesOf(resumed.events)]
        .filter((m) => m.method === 'notifications/progress')
        .map((m) => m.params.progress);
      assert.deepEqual(
        progress,
        Array.from({ length: 30 }, (_, i) => i + 1),
      );
      assert.equal(resultText({ events: resumed.events }), 'ticked 30 on A');
    });

    it('keeps every key under a TTL (except the one shared requestState secret)', async () => {
      const keys = await keysMatching(redis, `${P}*`);
      assert.ok(keys.length > 0);
      const untimed: string[] = [];
      for (const key of keys) if ((await redis.pttl(key)) < 0 && key !== `${P}state-secret`) untimed.push(key);
      assert.deepEqual(untimed, []);
    });

    it('fails over: A is killed mid-stream, the client resumes through B, no event lost, none twice', async () => {
      const sessionId = await legacySession(proxy.url);
      const total = 120;
      const MARKER = 'test://pulse/marker';
      for (const uri of [MARKER, ...Array.from({ length: total }, (_, i) => `test://pulse/${i + 1}`)]) {
        const res = await rpc(
          proxy.url,
          { jsonrpc: '2.0', id: nextId++, method: 'resources/subscribe', params: { uri } },
          { headers: legacyHeaders(sessionId) },
        );
        assert.equal(res.status, 200);
      }
      const first = follow(await openGet(a.url, sessionId));
      await waitFor(() => first.events.length >= 1, 3000, 'priming event');
      const updated = (events: SseEvent[]) =>
        events.filter((e) => (e.data as Json)?.method === 'notifications/resources/updated');
      const pulses = (events: SseEvent[]) => updated(events).filter((e) => (e.data as Json).params.uri !== MARKER);
      const pulsing = call(b.url, sessionId, 'pulse', { count: total, intervalMs: 8, prefix: 'test://pulse/' });
      await waitFor(() => pulses(first.events).length >= 30, 5000, '30 pulses on A');
      await a.kill();
      await first.done;
      const beforeKill = pulses(first.events);
      assert.ok(beforeKill.length < total, 'A died mid-stream');
      const lastId = first.events.filter((e) => e.id).at(-1)!.id!;
      // Pulses go on while no instance holds the stream; the client comes back ten pulses later.
      await waitFor(
        () => b.pulsed >= Math.min(total, beforeKill.length + 10),
        5000,
        'pulses while no instance holds the stream',
      );
      const logMark = proxy.log.length;
      const second = follow(await openGet(proxy.url, sessionId, lastId));
      assert.equal(proxy.log[logMark]?.backend, 'B', 'the proxy skipped the dead instance');
      assert.equal(resultText(await pulsing), `pulsed ${total} on B`);
      await waitFor(() => beforeKill.length + pulses(second.events).length >= total, 5000, 'all pulses');
      // A marker announced after the last pulse: once it is here, any duplicate would be too.
      await call(b.url, sessionId, 'touch', { uri: MARKER });
      await waitFor(
        () => updated(second.events).some((e) => (e.data as Json).params.uri === MARKER),
        5000,
        'the marker after the pulses',
      );
      second.stop();
      const all = [...beforeKill, ...pulses(second.events)];
      const uris = all.map((e) => (e.data as Json).params.uri as string);
      assert.equal(all.length, total, `received ${all.length} of ${total}`);
      assert.deepEqual(
        uris,
        Array.from({ length: total }, (_, i) => `test://pulse/${i + 1}`),
        'in order, each once',
      );
      const ids = [...first.events, ...second.events].map((e) => e.id).filter(Boolean);
      assert.equal(new Set(ids).size, ids.length, 'event ids are unique');
      assert.ok(pulses(second.events).length > 0);

      // The session lives on through B alone.
      const whoami = await call(proxy.url, sessionId, 'whoami');
      assert.equal(resultText(whoami), 'B');
    });

    it('lets the official client ride out the failover on its own (SDK GET-stream resume)', async () => {
      // A is gone; restart it so the client's GET stream can be held there and killed again.
      await a.start();
      const streams = watchGetStreams();
      const conn = await connectSdkClient(proxy.url, { fetch: streams.fetch });
      try {
        let changes = 0;
        let marked = false;
        conn.client.setNotificationHandler(ToolListChangedNotificationSchema, () => (changes++, observed.notify()));
        conn.client.setNotificationHandler(
          ResourceUpdatedNotificationSchema,
          () => ((marked = true), observed.notify()),
        );
        await streams.opened();
        const holder = proxy.log
          .filter((e) => e.method === 'GET' && e.sessionId === conn.transport.sessionId)
          .at(-1)!.backend;
        const [dying, surviving] = holder === 'A' ? [a, b] : [b, a];
        await dying.kill();
        // The change happens while the client has no stream; it must still arrive, once.
        await call(surviving.url, conn.transport.sessionId!, 'add_tool', { name: `after_kill_${Date.now()}` });
        await waitFor(() => changes >= 1, 8000, 'list_changed after the SDK reconnected');
        // A marker on the same stream after the change: once it is here, a duplicate would be too.
        await conn.client.subscribeResource({ uri: 'test://sdk-marker' });
        await call(surviving.url, conn.transport.sessionId!, 'touch', { uri: 'test://sdk-marker' });
        await waitFor(() => marked, 8000, 'the marker after the change');
        assert.equal(changes, 1);
        await dying.start();
      } finally {
        await conn.close();
      }
    });
  });
}
