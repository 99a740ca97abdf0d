/**
 * Faults, with a Redis the test starts itself on a free port (never the shared one): Redis killed
 * for 5 s under load, and an instance killed with SIGKILL in the middle of a progress stream.
 * Every wait is for an event (the first 503, the process exit, the first success after the
 * restart, the server closing a stream), bounded by a failure timeout; the one fixed wait is the
 * outage itself, which is the scenario, not synchronisation.
 */
import 'reflect-metadata';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { setTimeout as delay } from 'node:timers/promises';
import { after, before, describe, it } from 'node:test';
import { Injectable, Module, type LoggerService } from '@nestjs/common';
import { IsInt, IsString, Max, Min } from 'class-validator';
import { Observable } from 'rxjs';
import { Args, Emit, McpModule, Tool } from 'nestjs-model-context';
import { startApp, type RunningApp } from '../utils/app.js';
import { modernRpc, rpc, type RpcResult } from '../utils/clients.js';
import type { SseEvent } from '../utils/sse.js';
import { follow } from '../utils/follow.js';
import { legacySession } from '../utils/legacy-session.js';
import { FixtureInstance } from '../utils/fixture-process.js';
import { RedisChild, freePort } from '../utils/redis-server.js';

type Json = Record<string, any>;

const SSE_ACCEPT = { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream' };
const JSON_ACCEPT = { 'Content-Type': 'application/json', Accept: 'application/json' };

/** Resolves with `promise`, or rejects naming `what` once `ms` passed: a failure guard only. */
async function within<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const guard = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: not within ${ms} ms`)), ms);
  });
  try {
    return await Promise.race([promise, guard]);
  } finally {
    clearTimeout(timer);
  }
}

/** A promise with its resolver, for "wait until the load loop sees X". */
function signal<T = void>(): { promise: Promise<T>; resolve: (value: T) => void; fired: boolean } {
  let resolve!: (value: T) => void;
  const s = {
    promise: new Promise<T>((r) => (resolve = r)),
    resolve: (value: T) => ((s.fired = true), resolve(value)),
    fired: false,
  };
  return s;
}

class TickDto {
  @IsInt()
  @Min(1)
  @Max(100_000)
  count!: number;

  @IsInt()
  @Min(0)
  @Max(10_000)
  intervalMs!: number;
}

class TextDto {
  @IsString()
  text!: string;
}

@Injectable()
class FaultTools {
  @Tool({ description: 'Echoes the text.' })
  echo(@Args() { text }: TextDto): string {
    return text;
  }

  @Tool({ description: 'Reports count progress steps, one every intervalMs.' })
  tick(@Args() { count, intervalMs }: TickDto): Observable<unknown> {
    return new Observable((subscriber) => {
      let i = 0;
      const timer = setInterval(() => {
        subscriber.next(Emit.progress(++i, count, `tick ${i}`));
        if (i === count) {
          clearInterval(timer);
          subscriber.next(`ticked ${count}`);
          subscriber.complete();
        }
      }, intervalMs);
      return () => clearInterval(timer);
    });
  }
}

/** Every line the app logs, to count outage lines. */
class CapturingLogger implements LoggerService {
  readonly lines: Array<{ level: string; message: string }> = [];
  log(message: unknown): void {
    this.lines.push({ level: 'log', message: String(message) });
  }
  error(message: unknown): void {
    this.lines.push({ level: 'error', message: String(message) });
  }
  warn(message: unknown): void {
    this.lines.push({ level: 'warn', message: String(message) });
  }
  debug(): void {}
  verbose(): void {}
}

let nextId = 1;

function legacyHeaders(sessionId: string, accept = JSON_ACCEPT): Record<string, string> {
  return { ...accept, 'Mcp-Session-Id': sessionId, 'MCP-Protocol-Version': '2025-11-25' };
}

function startTick(
  url: string,
  sessionId: string,
  count: number,
  intervalMs: number,
  token: string,
): Promise<Response> {
  return fetch(url, {
    method: 'POST',
    headers: legacyHeaders(sessionId, SSE_ACCEPT),
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: `tick-${nextId++}`,
      method: 'tools/call',
      params: { name: 'tick', arguments: { count, intervalMs }, _meta: { progressToken: token } },
    }),
  });
}

const messagesOf = (events: SseEvent[]): Json[] =>
  events.filter((e) => typeof e.data === 'object' && e.data !== null).map((e) => e.data as Json);
const progressOf = (events: SseEvent[]): number[] =>
  messagesOf(events)
    .filter((m) => m.method === 'notifications/progress')
    .map((m) => m.params.progress as number);

describe('faults: Redis unreachable for 5 s under load', () => {
  const unhandled: unknown[] = [];
  const onUnhandled = (reason: unknown): void => void unhandled.push(reason);
  const logger = new CapturingLogger();
  let redis: RedisChild;
  let running: RunningApp;
  let url = '';

  before(async () => {
    process.on('unhandledRejection', onUnhandled);
    redis = new RedisChild(await freePort());
    await redis.start();
    @Module({
      imports: [
        McpModule.forRoot({
          name: 'faults',
          version: '1.0.0',
          redis: {
            url: redis.url,
            keyPrefix: `mcp-faults:${randomBytes(6).toString('hex')}:`,
            commandTimeoutMs: 1_000,
            retryAfterS: 1,
          },
          keepAliveMs: 1_000,
        }),
      ],
      providers: [FaultTools],
    })
    class FaultsModule {}
    running = await startApp(FaultsModule, { logger });
    url = running.url;
  });

  after(async () => {
    await running?.close();
    await redis?.stop();
    process.off('unhandledRejection', onUnhandled);
  });

  it('answers 503 + Retry-After + a JSON-RPC error naming Redis while it is down, keeps 2026-07-28 calls working, and recovers without a restart', async () => {
    const sessionId = await legacySession(url, 'faults');
    const ok = await rpc(
      url,
      { jsonrpc: '2.0', id: nextId++, method: 'tools/call', params: { name: 'echo', arguments: { text: 'before' } } },
      { headers: legacyHeaders(sessionId) },
    );
    assert.equal(ok.status, 200);

    // A resumable progress stream in flight when Redis dies.
    const inflight = follow(await startTick(url, sessionId, 100_000, 10, 'inflight'));
    await inflight.until((events) => progressOf(events).length >= 3, 60_000, 'progress before the outage');

    // Load: legacy calls (need Redis for the session) and 2026-07-28 calls (need nothing).
    type Outcome = {
      era: 'legacy' | 'modern';
      phase: string;
      id: number | string;
      status: number | 'no answer';
      retryAfter: string | null;
      body: Json | undefined;
    };
    const outcomes: Outcome[] = [];
    let phase = 'up';
    let stopped = false;
    const first503 = signal<Outcome>();
    const firstLegacyOkAfterRestart = signal<Outcome>();
    const record = (outcome: Outcome): void => {
      outcomes.push(outcome);
      if (outcome.era === 'legacy' && outcome.status === 503) first503.resolve(outcome);
      if (outcome.era === 'legacy' && outcome.status === 200 && phase === 'restarted')
        firstLegacyOkAfterRestart.resolve(outcome);
    };
    const worker = async (era: 'legacy' | 'modern'): Promise<void> => {
      while (!stopped) {
        const id = nextId++;
        const at = phase;
        let res: RpcResult | undefined;
        try {
          res =
            era === 'legacy'
              ? await rpc(
                  url,
                  { jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'echo', arguments: { text: `l${id}` } } },
                  { headers: legacyHeaders(sessionId), timeoutMs: 60_000 },
                )
              : await modernRpc(
                  url,
                  'tools/call',
                  { name: 'echo', arguments: { text: `m${id}` } },
                  { id, headers: { Accept: 'application/json' }, timeoutMs: 60_000 },
                );
        } catch {
          // No response within the guard: a hang, which the assertions below refuse.
        }
        record({
          era,
          phase: at,
          id,
          status: res?.status ?? 'no answer',
          retryAfter: res?.headers.get('retry-after') ?? null,
          body: res?.json as Json | undefined,
        });
        // Pacing of the load generator, not synchronisation: 503s come back at once.
        await delay(5);
      }
    };
    const workers = [worker('legacy'), worker('legacy'), worker('modern')];
    try {
      // A call that answers a few seconds from now, in the outage: its answer cannot be stored.
      const slow = follow(await startTick(url, sessionId, 1, 3_000, 'slow'));
      await slow.until((events) => events.length >= 1, 60_000, 'the priming event of the slow call');
      const admin = new (await import('ioredis')).Redis(redis.url);
      await admin.save(); // the restarted Redis loads the session from this dump
      admin.disconnect();
      await redis.kill();
      phase = 'down';

      const refused = await within(first503.promise, 60_000, 'the first 503 after Redis died');
      assert.equal(refused.retryAfter, '1');
      assert.equal(refused.body?.jsonrpc, '2.0');
      assert.equal(refused.body?.id, refused.id, 'the error answers the request it refuses');
      assert.equal(refused.body?.error?.code, -32000);
      assert.match(
        refused.body?.error?.message,
        new RegExp(
          `the session store \\(Redis at 127\\.0\\.0\\.1:${redis.port}\\) is unreachable: .+\\. Retry shortly`,
        ),
      );

      // The stream in flight ends (server close), it does not hang.
      const inflightEnd = await within(inflight.done, 60_000, 'the in-flight progress stream ending');
      assert.equal(inflightEnd.timedOut, false);
      const slowEnd = await within(slow.done, 60_000, 'the slow call stream ending');
      assert.equal(slowEnd.timedOut, false);

      // Opening a session, a GET stream and a DELETE need Redis too.
      const init = await rpc(url, {
        jsonrpc: '2.0',
        id: 'init-down',
        method: 'initialize',
        params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'faults', version: '1' } },
      });
      assert.equal(init.status, 503);
      assert.equal(init.headers.get('retry-after'), '1');
      assert.equal((init.json as Json).id, 'init-down');
      const get = await fetch(url, {
        headers: { Accept: 'text/event-stream', 'Mcp-Session-Id': sessionId, 'MCP-Protocol-Version': '2025-11-25' },
      });
      assert.equal(get.status, 503);
      assert.equal(get.headers.get('retry-after'), '1');
      assert.match(((await get.json()) as Json).error.message, /is unreachable/);
      const modernDuring = await modernRpc(
        url,
        'tools/call',
        { name: 'echo', arguments: { text: 'stateless' } },
        { headers: { Accept: 'application/json' } },
      );
      assert.equal(modernDuring.status, 200);
      assert.equal((modernDuring.json as Json).result.content[0].text, 'stateless');

      await delay(5_000); // the outage (the scenario's length, not a wait for an effect)
      await redis.start();
      phase = 'restarted';
      await within(firstLegacyOkAfterRestart.promise, 60_000, 'a legacy call succeeding after Redis came back');
    } finally {
      // Also on a failure: a load loop left running would hold the test file open.
      stopped = true;
      await Promise.all(workers);
    }

    // Nothing hung; legacy requests got 200 or 503 only, modern ones 200 throughout.
    assert.deepEqual(
      outcomes.filter((o) => o.status === 'no answer'),
      [],
      'every request was answered',
    );
    const legacy = outcomes.filter((o) => o.era === 'legacy');
    assert.deepEqual([...new Set(legacy.map((o) => o.status))].sort(), [200, 503]);
    for (const o of legacy.filter((o) => o.status === 503)) {
      assert.equal(o.retryAfter, '1');
      assert.equal(o.body?.id, o.id);
      assert.match(o.body?.error?.message, /Redis at 127\.0\.0\.1:\d+\) is unreachable/);
    }
    const modern = outcomes.filter((o) => o.era === 'modern');
    assert.ok(
      modern.some((o) => o.phase === 'down'),
      'modern calls were made during the outage',
    );
    assert.deepEqual(
      modern.filter((o) => o.status !== 200),
      [],
      '2026-07-28 calls never needed Redis',
    );

    // Full service: the old session (restored from the dump), a new one, a resumable stream.
    const again = await rpc(
      url,
      { jsonrpc: '2.0', id: nextId++, method: 'tools/call', params: { name: 'echo', arguments: { text: 'after' } } },
      { headers: legacyHeaders(sessionId) },
    );
    assert.equal(again.status, 200);
    assert.equal((again.json as Json).result.content[0].text, 'after');
    const fresh = await legacySession(url, 'faults');
    const ticked = follow(await startTick(url, fresh, 5, 1, 'after'));
    const tickedEnd = await within(ticked.done, 60_000, 'a progress stream after the outage');
    assert.equal(tickedEnd.ended, true);
    assert.deepEqual(progressOf(ticked.events), [1, 2, 3, 4, 5]);
    assert.equal(messagesOf(ticked.events).find((m) => 'result' in m)?.result.content[0].text, 'ticked 5');
    assert.ok(
      ticked.events.every((e) => e.data === '' || e.id),
      'the stream is resumable again (every event has an id)',
    );

    // One log line when the outage began, one when it ended; nothing per request.
    const outageLines = logger.lines.filter((l) => /is unreachable/.test(l.message));
    const backLines = logger.lines.filter((l) => /is reachable again/.test(l.message));
    assert.equal(outageLines.length, 1, JSON.stringify(logger.lines, null, 1));
    assert.equal(backLines.length, 1, JSON.stringify(logger.lines, null, 1));
    const others = logger.lines.filter((l) => l.level !== 'log' && !outageLines.includes(l));
    assert.deepEqual(others, [], 'no other warning or error was logged');
    assert.deepEqual(unhandled, [], 'no unhandled rejection');
  });
});

function openGet(url: string, sessionId: string, lastEventId: string): Promise<Response> {
  return fetch(url, {
    headers: {
      Accept: 'text/event-stream',
      'Mcp-Session-Id': sessionId,
      'MCP-Protocol-Version': '2025-11-25',
      'Last-Event-ID': lastEventId,
    },
  });
}

describe('faults: an instance killed (SIGKILL) in the middle of a progress stream', () => {
  let redis: RedisChild;
  let a: FixtureInstance;
  let b: FixtureInstance;

  before(async () => {
    redis = new RedisChild(await freePort());
    await redis.start();
    const prefix = `mcp-faults:${randomBytes(6).toString('hex')}:`;
    a = new FixtureInstance('A', { REDIS_URL: redis.url, MCP_KEY_PREFIX: prefix });
    b = new FixtureInstance('B', { REDIS_URL: redis.url, MCP_KEY_PREFIX: prefix });
    await Promise.all([a.start(), b.start()]);
  });

  after(async () => {
    await Promise.all([a?.kill('SIGTERM'), b?.kill('SIGTERM')]);
    await redis?.stop();
  });

  it('resumes on B with Last-Event-ID: every stored event once, in order, then a clean close since the producer died', async () => {
    const sessionId = await legacySession(a.url, 'faults');
    const first = follow(await startTick(a.url, sessionId, 1000, 5, 'dying'));
    await first.until((events) => progressOf(events).length >= 10, 60_000, 'ten progress events from A');
    await a.kill();
    const cut = await within(first.done, 60_000, "A's stream being cut");
    assert.equal(cut.timedOut, false);

    const seen = first.events.filter((e) => e.id !== undefined);
    const lastId = seen.at(-1)!.id!;
    const seenProgress = progressOf(first.events);
    assert.ok(seenProgress.length >= 10);

    // B replays what A stored after lastId, then ends the stream once A's heartbeat expired.
    const resumed = follow(await openGet(b.url, sessionId, lastId));
    const resumedEnd = await within(resumed.done, 60_000, 'the resumed stream on B ending');
    assert.deepEqual(resumedEnd, { ended: true, timedOut: false, failed: false }, 'B closed the stream itself');
    const all = [...seenProgress, ...progressOf(resumed.events)];
    assert.deepEqual(
      all,
      Array.from({ length: all.length }, (_, i) => i + 1),
      'every event once, no gap, no duplicate',
    );
    assert.equal(
      messagesOf(resumed.events).some((m) => 'result' in m || 'error' in m),
      false,
      'no answer can come: its producer died',
    );
    const ids = [...seen, ...resumed.events].map((e) => e.id).filter((id) => id !== undefined && !id.endsWith('.0'));
    assert.equal(new Set(ids).size, ids.length, 'event ids are unique');

    // "Every event" is what A stored: resuming again from the same id gives the same events.
    const replayed = follow(await openGet(b.url, sessionId, lastId));
    assert.equal((await within(replayed.done, 60_000, 'a second resume ending')).ended, true);
    assert.deepEqual(
      replayed.events.map((e) => e.id),
      resumed.events.map((e) => e.id),
    );

    // Resuming after the last stored event: nothing more, closed at once rather than held open.
    const tailId = [...seen, ...resumed.events].filter((e) => e.id !== undefined).at(-1)!.id!;
    const empty = follow(await openGet(b.url, sessionId, tailId));
    assert.equal((await within(empty.done, 60_000, 'a resume after the last event ending')).ended, true);
    assert.deepEqual(progressOf(empty.events), []);

    // B lives on and serves the session.
    const whoami = await rpc(
      b.url,
      { jsonrpc: '2.0', id: nextId++, method: 'tools/call', params: { name: 'whoami', arguments: {} } },
      { headers: legacyHeaders(sessionId) },
    );
    assert.equal((whoami.json as Json).result.content[0].text, 'B');
    assert.equal(b.alive, true);
    assert.doesNotMatch(b.stderr, /unhandled|uncaught/i);
  });
});
