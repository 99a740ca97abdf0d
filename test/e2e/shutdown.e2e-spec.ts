/**
 * ISSUE-20 item 5: graceful shutdown. Two real app processes share a Redis prefix; a 10-step
 * progress call runs on A, each step released by the test (a line on A's stdin), so the stream is
 * still running when A gets a real SIGTERM. A then refuses new work with 503 + Retry-After, ends
 * the stream with a `retry:` hint, and lets the call finish within its grace period while its
 * events go on to the Redis event store; the client resumes on B with Last-Event-ID and gets
 * every event once. Every wait is for an event (a progress event, the stream end, the exit).
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { createServer, request as httpRequest, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { connectSdkClient, rpc } from '../utils/clients.js';
import { FixtureInstance } from '../utils/fixture-process.js';
import { follow } from '../utils/follow.js';
import { legacySession } from '../utils/legacy-session.js';
import { clearRedisPrefix, REDIS_URL, redisAvailable } from '../utils/redis.js';
import type { SseEvent } from '../utils/sse.js';
import { endProcess, guard, Watched } from '../utils/wait.js';

type Json = Record<string, any>;

const VERSION = '2025-11-25';
const SSE_ACCEPT = { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream' };

let nextId = 1;

const sessionHeaders = (sessionId: string): Record<string, string> => ({
  ...SSE_ACCEPT,
  'Mcp-Session-Id': sessionId,
  'MCP-Protocol-Version': VERSION,
});
const messagesOf = (events: SseEvent[]): Json[] =>
  events.filter((e) => typeof e.data === 'object' && e.data !== null).map((e) => e.data as Json);
const progressOf = (events: SseEvent[]): number[] =>
  messagesOf(events)
    .filter((m) => m.method === 'notifications/progress')
    .map((m) => m.params.progress as number);

/**
 * A health-checked load balancer in miniature: each request goes to the first backend that
 * neither refuses the connection nor answers 503, as a balancer retries elsewhere.
 */
class FailoverProxy {
  url = '';
  /** Every answer a backend gave, in order. */
  readonly log: Array<{ method: string; backend: string; status: number; lastEventId?: string }> = [];
  readonly logged = new Watched();
  private server?: Server;

  constructor(private readonly backends: FixtureInstance[]) {}

  async start(): Promise<void> {
    this.server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        const attempt = (index: number): void => {
          const next = (): void =>
            index + 1 < this.backends.length ? attempt(index + 1) : void res.writeHead(502).end();
          const target = new URL(this.backends[index].url);
          const upstream = httpRequest(
            { host: target.hostname, port: target.port, method: req.method, path: req.url, headers: req.headers },
            (answer) => {
              const lastEventId = req.headers['last-event-id'] as string | undefined;
              this.log.push({
                method: req.method!,
                backend: this.backends[index].name,
                status: answer.statusCode!,
                lastEventId,
              });
              this.logged.notify();
              if (answer.statusCode === 503) return (answer.resume(), next());
              res.writeHead(answer.statusCode!, answer.headers);
              answer.pipe(res);
              answer.on('error', () => res.destroy());
            },
          );
          upstream.on('error', () => (res.headersSent ? res.destroy() : next()));
          res.on('close', () => upstream.destroy());
          upstream.end(Buffer.concat(chunks));
        };
        attempt(0);
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

const skip = (await redisAvailable()) ? false : `no Redis at ${REDIS_URL} (start one, or run .ci/run)`;

describe('graceful shutdown: SIGTERM during a 10-step progress stream, resumed on a second instance', { skip }, () => {
  const prefix = `mcp-shutdown:${randomBytes(6).toString('hex')}:`;
  // A grace far beyond the test's own pace: the call must finish by itself, not be cancelled.
  const env = { REDIS_URL, MCP_KEY_PREFIX: prefix, SHUTDOWN_GRACE_MS: '120000' };
  const a = new FixtureInstance('A', env, 'pipe');
  const b = new FixtureInstance('B', env);
  /** Releases one step of the running `gated` call (a line on A's stdin). */
  const step = (): void => void a.child!.stdin!.write('step\n');

  before(async () => {
    await Promise.all([a.start(), b.start()]);
  });

  after(async () => {
    await Promise.all([endProcess(a.child, 'SIGKILL'), endProcess(b.child, 'SIGTERM', 10_000)]);
    await clearRedisPrefix(prefix);
  });

  it('refuses new work with 503, ends the stream with a retry hint, finishes the call, and B delivers every event once', async () => {
    const sessionId = await legacySession(a.url, 'shutdown');
    const callId = `gated-${nextId++}`;
    const response = await fetch(a.url, {
      method: 'POST',
      headers: sessionHeaders(sessionId),
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: callId,
        method: 'tools/call',
        params: { name: 'gated', arguments: { count: 10 }, _meta: { progressToken: 'p' } },
      }),
    });
    assert.equal(response.status, 200);
    assert.match(response.headers.get('content-type') ?? '', /text\/event-stream/);
    const first = follow(response);
    for (let i = 1; i <= 4; i++) {
      step();
      await first.until((events) => progressOf(events).length >= i, 60_000, `progress step ${i} from A`);
    }

    const exited = once(a.child!, 'exit');
    a.child!.kill('SIGTERM');
    const cut = await guard(first.done, "A ending the call's stream after SIGTERM");
    assert.deepEqual(cut, { ended: true, timedOut: false, failed: false }, 'A closed the stream itself');
    assert.deepEqual(progressOf(first.events), [1, 2, 3, 4]);
    assert.equal(first.events.at(-1)?.retry !== undefined, true, 'the stream ends with a retry: hint');
    assert.equal(
      messagesOf(first.events).some((m) => m.id === callId),
      false,
      'no answer yet: the call still runs',
    );

    // A is draining (the call still runs there): new sessions, calls and streams go elsewhere.
    const refusedCall = await rpc(
      a.url,
      { jsonrpc: '2.0', id: nextId++, method: 'tools/call', params: { name: 'whoami', arguments: {} } },
      { sessionId, headers: { 'MCP-Protocol-Version': VERSION } },
    );
    assert.equal(refusedCall.status, 503);
    assert.equal(refusedCall.headers.get('retry-after'), '1');
    assert.equal((refusedCall.json as Json).error.code, -32000);
    assert.match((refusedCall.json as Json).error.message, /shutting down/);
    const refusedInit = await rpc(a.url, {
      jsonrpc: '2.0',
      id: nextId++,
      method: 'initialize',
      params: { protocolVersion: VERSION, capabilities: {}, clientInfo: { name: 'late', version: '1' } },
    });
    assert.equal(refusedInit.status, 503);
    assert.equal(refusedInit.headers.get('mcp-session-id'), null);
    const lastId = first.events.filter((e) => e.id !== undefined).at(-1)!.id!;
    const refusedGet = await fetch(a.url, {
      headers: {
        Accept: 'text/event-stream',
        'Mcp-Session-Id': sessionId,
        'MCP-Protocol-Version': VERSION,
        'Last-Event-ID': lastId,
      },
    });
    assert.equal(refusedGet.status, 503);
    await refusedGet.body?.cancel();

    // The client resumes on B, which follows the call's events as A stores them.
    const resumedResponse = await fetch(b.url, {
      headers: {
        Accept: 'text/event-stream',
        'Mcp-Session-Id': sessionId,
        'MCP-Protocol-Version': VERSION,
        'Last-Event-ID': lastId,
      },
    });
    assert.equal(resumedResponse.status, 200);
    const resumed = follow(resumedResponse);
    for (let i = 5; i <= 10; i++) {
      step();
      await resumed.until((events) => progressOf(events).length >= i - 4, 60_000, `progress step ${i} through B`);
    }
    const end = await guard(resumed.done, 'the resumed stream on B ending with the answer');
    assert.deepEqual(end, { ended: true, timedOut: false, failed: false });
    const [code, signal] = await guard(exited, 'A exiting once its call finished');
    assert.ok(code === 0 || signal === 'SIGTERM', `A exited cleanly (code ${code}, signal ${signal}):\n${a.stderr}`);

    const all = [...progressOf(first.events), ...progressOf(resumed.events)];
    assert.deepEqual(all, [1, 2, 3, 4, 5, 6, 7, 8, 9, 10], 'every step once, in order');
    const answers = messagesOf(resumed.events).filter((m) => m.id === callId);
    assert.equal(answers.length, 1, 'the answer once');
    assert.equal(answers[0].result.content[0].text, 'stepped 10 on A');
    const ids = [...first.events, ...resumed.events]
      .map((e) => e.id)
      .filter((id): id is string => id !== undefined && !id.endsWith('.0'));
    assert.equal(new Set(ids).size, ids.length, 'event ids are unique');
    assert.doesNotMatch(a.stderr, /unhandled|uncaught/i);

    // B lives on and serves the session.
    const whoami = await rpc(
      b.url,
      { jsonrpc: '2.0', id: nextId++, method: 'tools/call', params: { name: 'whoami', arguments: {} } },
      { sessionId, headers: { 'MCP-Protocol-Version': VERSION } },
    );
    assert.equal((whoami.json as Json).result.content[0].text, 'B');
  });
});

describe('graceful shutdown with the official client behind a balancer', { skip }, () => {
  const prefix = `mcp-shutdown-sdk:${randomBytes(6).toString('hex')}:`;
  const env = { REDIS_URL, MCP_KEY_PREFIX: prefix, SHUTDOWN_GRACE_MS: '120000' };
  const a = new FixtureInstance('A', env, 'pipe');
  const b = new FixtureInstance('B', env);
  const proxy = new FailoverProxy([a, b]);

  before(async () => {
    await Promise.all([a.start(), b.start()]);
    await proxy.start();
  });

  after(async () => {
    await proxy.stop();
    await Promise.all([endProcess(a.child, 'SIGKILL'), endProcess(b.child, 'SIGTERM', 10_000)]);
    await clearRedisPrefix(prefix);
  });

  it('rides out the SIGTERM on its own: the retry hint, a 503 from A, the resume on B, every progress event once', async () => {
    const connection = await connectSdkClient(proxy.url);
    try {
      const progress: number[] = [];
      const seen = new Watched();
      const result = connection.client.callTool({ name: 'gated', arguments: { count: 10 } }, undefined, {
        onprogress: (p) => (progress.push(p.progress), seen.notify()),
        resetTimeoutOnProgress: true,
      });
      for (let i = 1; i <= 4; i++) {
        a.child!.stdin!.write('step\n');
        await seen.until(() => progress.length >= i, `progress step ${i} from A`);
      }
      const exited = once(a.child!, 'exit');
      a.child!.kill('SIGTERM');
      // A ends the call's stream with a retry hint; the client comes back with Last-Event-ID, A
      // refuses it (503) and the balancer hands it to B. Only then are the other steps released.
      const resumedOnB = (): boolean =>
        proxy.log.some(
          (e) => e.method === 'GET' && e.backend === 'B' && e.status === 200 && e.lastEventId?.includes('.') === true,
        );
      await proxy.logged.until(resumedOnB, 'the client resuming on B with Last-Event-ID', 60_000);
      assert.ok(
        proxy.log.some(
          (e) => e.method === 'GET' && e.backend === 'A' && e.status === 503 && e.lastEventId !== undefined,
        ),
        'A refused the resume while draining',
      );
      assert.deepEqual(progress, [1, 2, 3, 4]);
      for (let i = 5; i <= 10; i++) a.child!.stdin!.write('step\n');
      const answer = (await guard(result, 'the call answered through B', 60_000)) as {
        content: Array<{ text: string }>;
      };
      assert.equal(answer.content[0].text, 'stepped 10 on A');
      assert.deepEqual(progress, [1, 2, 3, 4, 5, 6, 7, 8, 9, 10], 'every step once, in order');
      await guard(exited, 'A exiting once its call finished');
    } finally {
      await connection.close();
    }
  });
});
