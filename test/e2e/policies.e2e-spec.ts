/**
 * Per-tool policies (@McpConcurrency, @Throttle / @SkipThrottle of @nestjs/throttler, the
 * @McpRateLimit alias) on real apps: counted by the tool whatever the provider's scope, for
 * runtime-registered tools too, per caller (principal, else client address), and across
 * two instances sharing Redis. Calls are held open by promises the test releases, never by sleeps.
 * The Redis part needs Redis at REDIS_URL: skipped without it, except under CI=true where a
 * missing Redis fails the run.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { request as httpRequest } from 'node:http';
import { Readable } from 'node:stream';
import { after, before, describe, it } from 'node:test';
import { Client as ModernClient, StreamableHTTPClientTransport as ModernTransport } from '@modelcontextprotocol/client';
import { Throttle, type ThrottlerStorage } from '@nestjs/throttler';
import { ThrottlerStorageService } from '@nestjs/throttler';
import { Redis } from 'ioredis';
import { McpConcurrency, McpRegistry } from '../../lib/index.js';
import { Holds, PoliciesModule, type PoliciesFixtureOptions } from '../fixtures/policies.module.js';
import { startApp, type RunningApp } from '../utils/app.js';
import { MODERN_PROTOCOL_VERSION, connectSdkClient, modernRpc } from '../utils/clients.js';
import { REDIS_URL, clearRedisPrefix, redisAvailable } from '../utils/redis.js';

type Json = Record<string, any>;

const skipRedis = (await redisAvailable()) ? false : `no Redis at ${REDIS_URL} (start one, or run .ci/run)`;

async function callTool(url: string, name: string): Promise<{ isError: boolean; text: string }> {
  const response = await modernRpc(url, 'tools/call', { name, arguments: {} });
  const body = (response.json ?? response.events?.at(-1)?.data) as Json | undefined;
  assert.ok(body?.result, `tools/call ${name} got no result (HTTP ${response.status}): ${response.text}`);
  return { isError: body.result.isError === true, text: String(body.result.content?.[0]?.text ?? '') };
}

async function assertOk(url: string, name: string): Promise<void> {
  const outcome = await callTool(url, name);
  assert.equal(outcome.isError, false, `${name} was refused: ${outcome.text}`);
}

/** A fetch whose connections leave from `localAddress`: a second client address on loopback. */
function fetchFrom(localAddress: string): typeof fetch {
  return ((input: string | URL | Request, init?: RequestInit) =>
    new Promise<Response>((resolve, reject) => {
      const url = new URL(input instanceof Request ? input.url : String(input));
      const headers = Object.fromEntries(new Headers(init?.headers).entries());
      const req = httpRequest(
        url,
        { method: init?.method ?? 'GET', headers, localAddress, signal: init?.signal ?? undefined },
        (res) => {
          const responseHeaders = new Headers();
          for (const [key, value] of Object.entries(res.headers))
            if (value !== undefined) responseHeaders.set(key, Array.isArray(value) ? value.join(', ') : value);
          const status = res.statusCode ?? 500;
          const empty = status === 204 || status === 304;
          if (empty) res.resume();
          resolve(
            new Response(empty ? null : (Readable.toWeb(res) as ReadableStream), { status, headers: responseHeaders }),
          );
        },
      );
      req.on('error', reject);
      req.end(typeof init?.body === 'string' ? init.body : undefined);
    })) as typeof fetch;
}

/** The official 2026-07-28 client, anonymous, connecting from `localAddress`. */
async function anonymousClientFrom(url: string, localAddress: string): Promise<ModernClient> {
  const client = new ModernClient(
    { name: `anonymous-${localAddress}`, version: '1.0.0' },
    {
      capabilities: {},
      versionNegotiation: { mode: { pin: MODERN_PROTOCOL_VERSION } },
    },
  );
  await client.connect(new ModernTransport(new URL(url), { fetch: fetchFrom(localAddress) }));
  assert.equal(client.getNegotiatedProtocolVersion(), MODERN_PROTOCOL_VERSION);
  return client;
}

function textOf(result: Json): string {
  return String(result.content?.[0]?.text ?? '');
}

describe('per-tool policies on one instance (in memory)', () => {
  const holds = new Holds();
  let server: RunningApp;

  before(async () => {
    server = await startApp(PoliciesModule.register({ holds }));
    const registry = server.app.get(McpRegistry);
    registry.addTool({
      name: 'runtime_exclusive',
      description: 'Added at runtime, one at a time.',
      decorators: [McpConcurrency(1)],
      handler: async () => {
        await holds.hold();
        return 'done';
      },
    });
    registry.addTool({
      name: 'runtime_limited',
      description: 'Added at runtime, two calls a minute.',
      decorators: [Throttle({ default: { limit: 2, ttl: 60_000 } })],
      handler: () => 'ok',
    });
  });
  after(async () => {
    holds.releaseAll();
    await server?.close();
  });

  it('a request-scoped tool with a concurrency of 1 refuses a second concurrent call', async () => {
    const entered = holds.entered();
    const first = callTool(server.url, 'exclusive');
    await entered;
    const second = await callTool(server.url, 'exclusive');
    assert.equal(second.isError, true, `the second concurrent call ran: ${second.text}`);
    assert.match(second.text, /Tool "exclusive" is busy: 1 call\(s\) are running and the limit is 1/);
    holds.releaseAll();
    assert.equal((await first).isError, false);
    // The slot came back: the next call runs.
    const again = holds.entered();
    const third = callTool(server.url, 'exclusive');
    await again;
    holds.releaseAll();
    assert.equal((await third).isError, false);
  });

  it('a tool limited to 5 calls a minute refuses the sixth, naming the tool, the limit and when to retry', async () => {
    for (let i = 1; i <= 5; i++) await assertOk(server.url, 'five_per_minute');
    const sixth = await callTool(server.url, 'five_per_minute');
    assert.equal(sixth.isError, true, 'the sixth call ran');
    assert.match(
      sixth.text,
      /^Rate limit for tool "five_per_minute" reached: 5 call\(s\) per minute\. Try again in \d+ s\.$/,
    );
  });

  it('two anonymous 2026-07-28 clients at different addresses do not share a bucket', async () => {
    const a = await anonymousClientFrom(server.url, '127.0.0.1');
    const b = await anonymousClientFrom(server.url, '127.0.0.2');
    try {
      for (let i = 0; i < 2; i++)
        assert.equal((await a.callTool({ name: 'two_per_minute', arguments: {} })).isError ?? false, false);
      const refused = (await a.callTool({ name: 'two_per_minute', arguments: {} })) as Json;
      assert.equal(refused.isError, true, 'the third call of client A ran');
      assert.match(textOf(refused), /Rate limit for tool "two_per_minute" reached: 2 call\(s\) per minute/);
      const other = (await b.callTool({ name: 'two_per_minute', arguments: {} })) as Json;
      assert.equal(other.isError ?? false, false, `client B was refused with client A's bucket: ${textOf(other)}`);
    } finally {
      await Promise.all([a.close(), b.close()]);
    }
  });

  it('anonymous legacy sessions from one address share its bucket: a new session is no new allowance', async () => {
    const a = await connectSdkClient(server.url, { fetch: fetchFrom('127.0.0.3') });
    const b = await connectSdkClient(server.url, { fetch: fetchFrom('127.0.0.3') });
    try {
      assert.notEqual(a.sessionId, b.sessionId);
      for (let i = 0; i < 2; i++)
        assert.equal((await a.client.callTool({ name: 'two_per_minute', arguments: {} })).isError ?? false, false);
      const other = (await b.client.callTool({ name: 'two_per_minute', arguments: {} })) as Json;
      assert.equal(other.isError, true, `session B got a fresh bucket: ${textOf(other)}`);
      assert.match(textOf(other), /Rate limit for tool "two_per_minute" reached/);
    } finally {
      await Promise.all([a.close(), b.close()]);
    }
  });

  it('@Throttle on a class limits its tools, and @SkipThrottle on a method exempts it', async () => {
    await assertOk(server.url, 'once_per_minute');
    const second = await callTool(server.url, 'once_per_minute');
    assert.equal(second.isError, true);
    assert.match(second.text, /Rate limit for tool "once_per_minute" reached: 1 call\(s\) per minute/);
    for (let i = 0; i < 3; i++) await assertOk(server.url, 'unlimited');
  });

  it('the policies of a runtime-registered tool hold', async () => {
    const entered = holds.entered();
    const first = callTool(server.url, 'runtime_exclusive');
    await entered;
    const busy = await callTool(server.url, 'runtime_exclusive');
    assert.equal(busy.isError, true, `the second concurrent call ran: ${busy.text}`);
    assert.match(busy.text, /Tool "runtime_exclusive" is busy/);
    holds.releaseAll();
    assert.equal((await first).isError, false);

    for (let i = 0; i < 2; i++) await assertOk(server.url, 'runtime_limited');
    const third = await callTool(server.url, 'runtime_limited');
    assert.equal(third.isError, true, 'the third call of runtime_limited ran');
    assert.match(third.text, /Rate limit for tool "runtime_limited" reached: 2 call\(s\) per minute/);
  });
});

describe("the app's ThrottlerModule configuration", () => {
  const holds = new Holds();
  const keys: string[] = [];
  class CountingStorage extends ThrottlerStorageService implements ThrottlerStorage {
    override increment(key: string, ttl: number, limit: number, blockDuration: number, name: string) {
      keys.push(key);
      return super.increment(key, ttl, limit, blockDuration, name);
    }
  }
  let server: RunningApp;

  before(async () => {
    server = await startApp(
      PoliciesModule.register({
        holds,
        throttler: { throttlers: [{ ttl: 60_000, limit: 1000 }], storage: new CountingStorage() },
      }),
    );
  });
  after(async () => {
    await server?.close();
  });

  it('limits through the storage the app gave, one key per tool and caller, only on tools that ask', async () => {
    await assertOk(server.url, 'five_per_minute');
    await assertOk(server.url, 'plain');
    assert.deepEqual(keys, ['tool:five_per_minute:default:address:127.0.0.1']);
  });
});

describe('per-tool policies across two instances sharing Redis', { skip: skipRedis }, () => {
  const holds = new Holds();
  const prefix = `mcp-test:policies:${randomBytes(6).toString('hex')}:`;
  /** The module keeps every key of a deployment under its prefix as one hash tag. */
  const stored = `{${prefix}}`;
  let a: RunningApp;
  let b: RunningApp;
  let redis: Redis;

  const options = (): PoliciesFixtureOptions => ({
    holds,
    redis: { url: REDIS_URL, keyPrefix: prefix },
    // The usual app set-up: a global ThrottlerGuard with a generous default for HTTP routes.
    throttler: { throttlers: [{ ttl: 60_000, limit: 1000 }] },
    globalGuard: true,
  });

  before(async () => {
    a = await startApp(PoliciesModule.register(options()));
    b = await startApp(PoliciesModule.register(options()));
    redis = new Redis(REDIS_URL);
  });
  after(async () => {
    holds.releaseAll();
    await Promise.all([a?.close(), b?.close()]);
    redis?.disconnect();
    await clearRedisPrefix(prefix);
  });

  it('a tool limited to 5 calls a minute refuses the sixth when the calls alternate between the instances', async () => {
    for (let i = 1; i <= 5; i++) await assertOk(i % 2 ? a.url : b.url, 'five_per_minute');
    const sixth = await callTool(b.url, 'five_per_minute');
    assert.equal(sixth.isError, true, 'the sixth call ran: each instance counted alone');
    assert.match(
      sixth.text,
      /Rate limit for tool "five_per_minute" reached: 5 call\(s\) per minute\. Try again in \d+ s\./,
    );
    // One key per tool and tracker, its own hash tag, so a Redis Cluster can route the script.
    assert.deepEqual(await redis.keys(`${stored}throttle:*five_per_minute*`), [
      `${stored}throttle:{tool:five_per_minute:default:address:127.0.0.1}`,
    ]);
  });

  it('a concurrency of 1 holds across the instances', async () => {
    const entered = holds.entered();
    const first = callTool(a.url, 'exclusive');
    await entered;
    const elsewhere = await callTool(b.url, 'exclusive');
    assert.equal(elsewhere.isError, true, `a second call ran on the other instance: ${elsewhere.text}`);
    assert.match(elsewhere.text, /Tool "exclusive" is busy: 1 call\(s\) are running and the limit is 1/);
    holds.releaseAll();
    assert.equal((await first).isError, false);
    const again = holds.entered();
    const next = callTool(b.url, 'exclusive');
    await again;
    holds.releaseAll();
    assert.equal((await next).isError, false, 'the slot did not come back after the first call ended');
  });

  it('under a global ThrottlerGuard every tool is limited per tool and caller, except @SkipThrottle ones', async () => {
    await assertOk(a.url, 'unlimited');
    await assertOk(b.url, 'once_per_minute');
    await assertOk(a.url, 'plain');
    const keys = (await redis.keys(`${stored}throttle:*`)).sort();
    assert.ok(keys.includes(`${stored}throttle:{tool:once_per_minute:default:address:127.0.0.1}`), keys.join(', '));
    assert.ok(!keys.some((key) => key.includes('tool:unlimited:')), `@SkipThrottle was counted: ${keys.join(', ')}`);
    // Tools with no limit of their own are counted by the configured default throttler.
    assert.ok(keys.includes(`${stored}throttle:{tool:plain:default:address:127.0.0.1}`), keys.join(', '));
  });

  it('a lease another instance holds refuses a call, and one whose instance stopped renewing it expires', async () => {
    const key = `${stored}leases:{tool:exclusive}`;
    const now = Number((await redis.time())[0]) * 1000;
    await redis.zadd(key, now + 60_000, 'lease-of-a-live-instance');
    const refused = await callTool(a.url, 'exclusive');
    assert.equal(refused.isError, true, `ran past a live lease: ${refused.text}`);
    await redis.zadd(key, now - 1_000, 'lease-of-a-live-instance');
    const entered = holds.entered();
    const call = callTool(a.url, 'exclusive');
    await entered;
    const leases = await redis.zrange(key, 0, -1);
    assert.equal(leases.length, 1, `expected the running call's lease alone, got ${leases.join(', ')}`);
    assert.notEqual(leases[0], 'lease-of-a-live-instance', 'the expired lease was not dropped');
    holds.releaseAll();
    assert.equal((await call).isError, false);
    assert.equal(await redis.zcard(key), 0, 'the finished call left its lease');
  });
});
