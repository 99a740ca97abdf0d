import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { connect } from 'node:net';
import { Redis } from 'ioredis';
import { after, before, beforeEach, describe, it } from 'node:test';
import { McpRegistry } from 'nestjs-model-context';
import { InMemoryEventStore } from 'nestjs-model-context/stores';
import {
  FLOOD_MAX,
  SecurityStreamsModule,
  gates,
  holds,
  nextFloodOutcome,
} from '../fixtures/security-streams.module.js';
import { startApp, type RunningApp } from '../utils/app.js';
import { modernHeaders, modernMeta, rpc } from '../utils/clients.js';
import { REDIS_URL, clearRedisPrefix, redisAvailable } from '../utils/redis.js';
import { SseParser, type SseEvent } from '../utils/sse.js';
import { Watched } from '../utils/wait.js';
import { answerTo } from '../utils/legacy-session.js';

const skipRedis = (await redisAvailable()) ? false : `no Redis at ${REDIS_URL} (start one, or run .ci/run)`;

type Json = Record<string, any>;

const ALICE = 'Bearer alice-token';
const BOB = 'Bearer bob-token';

async function initialize(url: string, token: string, protocolVersion = '2025-11-25'): Promise<string> {
  const res = await rpc(
    url,
    {
      jsonrpc: '2.0',
      id: 'init',
      method: 'initialize',
      params: { protocolVersion, capabilities: {}, clientInfo: { name: 'security-streams', version: '0.0.1' } },
    },
    { headers: { Authorization: token } },
  );
  assert.equal(res.status, 200, res.text);
  const sessionId = res.headers.get('mcp-session-id');
  assert.ok(sessionId);
  return sessionId;
}

/** An SSE response read as it arrives, so a test can act while the stream is still open. */
class LiveSse {
  readonly events: SseEvent[] = [];
  status = 0;
  ended = false;
  private readonly waiters = new Set<() => void>();
  private readonly controller = new AbortController();
  readonly done: Promise<void>;

  constructor(url: string, init: RequestInit) {
    this.done = this.run(url, init);
  }

  private async run(url: string, init: RequestInit): Promise<void> {
    const parser = new SseParser();
    const decoder = new TextDecoder();
    try {
      const response = await fetch(url, { ...init, signal: this.controller.signal });
      this.status = response.status;
      const reader = response.body!.getReader();
      for (;;) {
        const step = await reader.read();
        if (step.done) break;
        this.events.push(...parser.push(decoder.decode(step.value, { stream: true })));
        this.poke();
      }
      this.events.push(...parser.end());
    } catch {
      // Aborted by the test, or reset by the server: `ended` says the stream is over either way.
    }
    this.ended = true;
    this.poke();
  }

  private poke(): void {
    for (const waiter of [...this.waiters]) waiter();
  }

  /** Resolves once `predicate` holds for the events so far; rejects if the stream ends first. */
  waitFor(predicate: (events: SseEvent[]) => boolean, what: string): Promise<void> {
    return new Promise((resolve, reject) => {
      const check = (): void => {
        if (predicate(this.events)) {
          this.waiters.delete(check);
          resolve();
        } else if (this.ended) {
          this.waiters.delete(check);
          reject(
            new Error(`The stream ended before ${what}; it carried ${JSON.stringify(this.events.map((e) => e.data))}`),
          );
        }
      };
      this.waiters.add(check);
      check();
    });
  }

  abort(): void {
    this.controller.abort();
  }
}

function legacyHeaders(token: string, sessionId: string, extra: Record<string, string> = {}): Record<string, string> {
  return {
    Authorization: token,
    'Mcp-Session-Id': sessionId,
    'MCP-Protocol-Version': '2025-11-25',
    Accept: 'application/json, text/event-stream',
    ...extra,
  };
}

function callTool(url: string, token: string, sessionId: string, id: number, name: string, args: Json = {}): LiveSse {
  return new LiveSse(url, {
    method: 'POST',
    headers: { ...legacyHeaders(token, sessionId), 'Content-Type': 'application/json' },
    body: JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/call', params: { name, arguments: args } }),
  });
}

function openGet(url: string, token: string, sessionId: string, lastEventId?: string): LiveSse {
  return new LiveSse(url, {
    method: 'GET',
    headers: legacyHeaders(token, sessionId, lastEventId === undefined ? {} : { 'Last-Event-ID': lastEventId }),
  });
}

const hasResult = (id: number) => (events: SseEvent[]) =>
  events.some((e) => (e.data as Json)?.id === id && 'result' in (e.data as Json));
const streamOf = (eventId: string) => eventId.slice(0, eventId.lastIndexOf('.'));

for (const store of ['in-memory', 'Redis'] as const)
  describe(
    `security: resumable streams belong to their session, ${store} event store (ISSUE-15 item 3)`,
    { skip: store === 'Redis' && skipRedis },
    () => {
      const prefix = `mcp:security-streams:{${randomBytes(6).toString('hex')}}:`;
      let server: RunningApp;
      before(async () => {
        server = await startApp(
          SecurityStreamsModule.register(store === 'Redis' ? { redis: { url: REDIS_URL, keyPrefix: prefix } } : {}),
        );
      });
      after(async () => {
        await server.close();
        if (store === 'Redis') await clearRedisPrefix(prefix);
      });

      for (const [label, otherToken] of [
        ['another principal', BOB],
        ['another session of the same principal', ALICE],
      ] as const) {
        it(`a Last-Event-ID of a live stream from ${label} resumes nothing and leaves that stream alone`, async () => {
          const aliceSession = await initialize(server.url, ALICE);
          const otherSession = await initialize(server.url, otherToken);
          gates.length = 0;
          const alice = callTool(server.url, ALICE, aliceSession, 7, 'hold');
          await alice.waitFor(
            (events) => events.some((e) => (e.data as Json)?.method === 'notifications/message'),
            'the log message of the held call',
          );
          const aliceEventId = alice.events.find((e) => e.id !== undefined)?.id;
          assert.ok(aliceEventId, 'the resumable POST stream carries event ids');

          const intruder = openGet(server.url, otherToken, otherSession, aliceEventId);
          await intruder.waitFor((events) => events.length > 0, 'the first event of the GET stream');
          assert.equal(intruder.status, 200);
          assert.notEqual(
            streamOf(intruder.events[0]!.id ?? ''),
            streamOf(aliceEventId),
            'a fresh stream of its own session, not the foreign one',
          );

          gates[0]!.open();
          await alice.waitFor(hasResult(7), "alice's result on her own stream");
          const result = alice.events.find((e) => (e.data as Json)?.id === 7)!.data as Json;
          assert.deepEqual(result.result.content, [{ type: 'text', text: 'result for alice' }]);

          // Ending the intruder's session ends its GET stream: everything it carried is then known.
          const deleted = await rpc(server.url, undefined, {
            httpMethod: 'DELETE',
            headers: { Authorization: otherToken },
            sessionId: otherSession,
          });
          assert.equal(deleted.status, 200);
          await intruder.done;
          const leaked = intruder.events.filter(
            (e) => e.rawData.includes('holding for') || e.rawData.includes('result for'),
          );
          assert.deepEqual(leaked, [], 'nothing of the foreign stream reached the intruder');
        });
      }
    },
  );

/** A raw HTTP/1.1 request on a TCP socket that reads nothing until {@link drain} is called. */
function rawRequest(
  base: string,
  method: string,
  headers: Record<string, string>,
  body?: string,
): ReturnType<typeof connect> {
  const port = Number(new URL(base).port);
  const socket = connect(port, '127.0.0.1');
  const lines = [
    `${method} /mcp HTTP/1.1`,
    `Host: 127.0.0.1:${port}`,
    ...Object.entries(headers).map(([k, v]) => `${k}: ${v}`),
  ];
  if (body !== undefined) lines.push(`Content-Length: ${Buffer.byteLength(body)}`);
  socket.write(`${lines.join('\r\n')}\r\n\r\n${body ?? ''}`);
  return socket;
}

/** Reads what the socket still holds until the server closes it; keeps the byte count and the tail. */
function drain(socket: ReturnType<typeof connect>): Promise<{ bytes: number; head: string; tail: string }> {
  return new Promise((resolve) => {
    let bytes = 0;
    let head = '';
    let tail = '';
    socket.on('data', (chunk: Buffer) => {
      bytes += chunk.length;
      if (head.length < 4096) head += chunk.toString('latin1').slice(0, 4096);
      tail = (tail + chunk.toString('latin1')).slice(-8192);
    });
    socket.on('error', () => undefined);
    socket.on('close', () => resolve({ bytes, head, tail }));
    socket.resume();
  });
}

const PRODUCED = FLOOD_MAX * 1024;

// With Redis every event is appended to the shared store before it is written: a producer faster
// than those round trips queues events in the server unless they count against the cap too.
for (const store of ['in-memory', 'Redis'] as const)
  describe(
    `security: a client that never reads its SSE response, ${store} event store (ISSUE-15 item 10)`,
    { skip: store === 'Redis' && skipRedis },
    () => {
      const prefix = `mcp:security-slow:{${randomBytes(6).toString('hex')}}:`;
      let server: RunningApp;
      before(async () => {
        server = await startApp(
          SecurityStreamsModule.register(store === 'Redis' ? { redis: { url: REDIS_URL, keyPrefix: prefix } } : {}),
        );
      });
      after(async () => {
        await server.close();
        if (store === 'Redis') await clearRedisPrefix(prefix);
      });

      const floodCall = (id: number, meta: Json) =>
        JSON.stringify({
          jsonrpc: '2.0',
          id,
          method: 'tools/call',
          params: { name: 'flood', arguments: {}, _meta: meta },
        });

      for (const version of ['2025-11-25', '2025-03-26'] as const) {
        it(`legacy ${version} POST: the stream is closed and the call cancelled once the unread buffer passes limits.sseBufferBytes`, async () => {
          const sessionId = await initialize(server.url, ALICE, version);
          const outcome = nextFloodOutcome();
          const socket = rawRequest(
            server.base,
            'POST',
            {
              Authorization: ALICE,
              'Content-Type': 'application/json',
              Accept: 'application/json, text/event-stream',
              'Mcp-Session-Id': sessionId,
              'MCP-Protocol-Version': version,
            },
            floodCall(1, { progressToken: 'p' }),
          );
          const ended = await outcome;
          assert.equal(
            ended.cancelled,
            true,
            `the flood ran to its end (${ended.sent} messages) instead of being cancelled`,
          );
          assert.ok(ended.sent < FLOOD_MAX);
          const read = await drain(socket);
          assert.match(read.head, /^HTTP\/1\.1 200/);
          assert.ok(read.bytes < PRODUCED / 2, `the client could still read ${read.bytes} bytes`);
          assert.doesNotMatch(read.tail, /"result"/, 'the cancelled call sent no result');
        });
      }

      it('2026-07-28 POST: the stream is closed and the call cancelled', async () => {
        const outcome = nextFloodOutcome();
        const socket = rawRequest(
          server.base,
          'POST',
          {
            Authorization: ALICE,
            'Content-Type': 'application/json',
            Accept: 'application/json, text/event-stream',
            ...modernHeaders('tools/call', 'flood'),
          },
          floodCall(2, modernMeta({ progressToken: 'p' })),
        );
        const ended = await outcome;
        assert.equal(
          ended.cancelled,
          true,
          `the flood ran to its end (${ended.sent} messages) instead of being cancelled`,
        );
        const read = await drain(socket);
        assert.match(read.head, /^HTTP\/1\.1 200/);
        assert.ok(read.bytes < PRODUCED / 2, `the client could still read ${read.bytes} bytes`);
        assert.doesNotMatch(read.tail, /"result"/);
      });

      it('legacy GET stream: a stalled reader is cut off instead of buffering every notification', async () => {
        const sessionId = await initialize(server.url, ALICE);
        const uri = `memo://items/${'z'.repeat(1000)}`;
        const subscribed = await rpc(
          server.url,
          { jsonrpc: '2.0', id: 1, method: 'resources/subscribe', params: { uri } },
          {
            headers: legacyHeaders(ALICE, sessionId),
          },
        );
        assert.equal(subscribed.status, 200, subscribed.text);
        const socket = rawRequest(server.base, 'GET', { ...legacyHeaders(ALICE, sessionId) });
        // The server writes the headers and the priming event first: once they arrive the stream is registered.
        await new Promise<void>((resolve) => socket.once('readable', () => resolve()));
        const registry = server.app.get(McpRegistry, { strict: false });
        for (let i = 0; i < FLOOD_MAX; i++) {
          registry.notifyResourceUpdated(uri);
          if (i % 64 === 0) await new Promise((resolve) => setImmediate(resolve));
        }
        await new Promise((resolve) => setImmediate(resolve));
        const read = await drain(socket);
        assert.match(read.head, /^HTTP\/1\.1 200/);
        assert.ok(read.bytes < PRODUCED / 2, `the client could still read ${read.bytes} bytes of ${PRODUCED}`);
      });
    },
  );

describe('security: subscriptions are bounded and checked (ISSUE-15 item 9)', () => {
  let server: RunningApp;
  before(async () => {
    server = await startApp(SecurityStreamsModule.register({ limits: { subscriptionsPerSession: 3 } }));
  });
  after(() => server.close());

  const subscribe = (sessionId: string, id: number, uri: string) =>
    rpc(
      server.url,
      { jsonrpc: '2.0', id, method: 'resources/subscribe', params: { uri } },
      { headers: legacyHeaders(ALICE, sessionId) },
    );

  it('legacy: resources/subscribe refuses a URI no resource or template serves, with the resources/read error', async () => {
    const sessionId = await initialize(server.url, ALICE);
    const unknown = `memo://nowhere/${'u'.repeat(2000)}`;
    const refused = await subscribe(sessionId, 1, unknown);
    const read = await rpc(
      server.url,
      { jsonrpc: '2.0', id: 2, method: 'resources/read', params: { uri: unknown } },
      { headers: legacyHeaders(ALICE, sessionId) },
    );
    assert.equal(refused.status, 200);
    const error = (refused.json as Json).error;
    assert.equal(error?.code, -32002, refused.text);
    assert.equal(error.code, (read.json as Json).error.code);
    assert.match(error.message, /Resource not found/);
    for (const [id, uri] of [
      [3, 'memo://known'],
      [4, 'memo://items/42'],
    ] as const) {
      const accepted = await subscribe(sessionId, id, uri);
      assert.deepEqual((accepted.json as Json).result, {}, accepted.text);
    }
  });

  it('legacy: a session holds at most limits.subscriptionsPerSession subscriptions', async () => {
    const sessionId = await initialize(server.url, ALICE);
    for (let i = 1; i <= 3; i++) {
      const accepted = await subscribe(sessionId, i, `memo://items/${i}`);
      assert.deepEqual((accepted.json as Json).result, {}, accepted.text);
    }
    const again = await subscribe(sessionId, 4, 'memo://items/1');
    assert.deepEqual((again.json as Json).result, {}, 'subscribing twice to one URI holds one subscription');
    const refused = await subscribe(sessionId, 5, 'memo://items/4');
    const error = (refused.json as Json).error;
    assert.equal(error?.code, -32602, refused.text);
    assert.match(error.message, /limits\.subscriptionsPerSession/);
    assert.match(error.message, /resources\/unsubscribe/);
    const unsubscribed = await rpc(
      server.url,
      { jsonrpc: '2.0', id: 6, method: 'resources/unsubscribe', params: { uri: 'memo://items/2' } },
      { headers: legacyHeaders(ALICE, sessionId) },
    );
    assert.deepEqual((unsubscribed.json as Json).result, {});
    assert.deepEqual(((await subscribe(sessionId, 7, 'memo://items/4')).json as Json).result, {});
  });

  const listen = (id: number, uris: string[]) =>
    rpc(
      server.url,
      {
        jsonrpc: '2.0',
        id,
        method: 'subscriptions/listen',
        params: { notifications: { resourceSubscriptions: uris }, _meta: modernMeta() },
      },
      {
        headers: { Authorization: ALICE, ...modernHeaders('subscriptions/listen') },
        until: (event) => (event.data as Json)?.method === 'notifications/subscriptions/acknowledged',
      },
    );

  it('2026-07-28: subscriptions/listen refuses unknown URIs and more URIs than limits.subscriptionsPerSession', async () => {
    const unknown = await listen(1, ['memo://known', 'memo://nowhere']);
    const unknownError = ((unknown.json ?? unknown.events?.find((e) => (e.data as Json)?.id === 1)?.data) as Json)
      ?.error;
    assert.equal(unknownError?.code, -32602, unknown.text);
    assert.match(unknownError.message, /Resource not found: "memo:\/\/nowhere"/);
    assert.equal(unknownError.data?.uri, 'memo://nowhere');

    const many = await listen(2, ['memo://items/1', 'memo://items/2', 'memo://items/3', 'memo://items/4']);
    const manyError = ((many.json ?? many.events?.find((e) => (e.data as Json)?.id === 2)?.data) as Json)?.error;
    assert.equal(manyError?.code, -32602, many.text);
    assert.match(manyError.message, /limits\.subscriptionsPerSession/);

    const fine = await listen(3, ['memo://items/1', 'memo://known']);
    const ack = fine.events?.find((e) => (e.data as Json)?.method === 'notifications/subscriptions/acknowledged');
    assert.deepEqual(
      (ack?.data as Json)?.params.notifications,
      { resourceSubscriptions: ['memo://items/1', 'memo://known'] },
      fine.text,
    );
  });
});

describe('security: the event store is bounded and forgets ended sessions (ISSUE-15 item 7)', () => {
  const callChatty = async (url: string, sessionId: string, id: number, count: number, bytes: number) => {
    const res = await rpc(
      url,
      { jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'chatty', arguments: { count, bytes } } },
      {
        headers: legacyHeaders(ALICE, sessionId),
      },
    );
    assert.equal(res.status, 200, res.text);
    const priming = res.events?.find((e) => e.id?.endsWith('.0'));
    assert.ok(priming?.id, `a resumable stream: ${res.text.slice(0, 200)}`);
    return priming.id;
  };
  const replay = async (url: string, sessionId: string, lastEventId: string) => {
    const res = await rpc(url, undefined, {
      httpMethod: 'GET',
      headers: legacyHeaders(ALICE, sessionId, { 'Last-Event-ID': lastEventId }),
      stopAtResponse: false,
    });
    return res;
  };
  const storedBytes = (events: SseEvent[]) =>
    events.reduce((n, e) => n + Buffer.byteLength(e.rawData) + (e.id?.length ?? 0), 0);

  describe('with the module-built store', () => {
    let server: RunningApp;
    before(async () => {
      server = await startApp(
        SecurityStreamsModule.register({
          limits: { eventStoreBytesPerStream: 20_000, eventStoreBytesPerSession: 50_000 },
        }),
      );
    });
    after(() => server.close());

    it('keeps at most limits.eventStoreBytesPerStream of a stream; a resume replays the newest events that are left', async () => {
      const sessionId = await initialize(server.url, ALICE);
      const priming = await callChatty(server.url, sessionId, 1, 50, 1000);
      const res = await replay(server.url, sessionId, priming);
      assert.equal(res.status, 200);
      const events = res.events ?? [];
      assert.ok(storedBytes(events) <= 20_000, `replayed ${storedBytes(events)} bytes`);
      assert.ok(events.length > 5, 'the newest events are kept');
      assert.equal((events.at(-1)?.data as Json)?.id, 1, 'the result, the newest event, is replayed');
      const first = Number(events[0]!.id!.split('.').at(-1));
      assert.ok(first > 1, 'the oldest events were dropped: the client sees a gap after its Last-Event-ID');
    });

    it('keeps at most limits.eventStoreBytesPerSession across the streams of a session, dropping the oldest stream first', async () => {
      const sessionId = await initialize(server.url, ALICE);
      const primings: string[] = [];
      for (let i = 1; i <= 5; i++) primings.push(await callChatty(server.url, sessionId, i, 15, 1000));
      let total = 0;
      const kept: number[] = [];
      for (const priming of primings) {
        const res = await replay(server.url, sessionId, priming);
        const bytes = storedBytes(res.events ?? []);
        total += bytes;
        kept.push(bytes);
      }
      assert.ok(total <= 50_000, `the session's streams replay ${total} bytes`);
      assert.ok(kept[0]! < kept[4]!, `the oldest stream lost events first: ${kept.join(', ')}`);
    });
  });

  describe('with a store given to the module', () => {
    const store = new InMemoryEventStore({ maxBytesTotal: 60_000 });
    let server: RunningApp;
    before(async () => {
      server = await startApp(SecurityStreamsModule.register({ sessions: { eventStore: store } }));
    });
    after(() => server.close());

    it('DELETE drops the events of the session, those of its cancelled call too; a resume replays nothing', async () => {
      const start = store.storedBytes;
      const sessionId = await initialize(server.url, ALICE);
      const priming = await callChatty(server.url, sessionId, 1, 10, 2000);
      gates.length = 0;
      const held = callTool(server.url, ALICE, sessionId, 2, 'hold');
      await held.waitFor(
        (events) => events.some((e) => (e.data as Json)?.method === 'notifications/message'),
        'the held call to log',
      );
      assert.ok(
        store.storedBytes > start + 20_000,
        `the store holds the session's events (${store.storedBytes} bytes)`,
      );
      const before = await replay(server.url, sessionId, priming);
      assert.equal((before.events ?? []).length, 11, 'the events are there before DELETE');

      const deleted = await rpc(server.url, undefined, {
        httpMethod: 'DELETE',
        headers: { Authorization: ALICE },
        sessionId,
      });
      assert.equal(deleted.status, 200);
      await held.done;
      assert.equal(store.storedBytes, start, 'every byte of the session was released');
      const after = await replay(server.url, sessionId, priming);
      assert.equal(after.status, 404);
      assert.equal(after.events, undefined, 'nothing is replayed');
    });

    it('keeps at most maxBytesTotal (limits.eventStoreBytesTotal) across sessions', async () => {
      for (let i = 0; i < 4; i++) {
        const sessionId = await initialize(server.url, ALICE);
        await callChatty(server.url, sessionId, 1, 20, 1000);
      }
      assert.ok(store.storedBytes <= 60_000, `the store holds ${store.storedBytes} bytes`);
      assert.ok(store.storedBytes > 40_000, 'and keeps what fits');
    });
  });

  describe('with Redis', { skip: skipRedis }, () => {
    const prefix = `mcp:security-streams:{${randomBytes(6).toString('hex')}}:`;
    let server: RunningApp;
    let redis: Redis;
    before(async () => {
      redis = new Redis(REDIS_URL);
      server = await startApp(
        SecurityStreamsModule.register({
          redis: { url: REDIS_URL, keyPrefix: prefix },
          limits: {
            eventStoreBytesPerStream: 20_000,
            eventStoreBytesPerSession: 50_000,
            eventStoreBytesTotal: 200_000,
          },
        }),
      );
    });
    after(async () => {
      await server.close();
      const keys = await redis.keys(`${prefix}*`);
      if (keys.length) await redis.del(...keys);
      redis.disconnect();
    });

    it('keeps at most limits.eventStoreBytesPerStream of a stream, and DELETE deletes the streams of the session', async () => {
      const sessionId = await initialize(server.url, ALICE);
      const priming = await callChatty(server.url, sessionId, 1, 50, 1000);
      const res = await replay(server.url, sessionId, priming);
      assert.equal(res.status, 200);
      const events = (res.events ?? []).filter((e) => e.rawData !== '');
      const bytes = events.reduce((n, e) => n + Buffer.byteLength(e.rawData), 0);
      assert.ok(bytes <= 20_000, `replayed ${bytes} bytes`);
      assert.ok(events.length > 5, 'the newest events are kept');
      assert.equal((events.at(-1)?.data as Json)?.id, 1, 'the result, the newest event, is replayed');
      const streamKey = `${prefix}stream:${streamOf(priming)}`;
      assert.equal(await redis.exists(streamKey), 1);

      const deleted = await rpc(server.url, undefined, {
        httpMethod: 'DELETE',
        headers: { Authorization: ALICE },
        sessionId,
      });
      assert.equal(deleted.status, 200);
      assert.equal(
        await redis.exists(streamKey, `${streamKey}:meta`, `${prefix}sessionstreams:${sessionId}`),
        0,
        'nothing of the session is left',
      );
    });

    it('keeps at most limits.eventStoreBytesPerSession per session and limits.eventStoreBytesTotal in all, for many sessions of one principal', async () => {
      const sessions: string[] = [];
      for (let s = 0; s < 25; s++) {
        const sessionId = await initialize(server.url, ALICE);
        sessions.push(sessionId);
        for (let call = 1; call <= 4; call++) await callChatty(server.url, sessionId, call, 15, 1000);
      }
      const streamKeys = (await redis.keys(`${prefix}stream:*`)).filter((key) => !key.endsWith(':meta'));
      let held = 0;
      let memory = 0;
      for (const key of streamKeys) {
        const entries = await redis.xrange(key, '-', '+');
        held += entries.reduce((n, [, fields]) => n + Buffer.byteLength(fields[1] ?? ''), 0);
        memory += (await redis.memory('USAGE', key)) ?? 0;
      }
      // Unbounded, the 25 sessions would hold about 25 x 4 x 16 KB = 1.6 MB of events.
      assert.ok(held <= 200_000, `Redis holds ${held} bytes of events`);
      assert.ok(memory < 400_000, `the stream keys use ${memory} bytes of Redis memory`);
      assert.ok(Number(await redis.get(`${prefix}eventtotal`)) <= 200_000);
      for (const sessionId of sessions.slice(-3)) {
        assert.ok(
          Number(await redis.get(`${prefix}sessionbytes:${sessionId}`)) <= 50_000,
          'each session stays under its bound',
        );
      }
      const last = sessions.at(-1)!;
      const priming = await callChatty(server.url, last, 5, 2, 100);
      const res = await replay(server.url, last, priming);
      assert.equal((res.events ?? []).filter((e) => e.rawData !== '').length, 3, 'the newest stream replays in full');
    });
  });
});

/** An in-memory store that tells when it dropped a stream, so the test waits for the drop itself. */
class WatchedEventStore extends InMemoryEventStore {
  readonly dropped: string[] = [];
  readonly drops = new Watched();
  override dropStream(streamId: string): void {
    super.dropStream(streamId);
    this.dropped.push(streamId);
    this.drops.notify();
  }
}

describe("security: a cancelled call's events leave the store when it ends (issue 26, leftover A)", () => {
  const cancellations = [
    ['its client goes away', (held: LiveSse) => held.abort()],
    [
      'its client sends notifications/cancelled',
      (_held: LiveSse, url: string, sessionId: string, id: number) =>
        void rpc(
          url,
          { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: id, reason: 'test' } },
          { headers: legacyHeaders(ALICE, sessionId) },
        ),
    ],
  ] as const;

  describe('in memory', () => {
    const store = new WatchedEventStore();
    let server: RunningApp;
    before(async () => {
      server = await startApp(SecurityStreamsModule.register({ sessions: { eventStore: store } }));
    });
    after(() => server.close());

    for (const [how, cancel] of cancellations) {
      it(`when ${how}: its events are dropped, every byte of them`, async () => {
        const sessionId = await initialize(server.url, ALICE);
        const start = store.storedBytes;
        const held = callTool(server.url, ALICE, sessionId, 9, 'hold');
        await held.waitFor(
          (events) => events.some((e) => (e.data as Json)?.method === 'notifications/message'),
          'the held call to log',
        );
        const streamId = streamOf(held.events.find((e) => e.id !== undefined)!.id!);
        assert.ok(store.storedBytes > start, 'the call stored its events');
        cancel(held, server.url, sessionId, 9);
        await store.drops.until(
          () => store.dropped.includes(streamId),
          "the cancelled call's stream dropped from the store",
        );
        assert.equal(store.storedBytes, start, 'bytes of the cancelled call are still held');
        held.abort();
        await rpc(server.url, undefined, { httpMethod: 'DELETE', headers: { Authorization: ALICE }, sessionId });
      });
    }

    it('a call that answered keeps its events for a resume', async () => {
      const sessionId = await initialize(server.url, ALICE);
      const res = await rpc(
        server.url,
        {
          jsonrpc: '2.0',
          id: 3,
          method: 'tools/call',
          params: { name: 'chatty', arguments: { count: 3, bytes: 100 } },
        },
        { headers: legacyHeaders(ALICE, sessionId) },
      );
      const priming = res.events?.find((e) => e.id?.endsWith('.0'))?.id;
      assert.ok(priming);
      const replayed = await rpc(server.url, undefined, {
        httpMethod: 'GET',
        headers: legacyHeaders(ALICE, sessionId, { 'Last-Event-ID': priming }),
        stopAtResponse: false,
      });
      assert.equal((replayed.events ?? []).filter((e) => e.rawData !== '').length, 4, 'three logs and the result');
      assert.ok(!store.dropped.includes(streamOf(priming)));
      await rpc(server.url, undefined, { httpMethod: 'DELETE', headers: { Authorization: ALICE }, sessionId });
    });
  });

  describe('with Redis', { skip: skipRedis }, () => {
    const prefix = `mcp:security-streams:{${randomBytes(6).toString('hex')}}:`;
    let server: RunningApp;
    let redis: Redis;
    let subscriber: Redis;
    const relayed = new Watched();
    const pokes: string[] = [];
    before(async () => {
      redis = new Redis(REDIS_URL);
      subscriber = new Redis(REDIS_URL);
      // The drop pokes the stream's tailers on the relay channel: the test waits for that message.
      subscriber.on('message', (_channel: string, message: string) => (pokes.push(message), relayed.notify()));
      await subscriber.subscribe(`${prefix}relay`);
      server = await startApp(SecurityStreamsModule.register({ redis: { url: REDIS_URL, keyPrefix: prefix } }));
    });
    after(async () => {
      await server.close();
      subscriber.disconnect();
      await clearRedisPrefix(prefix);
      redis.disconnect();
    });

    for (const [how, cancel] of cancellations) {
      it(`when ${how}: its stream is deleted and its bytes leave the accounting`, async () => {
        const sessionId = await initialize(server.url, ALICE);
        const held = callTool(server.url, ALICE, sessionId, 9, 'hold');
        await held.waitFor(
          (events) => events.some((e) => (e.data as Json)?.method === 'notifications/message'),
          'the held call to log',
        );
        const streamId = streamOf(held.events.find((e) => e.id !== undefined)!.id!);
        const streamKey = `${prefix}stream:${streamId}`;
        assert.equal(await redis.exists(streamKey), 1);
        assert.ok(Number(await redis.get(`${prefix}sessionbytes:${sessionId}`)) > 0);
        cancel(held, server.url, sessionId, 9);
        await relayed.until(() => pokes.includes(`s ${streamId}`), "the cancelled call's stream dropped from Redis");
        assert.equal(
          await redis.exists(streamKey, `${streamKey}:meta`),
          0,
          "the cancelled call's stream is still in Redis",
        );
        assert.equal(
          Number((await redis.get(`${prefix}sessionbytes:${sessionId}`)) ?? 0),
          0,
          "the session's byte count still holds the cancelled call's events",
        );
        held.abort();
        await rpc(server.url, undefined, { httpMethod: 'DELETE', headers: { Authorization: ALICE }, sessionId });
      });
    }
  });
});

describe('security: requests in flight are bounded per session and per stateless caller (limits.maxRequestsInFlight)', () => {
  let defaults: RunningApp;
  let bounded: RunningApp;
  before(async () => {
    defaults = await startApp(SecurityStreamsModule.register());
    bounded = await startApp(SecurityStreamsModule.register({ limits: { maxRequestsInFlight: 4 } }));
  });
  after(async () => {
    for (const gate of gates.splice(0)) gate.open();
    await defaults?.close();
    await bounded?.close();
  });
  const openAll = (): void => gates.splice(0).forEach((gate) => gate.open());
  const holdCall = (id: string) => ({
    jsonrpc: '2.0',
    id,
    method: 'tools/call',
    params: { name: 'hold', arguments: {} },
  });
  const modernHold = (url: string, token: string, id: string, signal?: AbortSignal) =>
    fetch(url, {
      method: 'POST',
      signal,
      headers: {
        'Content-Type': 'application/json',
        Accept: 'application/json, text/event-stream',
        Authorization: token,
        ...modernHeaders('tools/call', 'hold'),
      },
      body: JSON.stringify({ ...holdCall(id), params: { name: 'hold', arguments: {}, _meta: modernMeta() } }),
    });
  const started = (): number => gates.length;
  // Holds of earlier tests (their apps closed) are let go: each test counts its own.
  beforeEach(openAll);

  it('20 batches of 50 on one 2025-03-26 session start 32 handlers (the default), the rest answer -32000; another session runs meanwhile, and every slot comes back', async () => {
    const session = await initialize(defaults.url, ALICE, '2025-03-26');
    const batch = (b: number) =>
      rpc(
        defaults.url,
        Array.from({ length: 50 }, (_, i) => holdCall(`b${b}-${i}`)),
        { sessionId: session, headers: { Authorization: ALICE, 'MCP-Protocol-Version': '2025-03-26' } },
      );
    let answered = 0;
    const replies = Array.from({ length: 20 }, (_, b) =>
      batch(b).then((reply) => (answered++, holds.changed.notify(), reply)),
    );
    // The session's 32 slots go to the first batch's members; every other batch is refused whole, at once.
    await holds.changed.until(
      () => answered === 19 && started() === 32,
      'one batch to hold the 32 slots and the other 19 to be refused',
    );
    assert.equal(started(), 32, 'no request past the bound started its handler');
    const other = await initialize(defaults.url, BOB, '2025-11-25');
    const bobCall = rpc(defaults.url, holdCall('bob'), {
      sessionId: other,
      headers: { Authorization: BOB, 'MCP-Protocol-Version': '2025-11-25' },
    });
    await holds.changed.until(() => started() === 33, "another session's call to start while this one is full");
    openAll();
    assert.equal((answerTo(await bobCall, 'bob').result as Json).content[0].text, 'result for bob');
    const answers = (await Promise.all(replies)).flatMap((reply) => reply.json as Json[]);
    assert.equal(answers.filter((a) => a.result).length, 32);
    const refused = answers.filter((a) => a.error);
    assert.equal(refused.length, 1000 - 32);
    for (const answer of refused) {
      assert.equal(answer.error.code, -32000);
      assert.match(
        answer.error.message,
        /^Server busy: this session already has 32 request\(s\) in flight, the most limits\.maxRequestsInFlight \(32\) allows\./,
      );
    }
    // Every slot came back: a full batch of the bound runs again.
    const again = batch(20);
    await holds.changed.until(() => started() === 32, "the session's 32 slots to be free again");
    openAll();
    assert.equal(((await again).json as Json[]).filter((a) => a.result).length, 32);
  });

  it("deleting legacy sessions whose handlers ignore the abort is no way around the bound: a caller's slots across its sessions stay taken until they return", async () => {
    const app = await startApp(
      SecurityStreamsModule.register({ limits: { maxRequestsInFlight: 2, sessionsPerPrincipal: 2 } }),
    );
    try {
      for (const round of [0, 1]) {
        const session = await initialize(app.url, ALICE);
        const calls = [0, 1].map((i) =>
          rpc(app.url, holdCall(`d${round}-${i}`), {
            sessionId: session,
            headers: { Authorization: ALICE, 'MCP-Protocol-Version': '2025-11-25' },
          }).catch(() => undefined),
        );
        await holds.changed.until(() => started() === 2 * (round + 1), `round ${round}'s calls to start`);
        const deleted = await fetch(app.url, {
          method: 'DELETE',
          headers: { Authorization: ALICE, 'Mcp-Session-Id': session, 'MCP-Protocol-Version': '2025-11-25' },
        });
        assert.equal(deleted.status, 200);
        void Promise.all(calls);
      }
      const session = await initialize(app.url, ALICE);
      const over = await rpc(app.url, holdCall('d2-0'), {
        sessionId: session,
        headers: { Authorization: ALICE, 'MCP-Protocol-Version': '2025-11-25' },
      });
      assert.equal(over.status, 503, over.text);
      assert.match(
        (over.json as Json).error.message,
        /^Server busy: this principal across its sessions \(closed ones whose handlers still run included\) already has 4 request\(s\) in flight, the most limits\.maxRequestsInFlight × limits\.sessionsPerPrincipal \(4\) allows\./,
      );
      assert.equal(started(), 4, 'no handler started past the bound');
      openAll();
      // Once they returned, the new session runs calls again.
      const next = rpc(app.url, holdCall('d2-1'), {
        sessionId: session,
        headers: { Authorization: ALICE, 'MCP-Protocol-Version': '2025-11-25' },
      });
      await holds.changed.until(() => started() === 1, 'a call of the new session to start');
      openAll();
      assert.equal((await next).status, 200);
    } finally {
      openAll();
      await app.close();
    }
  });

  it("2026-07-28: a caller past the bound gets 503 and -32000; another principal and the caller's own legacy session are not refused; a disconnected call keeps its slot while its handler runs, a finished one gives it back", async () => {
    const aborts = Array.from({ length: 4 }, () => new AbortController());
    const held = aborts.map((abort, i) => modernHold(bounded.url, ALICE, `m${i}`, abort.signal).catch(() => undefined));
    await holds.changed.until(() => started() === 4, "four calls to hold the caller's slots");
    const over = await rpc(
      bounded.url,
      { ...holdCall('m4'), params: { name: 'hold', arguments: {}, _meta: modernMeta() } },
      { headers: { Authorization: ALICE, ...modernHeaders('tools/call', 'hold') } },
    );
    assert.equal(over.status, 503, over.text);
    assert.equal(over.headers.get('retry-after'), '1');
    assert.equal((over.json as Json).error.code, -32000);
    assert.match(
      (over.json as Json).error.message,
      /^Server busy: this principal already has 4 request\(s\) in flight, the most limits\.maxRequestsInFlight \(4\) allows\./,
    );
    assert.equal(started(), 4, 'the refused call never ran');
    const bob = modernHold(bounded.url, BOB, 'bob');
    const session = await initialize(bounded.url, ALICE);
    const legacy = rpc(bounded.url, holdCall('legacy'), {
      sessionId: session,
      headers: { Authorization: ALICE, 'MCP-Protocol-Version': '2025-11-25' },
    });
    await holds.changed.until(() => started() === 6, "another principal's call and the caller's session call to start");
    // A client that goes away cancels its call, but the handler (which ignores the abort) still
    // runs: its slot stays taken, or a disconnect loop would run handlers without bound.
    const cancelled = holds.cancelled;
    aborts[0]!.abort();
    await holds.changed.until(() => holds.cancelled === cancelled + 1, 'the disconnected call to be cancelled');
    const whileRunning = await rpc(
      bounded.url,
      { ...holdCall('m5'), params: { name: 'hold', arguments: {}, _meta: modernMeta() } },
      { headers: { Authorization: ALICE, ...modernHeaders('tools/call', 'hold') } },
    );
    assert.equal(whileRunning.status, 503, whileRunning.text);
    assert.equal(started(), 6, 'no handler started past the bound');
    openAll();
    assert.equal((await bob).status, 200);
    assert.equal((answerTo(await legacy, 'legacy').result as Json).content[0].text, 'result for alice');
    await Promise.all(held);
    // Finished calls gave theirs back: the caller holds four again.
    const next = Array.from({ length: 4 }, (_, i) => modernHold(bounded.url, ALICE, `n${i}`));
    await holds.changed.until(() => started() === 4, 'four new calls to take the freed slots');
    openAll();
    for (const reply of await Promise.all(next)) assert.equal(reply.status, 200);
  });
});
