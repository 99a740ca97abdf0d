/**
 * Rate limits (@Throttle / @McpRateLimit) from the attacker's side. Who is counted: a principal
 * by its id, whatever address or session it uses; an anonymous caller by its address, whatever
 * session, era or transport it uses (issue 26 item 11: new sessions and the other era used to
 * give it fresh buckets). Addresses are told apart through X-Forwarded-For, believed only when
 * the app trusts its proxy (Express `trust proxy`, Fastify `trustProxy`). And what a failing
 * throttler store does: the limited call is refused, never run unchecked, and the process lives.
 */
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { randomBytes } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { Injectable, Module, type DynamicModule } from '@nestjs/common';
import { McpModule, McpRateLimit, Tool, type McpModuleOptions } from '../../lib/index.js';
import { MCP_REDIS, type McpRedisBackend } from '../../lib/redis/redis-backend.js';
import { startApp, type RunningApp, type TestPlatform } from '../utils/app.js';
import { modernRpc, rpc } from '../utils/clients.js';
import { openSseSession } from '../utils/legacy-sse.js';
import { legacySession } from '../utils/legacy-session.js';
import { startOwnRedis, type OwnRedisHandle } from '../utils/redis-cluster.js';

type Json = Record<string, any>;

const TOKENS: Record<string, string> = { 'token-alice-0123456789': 'alice', 'token-bob-0123456789': 'bob' };
const ALICE = { Authorization: 'Bearer token-alice-0123456789' };
const BOB = { Authorization: 'Bearer token-bob-0123456789' };

/** Handler runs, by tool: what a refusal must not have started. */
const ran = { limited: 0, plain: 0 };

@Injectable()
class ThrottledTools {
  @Tool('limited', { description: 'Two calls a minute per caller.' })
  @McpRateLimit({ limit: 2, windowMs: 60_000 })
  limited(): string {
    ran.limited++;
    return 'ran';
  }

  @Tool('plain', { description: 'No limit.' })
  plain(): string {
    ran.plain++;
    return 'ran';
  }
}

function throttleApp(options: Partial<McpModuleOptions>): DynamicModule {
  @Module({
    imports: [McpModule.forRoot({ name: 'throttle-attack', version: '1.0.0', legacySse: true, ...options })],
    providers: [ThrottledTools],
  })
  class ThrottleApp {}
  return { module: ThrottleApp };
}

const authOption: McpModuleOptions['auth'] = {
  resource: 'http://127.0.0.1/mcp',
  authorizationServers: ['https://auth.example.com'],
  verifyToken: (token) => (TOKENS[token] ? { id: TOKENS[token]! } : null),
};

/** Starts the app on a platform; `trustProxy` sets Express's 'trust proxy' or Fastify's trustProxy. */
function start(module: DynamicModule, platform: TestPlatform, trustProxy: boolean): Promise<RunningApp> {
  if (platform === 'fastify') return startApp(module, { platform, fastifyOptions: { trustProxy } });
  return startApp(module, {
    configure: (app) =>
      void (app.getHttpAdapter().getInstance() as { set(name: string, value: unknown): void }).set(
        'trust proxy',
        trustProxy,
      ),
  });
}

type Outcome = 'ran' | 'refused';

function outcomeOf(result: Json | undefined, what: string): Outcome {
  assert.ok(result, `${what}: no result`);
  if (result.isError !== true) return 'ran';
  assert.match(
    String(result.content?.[0]?.text),
    /Rate limit for tool "limited" reached: 2 call\(s\) per minute/,
    `${what}: ${JSON.stringify(result)}`,
  );
  return 'refused';
}

/** One call of `tool` in a new 2025-11-25 session. */
async function inNewSession(url: string, headers: Record<string, string>, tool = 'limited'): Promise<Outcome> {
  const sessionId = await legacySession(url, 'throttle', { headers });
  const answer = await rpc(
    url,
    { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: tool, arguments: {} } },
    { sessionId, headers: { 'MCP-Protocol-Version': '2025-11-25', ...headers } },
  );
  const body = (answer.json ?? answer.events?.at(-1)?.data) as Json | undefined;
  return outcomeOf(body?.result, `legacy session call (HTTP ${answer.status})`);
}

/** One 2026-07-28 call (no session at all). */
async function modern(url: string, headers: Record<string, string>, tool = 'limited'): Promise<Outcome> {
  const answer = await modernRpc(url, 'tools/call', { name: tool, arguments: {} }, { headers });
  const body = (answer.json ?? answer.events?.at(-1)?.data) as Json | undefined;
  return outcomeOf(body?.result, `2026-07-28 call (HTTP ${answer.status})`);
}

/** One call in a new 2024-11-05 HTTP+SSE session. */
async function overSse(base: string, headers: Record<string, string>): Promise<Outcome> {
  const session = await openSseSession(base, headers);
  try {
    const answer = await session.request('call', 'tools/call', { name: 'limited', arguments: {} });
    return outcomeOf((answer.data as Json).result, 'SSE call');
  } finally {
    session.stream.close();
  }
}

/** Three calls in one JSON-RPC batch of a 2025-03-26 session. */
async function inBatch(url: string, headers: Record<string, string>): Promise<Outcome[]> {
  const sessionId = await legacySession(url, 'batch', { headers, protocolVersion: '2025-03-26' });
  const batch = [1, 2, 3].map((id) => ({
    jsonrpc: '2.0',
    id,
    method: 'tools/call',
    params: { name: 'limited', arguments: {} },
  }));
  const answer = await rpc(url, batch, { sessionId, headers: { 'MCP-Protocol-Version': '2025-03-26', ...headers } });
  assert.equal(answer.status, 200, answer.text);
  const replies = (answer.json ?? answer.events?.map((e) => e.data).flat()) as Json[];
  return replies.sort((a, b) => a.id - b.id).map((reply) => outcomeOf(reply.result, `batch call ${reply.id}`));
}

const from = (ip: string): Record<string, string> => ({ 'X-Forwarded-For': ip });

for (const platform of ['express', 'fastify'] as TestPlatform[]) {
  describe(`rate limits of anonymous callers on ${platform}, behind a trusted proxy`, () => {
    let server: RunningApp;
    before(async () => {
      server = await start(throttleApp({}), platform, true);
    });
    after(() => server?.close());

    it('one address gets the limit once over four sessions, the 2026-07-28 era and an SSE session (item 11)', async () => {
      const caller = from(platform === 'express' ? '203.0.113.11' : '203.0.113.21');
      const before = ran.limited;
      const outcomes = [];
      for (let i = 0; i < 4; i++) outcomes.push(await inNewSession(server.url, caller));
      outcomes.push(await modern(server.url, caller));
      outcomes.push(await overSse(server.base, caller));
      assert.deepEqual(outcomes, ['ran', 'ran', 'refused', 'refused', 'refused', 'refused']);
      assert.equal(ran.limited - before, 2, 'a refused call started its handler');
    });

    it('the era a caller starts in does not matter: two 2026-07-28 calls, then a new session is refused', async () => {
      const caller = from(platform === 'express' ? '203.0.113.12' : '203.0.113.22');
      assert.deepEqual(
        [await modern(server.url, caller), await modern(server.url, caller), await inNewSession(server.url, caller)],
        ['ran', 'ran', 'refused'],
      );
    });

    it('another address keeps its own bucket, and every call of a 2025-03-26 batch counts', async () => {
      const flooder = from(platform === 'express' ? '203.0.113.13' : '203.0.113.23');
      const bystander = from(platform === 'express' ? '198.51.100.7' : '198.51.100.8');
      assert.deepEqual(await inBatch(server.url, flooder), ['ran', 'ran', 'refused']);
      assert.equal(await modern(server.url, flooder), 'refused');
      assert.equal(await modern(server.url, bystander), 'ran');
      assert.equal(await inNewSession(server.url, bystander), 'ran');
    });

    it('IPv6 callers are counted per /64: another address of the same /64 shares the bucket', async () => {
      const prefix = platform === 'express' ? '2001:db8:11:1' : '2001:db8:22:1';
      assert.equal(await modern(server.url, from(`${prefix}::1`)), 'ran');
      assert.equal(await modern(server.url, from(`${prefix}::2`)), 'ran');
      assert.equal(await modern(server.url, from(`${prefix}::3`)), 'refused');
    });
  });

  describe(`rate limits of anonymous callers on ${platform}, without a trusted proxy`, () => {
    let server: RunningApp;
    before(async () => {
      server = await start(throttleApp({}), platform, false);
    });
    after(() => server?.close());

    it('X-Forwarded-For is ignored: a forged address does not buy a new bucket', async () => {
      assert.equal(await modern(server.url, from('192.0.2.1')), 'ran');
      assert.equal(await inNewSession(server.url, from('192.0.2.2')), 'ran');
      assert.equal(await modern(server.url, from('192.0.2.3')), 'refused');
      assert.equal(await modern(server.url, {}), 'refused');
    });
  });
}

describe('rate limits of authenticated principals', () => {
  let server: RunningApp;
  before(async () => {
    server = await start(throttleApp({ auth: authOption }), 'express', true);
  });
  after(() => server?.close());

  it('a principal is counted across its sessions, both eras and SSE, from any address; another principal is not touched', async () => {
    const before = ran.limited;
    const alice = [
      await inNewSession(server.url, { ...ALICE, ...from('203.0.113.31') }),
      await inNewSession(server.url, { ...ALICE, ...from('203.0.113.32') }),
      await modern(server.url, { ...ALICE, ...from('203.0.113.33') }),
      await overSse(server.base, { ...ALICE, ...from('203.0.113.34') }),
    ];
    assert.deepEqual(alice, ['ran', 'ran', 'refused', 'refused']);
    // Bob, from the very address Alice used first, has his own bucket.
    assert.equal(await modern(server.url, { ...BOB, ...from('203.0.113.31') }), 'ran');
    assert.equal(await inNewSession(server.url, { ...BOB, ...from('203.0.113.31') }), 'ran');
    assert.equal(await modern(server.url, { ...BOB, ...from('203.0.113.31') }), 'refused');
    assert.equal(ran.limited - before, 4);
  });

  it('an anonymous caller gets no bucket at all: 401 before any limit is counted', async () => {
    const answer = await modernRpc(server.url, 'tools/call', { name: 'limited', arguments: {} });
    assert.equal(answer.status, 401);
  });
});

describe('rate limits when the throttler store (Redis) fails', () => {
  let redis: OwnRedisHandle;
  let server: RunningApp;
  before(async () => {
    redis = await startOwnRedis();
    server = await start(
      throttleApp({
        redis: {
          url: redis.url,
          keyPrefix: `mcp-throttle:${randomBytes(6).toString('hex')}:`,
          commandTimeoutMs: 1_000,
          retryAfterS: 1,
        },
      }),
      'express',
      true,
    );
  });
  after(async () => {
    await server?.close();
    await redis?.stop();
  });

  it('refuses the limited call without running it while Redis is down, keeps other tools working, and counts again once it is back', async () => {
    const caller = from('203.0.113.41');
    assert.equal(await modern(server.url, caller), 'ran');
    await redis.kill();
    const before = ran.limited;
    const answer = await modernRpc(server.url, 'tools/call', { name: 'limited', arguments: {} }, { headers: caller });
    const result = ((answer.json ?? answer.events?.at(-1)?.data) as Json).result;
    assert.equal(result.isError, true, JSON.stringify(result));
    assert.match(
      result.content[0].text,
      /^Rate limit for tool "limited" could not be checked: its store is unavailable \(reference [0-9a-f-]{36}\), so the call did not run\. Try again in 1 s\.$/,
    );
    assert.doesNotMatch(
      result.content[0].text,
      /127\.0\.0\.1|ECONNREFUSED|redis/i,
      'the store failure leaks its address or cause',
    );
    assert.equal(ran.limited, before, 'the limited handler ran while its limit could not be checked');
    assert.equal(await modern(server.url, caller, 'plain'), 'ran');

    const client = server.app.get<McpRedisBackend>(MCP_REDIS).client;
    await redis.restart();
    if (client.status !== 'ready') await once(client as unknown as NodeJS.EventEmitter, 'ready');
    // The restarted Redis is empty: the window starts again.
    assert.deepEqual(
      [await modern(server.url, caller), await modern(server.url, caller), await modern(server.url, caller)],
      ['ran', 'ran', 'refused'],
    );
  });
});
