/**
 * The 2024-11-05 HTTP+SSE transport from the attacker's side. A POST is answered 202 at once and
 * its answer comes later on the stream, so nothing but the server holds a client back: a session
 * runs at most `legacySse.maxRequestsInFlight` requests, the rest are refused on the stream and
 * never start (issue 26 item 12). Also: another principal cannot post into a session, unknown
 * session ids and oversized bodies are refused without echo, handler exceptions keep their text
 * in the log, and a client that stops reading loses its stream instead of growing the server.
 */
import assert from 'node:assert/strict';
import { connect as netConnect, type Socket } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { Injectable, Module, type DynamicModule } from '@nestjs/common';
import { Ctx, McpModule, Tool, type McpContext, type McpModuleForRootOptions } from '../../lib/index.js';
import { Holds } from '../fixtures/policies.module.js';
import { startApp, type RunningApp, type TestPlatform } from '../utils/app.js';
import { openSseSession, post, type RawSseSession } from '../utils/legacy-sse.js';
import type { SseEvent } from '../utils/sse.js';
import { Watched } from '../utils/wait.js';

type Json = Record<string, any>;

const TOKENS: Record<string, string> = { 'token-alice-0123456789': 'alice', 'token-bob-0123456789': 'bob' };
const ALICE = { Authorization: 'Bearer token-alice-0123456789' };
const BOB = { Authorization: 'Bearer token-bob-0123456789' };
const SECRET = 'postgres://app:SSE-SECRET@db.internal/prod';

const holds = new Holds();
/** Handlers of `hold` that started, for "a refused request never starts". */
const started = { count: 0, watched: new Watched() };

@Injectable()
class SseAttackTools {
  @Tool('hold', { description: 'Runs until the test releases it or the call is cancelled.' })
  async hold(@Ctx() ctx: McpContext): Promise<string> {
    started.count++;
    started.watched.notify();
    await Promise.race([holds.hold(), new Promise((resolve) => ctx.signal.addEventListener('abort', resolve))]);
    return ctx.signal.aborted ? 'cancelled' : 'released';
  }

  @Tool('stubborn', { description: 'Ignores cancellation: runs until the test releases it.' })
  async stubborn(): Promise<string> {
    started.count++;
    started.watched.notify();
    await holds.hold();
    return 'released';
  }

  @Tool('leak', { description: 'Fails with a secret in its exception.' })
  leak(): string {
    throw new Error(`could not connect to ${SECRET}`);
  }

  @Tool('whoami', { description: 'The caller.' })
  whoami(@Ctx() ctx: McpContext): string {
    return ctx.principal ?? 'anonymous';
  }

  @Tool('blob', { description: 'Returns 32 KiB of text.' })
  blob(): string {
    return 'x'.repeat(32 * 1024);
  }
}

function sseApp(options: Partial<McpModuleForRootOptions>): DynamicModule {
  @Module({
    imports: [McpModule.forRoot({ name: 'sse-attack', version: '1.0.0', legacySse: true, ...options })],
    providers: [SseAttackTools],
  })
  class SseAttackApp {}
  return { module: SseAttackApp };
}

/** Matches the stream's answer (result or error) to request `id`. */
const answerTo = (id: string) => (e: SseEvent) => (e.data as Json | undefined)?.id === id;

/** POSTs `count` hold calls at once (ids `<prefix>0`...) and resolves once every POST was answered. */
async function postHolds(
  session: RawSseSession,
  prefix: string,
  count: number,
  headers: Record<string, string> = {},
): Promise<void> {
  const statuses = await Promise.all(
    Array.from({ length: count }, (_, i) =>
      post(
        session.messages,
        { jsonrpc: '2.0', id: `${prefix}${i}`, method: 'tools/call', params: { name: 'hold', arguments: {} } },
        headers,
      ).then((r) => r.status),
    ),
  );
  assert.deepEqual(
    [...new Set(statuses)],
    [202],
    'every POST into a live session is accepted; its answer travels on the stream',
  );
}

/**
 * Waits until each of the `count` requests `<prefix>N` either started its handler or was refused
 * on the stream, whichever comes last.
 */
function settled(session: RawSseSession, prefix: string, count: number, startedBefore: number): Promise<void> {
  const refusals = (): number =>
    session.stream.seen.filter(
      (e) => String((e.data as Json | undefined)?.id).startsWith(prefix) && (e.data as Json).error?.code === -32000,
    ).length;
  session.stream.onEvents(() => started.watched.notify());
  return started.watched.until(
    () => started.count - startedBefore + refusals() === count,
    `${count} requests started or refused`,
  );
}

for (const platform of ['express', 'fastify'] as TestPlatform[]) {
  describe(`legacy HTTP+SSE under attack on ${platform}`, () => {
    let bounded: RunningApp;
    let defaults: RunningApp;
    before(async () => {
      bounded = await startApp(
        sseApp({
          legacySse: { maxRequestsInFlight: 4 },
          maxBodyBytes: 64 * 1024,
          limits: { sseBufferBytes: 64 * 1024 },
        }),
        { platform },
      );
      defaults = await startApp(sseApp({}), { platform });
    });
    after(async () => {
      holds.releaseAll();
      await bounded?.close();
      await defaults?.close();
    });

    it('runs at most maxRequestsInFlight requests of a session; the rest get -32000 on the stream and never start (item 12)', async () => {
      const session = await openSseSession(bounded.base);
      try {
        const before = started.count;
        await postHolds(session, 'b', 10);
        // Every request either started its handler or was refused: wait for all ten to be one or the other.
        await settled(session, 'b', 10, before);
        assert.equal(started.count - before, 4, 'requests past the bound started their handlers');
        for (const refusal of await Promise.all(
          [4, 5, 6, 7, 8, 9].map((i) => session.stream.next(answerTo(`b${i}`))),
        )) {
          const error = (refusal.data as Json).error;
          assert.equal(error.code, -32000);
          assert.match(
            error.message,
            /^Server busy: this session already has 4 request\(s\) in flight, the most limits\.maxRequestsInFlight \(4\) allows\./,
          );
        }
        // An answer frees its slot: the next request runs.
        const answers = [0, 1, 2, 3].map((i) => session.stream.next(answerTo(`b${i}`)));
        holds.releaseAll();
        for (const answer of await Promise.all(answers))
          assert.equal((answer.data as Json).result.content[0].text, 'released');
        assert.equal(
          ((await session.request('after', 'tools/call', { name: 'whoami', arguments: {} })).data as Json).result
            .content[0].text,
          'anonymous',
        );
      } finally {
        holds.releaseAll();
        session.stream.close();
      }
    });

    it('bounds a session by default too: 40 POSTs at once start 32 handlers (item 12)', async () => {
      const session = await openSseSession(defaults.base);
      try {
        const before = started.count;
        await postHolds(session, 'd', 40);
        await settled(session, 'd', 40, before);
        assert.equal(started.count - before, 32, 'requests past the default bound started their handlers');
      } finally {
        holds.releaseAll();
        session.stream.close();
      }
    });

    it('at the bound, a cancel is still taken and frees its slot; a ping (a request) is refused', async () => {
      const session = await openSseSession(bounded.base);
      try {
        const before = started.count;
        await postHolds(session, 'c', 4);
        await started.watched.until(() => started.count - before === 4, 'four hold calls running');
        const busy = session.stream.next(answerTo('ping-at-bound'));
        assert.equal(
          (await post(session.messages, { jsonrpc: '2.0', id: 'ping-at-bound', method: 'ping' })).status,
          202,
        );
        assert.equal(((await busy).data as Json).error.code, -32000);
        assert.equal(
          (
            await post(session.messages, {
              jsonrpc: '2.0',
              method: 'notifications/cancelled',
              params: { requestId: 'c0', reason: 'test' },
            })
          ).status,
          202,
        );
        // A cancelled call gets no answer (the cancel is its end); its slot frees once it stopped.
        const pong = await waitForSlot(session);
        assert.deepEqual((pong.data as Json).result, {});
      } finally {
        holds.releaseAll();
        session.stream.close();
      }
    });

    it('an exception keeps its text in the log: the stream gets a reference id, not the secret', async () => {
      const session = await openSseSession(bounded.base);
      try {
        const answer = (await session.request('leak', 'tools/call', { name: 'leak', arguments: {} })).data as Json;
        const text = JSON.stringify(answer);
        assert.doesNotMatch(text, /SSE-SECRET|postgres:/);
        assert.match(answer.result.content[0].text, /failed with an internal error \(reference [0-9a-f-]{36}\)/);
        const unknown = (await session.request('nope', 'no/such/method')).data as Json;
        assert.equal(unknown.error.code, -32601);
      } finally {
        session.stream.close();
      }
    });

    it('an unknown, forged or missing sessionId is refused without echoing it, and opens nothing', async () => {
      const forged = `<script>${'A'.repeat(300)}`;
      for (const id of ['nope', forged, 'a'.repeat(10_000)]) {
        const answer = await post(`${bounded.base}/messages?sessionId=${encodeURIComponent(id)}`, {
          jsonrpc: '2.0',
          id: 1,
          method: 'tools/call',
          params: { name: 'whoami', arguments: {} },
        });
        assert.equal(answer.status, 404, answer.text);
        const error = JSON.parse(answer.text).error;
        assert.equal(error.code, -32600);
        assert.ok(!answer.text.includes(id.slice(0, 20)), `the refusal echoes the session id: ${answer.text}`);
      }
      const missing = await post(`${bounded.base}/messages`, { jsonrpc: '2.0', id: 1, method: 'ping' });
      assert.equal(missing.status, 400);
    });

    it('a body over maxBodyBytes is refused on the POST (413, -32600, the limit named); the session goes on', async () => {
      const session = await openSseSession(bounded.base);
      try {
        const huge = JSON.stringify({
          jsonrpc: '2.0',
          id: 'huge',
          method: 'tools/call',
          params: { name: 'whoami', arguments: { pad: 'y'.repeat(100 * 1024) } },
        });
        const answer = await post(session.messages, huge);
        assert.equal(answer.status, 413, answer.text);
        assert.equal(JSON.parse(answer.text).error.code, -32600);
        assert.match(JSON.parse(answer.text).error.message, /65536|64 KiB|maxBodyBytes|limit/i);
        // Nothing of it reached the session, which answers the next request (and never 'huge').
        const next = await session.request('after-huge', 'tools/call', { name: 'whoami', arguments: {} });
        assert.equal((next.data as Json).result.content[0].text, 'anonymous');
        const toNobody = await post(`${bounded.base}/messages?sessionId=nobody`, huge);
        assert.ok([404, 413].includes(toNobody.status), `a huge POST to no session answered ${toNobody.status}`);
      } finally {
        session.stream.close();
      }
    });

    it('a client that stops reading its stream loses it (limits.sseBufferBytes), and with it the session', async () => {
      const reader = await stalledStream(bounded.base);
      try {
        let status = 202;
        // Each answer is 32 KiB that nobody reads: within a few the unread bytes pass 64 KiB plus
        // what the socket buffers take, the server destroys the stream and the session ends.
        for (let i = 0; status === 202 && i < 2_000; i++) {
          status = (
            await post(reader.messages, {
              jsonrpc: '2.0',
              id: `blob-${i}`,
              method: 'tools/call',
              params: { name: 'blob', arguments: {} },
            })
          ).status;
        }
        assert.equal(status, 404, 'the session of a client that never reads was never ended');
      } finally {
        reader.socket.destroy();
      }
    });
  });
}

describe('legacy HTTP+SSE: dropping streams is no way around maxRequestsInFlight', () => {
  let app: RunningApp;
  before(async () => {
    app = await startApp(sseApp({ limits: { maxRequestsInFlight: 2, sessionsPerAddress: 2 } }));
  });
  after(async () => {
    holds.releaseAll();
    await app?.close();
  });

  it("a closed session whose handlers ignore the abort keeps its place in the caller's session count until they return", async () => {
    const before = started.count;
    for (const round of [0, 1]) {
      const session = await openSseSession(app.base);
      for (const i of [0, 1])
        await post(session.messages, {
          jsonrpc: '2.0',
          id: `s${round}-${i}`,
          method: 'tools/call',
          params: { name: 'stubborn', arguments: {} },
        });
      await started.watched.until(
        () => started.count - before === 2 * (round + 1),
        `round ${round}'s handlers to start`,
      );
      session.stream.close();
      await session.stream.closed;
    }
    // Both closed sessions still run two handlers each: a third session would run two more.
    let refused: { status: number; text: string } | undefined;
    for (;;) {
      // The server learns of the closes asynchronously: retry until it answers, never on a timer.
      const res = await fetch(`${app.base}/sse`, { headers: { Accept: 'text/event-stream' } });
      if (res.status === 503) {
        refused = { status: res.status, text: await res.text() };
        break;
      }
      await res.body?.cancel();
      assert.equal(res.status, 200);
      await new Promise((next) => setImmediate(next));
    }
    assert.match(
      refused.text,
      /Server busy: 2 closed legacy SSE session\(s\) of this caller still run handlers[^]*limits\.sessionsPerAddress/,
    );
    assert.equal(started.count - before, 4, 'no handler past the bound started');
    holds.releaseAll();
    // Once they returned, the caller opens sessions again.
    for (;;) {
      const res = await fetch(`${app.base}/sse`, { headers: { Accept: 'text/event-stream' } });
      await res.body?.cancel();
      if (res.status === 200) break;
      assert.equal(res.status, 503);
      await new Promise((next) => setImmediate(next));
    }
  });
});

describe('legacy HTTP+SSE sessions of two principals', () => {
  let server: RunningApp;
  before(async () => {
    server = await startApp(
      sseApp({
        auth: {
          resource: 'http://127.0.0.1/mcp',
          authorizationServers: ['https://auth.example.com'],
          verifyToken: (token) => (TOKENS[token] ? { id: TOKENS[token]! } : null),
        },
      }),
    );
  });
  after(() => server?.close());

  it("another principal cannot post into a session (404, as for no session), and nothing of its POST reaches the owner's stream", async () => {
    const alice = await openSseSession(server.base, ALICE);
    try {
      const foreign = await post(
        alice.messages,
        { jsonrpc: '2.0', id: 'bob-1', method: 'tools/call', params: { name: 'whoami', arguments: {} } },
        BOB,
      );
      assert.equal(foreign.status, 404);
      assert.match(JSON.parse(foreign.text).error.message, /^Session not found/);
      const anonymous = await post(alice.messages, { jsonrpc: '2.0', id: 'anon-1', method: 'ping' });
      assert.equal(anonymous.status, 401);
      // The owner's next answer is her own: Bob's request never ran in her session.
      const mine = await alice.request('alice-1', 'tools/call', { name: 'whoami', arguments: {} });
      assert.equal((mine.data as Json).result.content[0].text, 'alice');
    } finally {
      alice.stream.close();
    }
  });

  it("a principal's requests in flight do not count against another's sessions", async () => {
    const alice = await openSseSession(server.base, ALICE);
    const bob = await openSseSession(server.base, BOB);
    try {
      const before = started.count;
      await postHolds(alice, 'a', 32, ALICE);
      await started.watched.until(() => started.count - before === 32, "32 of Alice's hold calls running");
      const answer = await bob.request('bob-free', 'tools/call', { name: 'whoami', arguments: {} });
      assert.equal((answer.data as Json).result.content[0].text, 'bob');
    } finally {
      holds.releaseAll();
      alice.stream.close();
      bob.stream.close();
    }
  });

  it('a closed session is gone for its owner too', async () => {
    const alice = await openSseSession(server.base, ALICE);
    alice.stream.close();
    await alice.stream.closed;
    // The server learns of the close asynchronously: wait for the refusal, not for a duration.
    for (;;) {
      const answer = await post(alice.messages, { jsonrpc: '2.0', id: 1, method: 'ping' }, ALICE);
      if (answer.status === 404) break;
      assert.equal(answer.status, 202);
      await new Promise((next) => setImmediate(next));
    }
  });
});

/** Retries a ping until the session has a free slot again (each refusal is an answer, not a wait). */
async function waitForSlot(session: RawSseSession): Promise<SseEvent> {
  for (let i = 0; ; i++) {
    const answer = await session.request(`ping-${i}`, 'ping');
    if (!(answer.data as Json).error) return answer;
    assert.equal((answer.data as Json).error.code, -32000);
  }
}

/** A stream whose client reads its endpoint event, initializes, and then never reads again. */
async function stalledStream(base: string): Promise<{ socket: Socket; messages: string }> {
  const { hostname, port } = new URL(base);
  const socket = netConnect(Number(port), hostname);
  socket.setEncoding('utf8');
  socket.write(`GET /sse HTTP/1.1\r\nHost: ${hostname}:${port}\r\nAccept: text/event-stream\r\n\r\n`);
  const endpoint = await new Promise<string>((resolve, reject) => {
    let text = '';
    socket.on('error', reject);
    socket.on('data', (chunk: string) => {
      text += chunk;
      const match = /event: endpoint\r?\ndata: (\S+)/.exec(text);
      if (match) resolve(match[1]!);
    });
  });
  socket.removeAllListeners('data');
  socket.pause();
  const messages = new URL(endpoint, base).href;
  await post(messages, {
    jsonrpc: '2.0',
    id: 'init',
    method: 'initialize',
    params: { protocolVersion: '2024-11-05', capabilities: {}, clientInfo: { name: 'stalled', version: '1' } },
  });
  await post(messages, { jsonrpc: '2.0', method: 'notifications/initialized' });
  return { socket, messages };
}
