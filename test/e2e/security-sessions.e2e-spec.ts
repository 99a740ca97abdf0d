/**
 * ISSUE-15 items 4, 8 and 11: session caps per caller (one caller's flood never ends another
 * caller's session), bounded initialize params, and everything a session holds ending with it.
 * Client addresses are told apart through X-Forwarded-For with Express's 'trust proxy' on, so that
 * every client can stay on loopback.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { Injectable, Module, type DynamicModule } from '@nestjs/common';
import { IsString } from 'class-validator';
import { Redis } from 'ioredis';
import {
  Args,
  Ctx,
  McpContext,
  McpModule,
  McpRegistry,
  Resource,
  Tool,
  type McpModuleOptions,
} from 'nestjs-model-context';
import { InMemorySessionStore } from 'nestjs-model-context/stores';
import { startApp, type RunningApp } from '../utils/app.js';
import { rpc } from '../utils/clients.js';
import { REDIS_URL, redisAvailable } from '../utils/redis.js';

const VERSION = '2025-11-25';

class UriDto {
  @IsString()
  uri!: string;
}

@Injectable()
class SessionTools {
  constructor(private readonly registry: McpRegistry) {}

  @Tool({ description: 'The client capabilities and info the session kept.' })
  kept(@Ctx() ctx: McpContext): string {
    return JSON.stringify({ capabilities: ctx.clientCapabilities, clientInfo: ctx.clientInfo ?? null });
  }

  @Tool({ description: 'Runs until cancelled.' })
  hang(@Ctx() ctx: McpContext): Promise<string> {
    return new Promise((resolve) => ctx.signal.addEventListener('abort', () => resolve('cancelled')));
  }

  @Tool({ description: 'Announces that a resource changed.' })
  touch(@Args() { uri }: UriDto): string {
    this.registry.notifyResourceUpdated(uri);
    return 'ok';
  }

  @Resource({ uri: 'test://watched', name: 'watched', mimeType: 'text/plain' })
  watched(): string {
    return 'watched';
  }
}

function appModule(options: Partial<McpModuleOptions>): DynamicModule {
  @Module({
    imports: [McpModule.forRoot({ name: 'sessions-test', version: '1.0.0', ...options })],
    providers: [SessionTools],
  })
  class SessionsApp {}
  return { module: SessionsApp };
}

async function start(options: Partial<McpModuleOptions>): Promise<RunningApp> {
  return startApp(appModule(options), {
    configure: (app) => {
      (app.getHttpAdapter().getInstance() as { set(name: string, value: unknown): void }).set('trust proxy', true);
    },
  });
}

interface Caller {
  ip: string;
  token?: string;
}

function headersOf(caller: Caller): Record<string, string> {
  const headers: Record<string, string> = { 'X-Forwarded-For': caller.ip, 'MCP-Protocol-Version': VERSION };
  if (caller.token) headers.Authorization = `Bearer ${caller.token}`;
  return headers;
}

function initializeBody(extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    jsonrpc: '2.0',
    id: 1,
    method: 'initialize',
    params: { protocolVersion: VERSION, capabilities: {}, clientInfo: { name: 'flood', version: '1' }, ...extra },
  };
}

async function initialize(url: string, caller: Caller): Promise<string> {
  const answer = await rpc(url, initializeBody(), {
    headers: { ...headersOf(caller), 'MCP-Protocol-Version': undefined },
  });
  assert.equal(answer.status, 200, answer.text);
  const id = answer.headers.get('mcp-session-id');
  assert.ok(id, 'initialize answers an Mcp-Session-Id');
  return id;
}

async function pingStatus(url: string, caller: Caller, sessionId: string): Promise<number> {
  const answer = await rpc(url, { jsonrpc: '2.0', id: 2, method: 'ping' }, { sessionId, headers: headersOf(caller) });
  return answer.status;
}

interface GetStream {
  /** Resolves when the server ends the response. */
  ended: Promise<void>;
  /** Resolves once the text received so far contains `fragment`. */
  received(fragment: string): Promise<void>;
  cancel(): void;
}

/** Opens the session's GET stream. */
async function openGetStream(url: string, caller: Caller, sessionId: string): Promise<GetStream> {
  const controller = new AbortController();
  const response = await fetch(url, {
    headers: { Accept: 'text/event-stream', 'Mcp-Session-Id': sessionId, ...headersOf(caller) },
    signal: controller.signal,
  });
  assert.equal(response.status, 200);
  const reader = response.body!.getReader();
  const decoder = new TextDecoder();
  let text = '';
  const waiting: Array<{ fragment: string; resolve(): void }> = [];
  const ended = (async () => {
    for (;;) {
      const step = await reader.read();
      if (step.done) return;
      text += decoder.decode(step.value, { stream: true });
      for (const w of [...waiting]) if (text.includes(w.fragment)) (waiting.splice(waiting.indexOf(w), 1), w.resolve());
    }
  })();
  ended.catch(() => undefined);
  return {
    ended,
    received: (fragment) =>
      text.includes(fragment) ? Promise.resolve() : new Promise((resolve) => waiting.push({ fragment, resolve })),
    cancel: () => controller.abort(),
  };
}

function callBody(name: string, args: Record<string, unknown> = {}, id = 3): Record<string, unknown> {
  return { jsonrpc: '2.0', id, method: 'tools/call', params: { name, arguments: args } };
}

describe("Sessions: caps per caller, never another caller's session (in-memory store)", () => {
  let running: RunningApp;
  before(async () => {
    running = await start({ sessions: { maxSessions: 6 }, limits: { sessionsPerAddress: 3 } });
  });
  after(() => running.close());

  it('a flood from one address ends only its own least recently used sessions', async () => {
    const victim = { ip: '10.0.0.1' };
    const attacker = { ip: '10.0.0.2' };
    const kept = await initialize(running.url, victim);
    const flood: string[] = [];
    for (let i = 0; i < 8; i++) flood.push(await initialize(running.url, attacker));
    assert.equal(await pingStatus(running.url, victim, kept), 200, "another address's flood must not end this session");
    assert.equal(
      await pingStatus(running.url, attacker, flood[0]),
      404,
      'beyond its cap the flooding address loses its oldest session',
    );
    for (const id of flood.slice(-3)) assert.equal(await pingStatus(running.url, attacker, id), 200);
  });
});

describe('Sessions: sessions.maxSessions refuses new sessions instead of evicting', () => {
  let running: RunningApp;
  before(async () => {
    running = await start({ sessions: { maxSessions: 3 }, limits: { sessionsPerAddress: 3 } });
  });
  after(() => running.close());

  it('answers 503 with Retry-After and a server error naming sessions.maxSessions', async () => {
    const held: Array<[Caller, string]> = [];
    for (const ip of ['10.1.0.1', '10.1.0.2', '10.1.0.3']) held.push([{ ip }, await initialize(running.url, { ip })]);
    const refused = await rpc(running.url, initializeBody(), { headers: { 'X-Forwarded-For': '10.1.0.4' } });
    assert.equal(refused.status, 503);
    assert.match(refused.headers.get('retry-after') ?? '', /^\d+$/);
    assert.equal(refused.headers.get('mcp-session-id'), null);
    const error = (refused.json as { error: { code: number; message: string } }).error;
    assert.ok(error.code <= -32000 && error.code >= -32099, `a JSON-RPC server error, got ${error.code}`);
    assert.match(error.message, /sessions\.maxSessions/);
    assert.match(error.message, /3/);
    for (const [caller, id] of held)
      assert.equal(await pingStatus(running.url, caller, id), 200, 'no session is evicted to make room');
  });

  it('a caller at its own cap still gets a session by ending its own oldest one', async () => {
    const app = await start({ sessions: { maxSessions: 2 }, limits: { sessionsPerAddress: 2 } });
    try {
      const caller = { ip: '10.2.0.1' };
      const first = await initialize(app.url, caller);
      const second = await initialize(app.url, caller);
      const third = await initialize(app.url, caller);
      assert.equal(await pingStatus(app.url, caller, first), 404);
      assert.equal(await pingStatus(app.url, caller, second), 200);
      assert.equal(await pingStatus(app.url, caller, third), 200);
    } finally {
      await app.close();
    }
  });
});

describe('Sessions: caps per principal', () => {
  let running: RunningApp;
  before(async () => {
    running = await start({
      sessions: { maxSessions: 10 },
      limits: { sessionsPerPrincipal: 2, sessionsPerAddress: 100 },
      auth: {
        resource: 'http://127.0.0.1/mcp',
        authorizationServers: ['http://127.0.0.1/as'],
        verifyToken: (token) => (token === 'alice' || token === 'bob' ? { id: token, scopes: [] } : null),
      },
    });
  });
  after(() => running.close());

  it("one principal's flood from a shared address never ends another principal's session", async () => {
    const bob = { ip: '10.3.0.1', token: 'bob' };
    const alice = { ip: '10.3.0.1', token: 'alice' };
    const bobs = await initialize(running.url, bob);
    const alices: string[] = [];
    for (let i = 0; i < 5; i++) alices.push(await initialize(running.url, alice));
    assert.equal(await pingStatus(running.url, bob, bobs), 200);
    assert.equal(await pingStatus(running.url, alice, alices[0]), 404);
    assert.equal(await pingStatus(running.url, alice, alices[4]), 200);
    assert.equal(await pingStatus(running.url, alice, alices[3]), 200);
    assert.equal(await pingStatus(running.url, alice, alices[2]), 404, 'sessionsPerPrincipal (2) holds per principal');
  });
});

describe('Sessions: initialize params are kept bounded (limits.initializeParamsBytes)', () => {
  let running: RunningApp;
  before(async () => {
    running = await start({ limits: { initializeParamsBytes: 4096 } });
  });
  after(() => running.close());

  it('refuses an initialize whose capabilities exceed the limit with -32602 naming the option', async () => {
    const answer = await rpc(
      running.url,
      initializeBody({ capabilities: { experimental: { blob: 'x'.repeat(8000) } } }),
      {
        headers: { 'X-Forwarded-For': '10.4.0.1' },
      },
    );
    assert.equal(answer.status, 400);
    assert.equal(answer.headers.get('mcp-session-id'), null);
    const error = (answer.json as { error: { code: number; message: string } }).error;
    assert.equal(error.code, -32602);
    assert.match(error.message, /limits\.initializeParamsBytes/);
    assert.match(error.message, /4096/);
  });

  it('keeps only the capabilities and clientInfo fields the protocol defines', async () => {
    const caller = { ip: '10.4.0.2' };
    const init = await rpc(
      running.url,
      initializeBody({
        capabilities: { roots: { listChanged: true }, elicitation: {}, junk: { blob: 'y'.repeat(50_000) } },
        clientInfo: { name: 'c', version: '1', padding: 'z'.repeat(50_000) },
      }),
      { headers: { 'X-Forwarded-For': caller.ip } },
    );
    assert.equal(init.status, 200, init.text);
    const sessionId = init.headers.get('mcp-session-id')!;
    const answer = await rpc(running.url, callBody('kept'), { sessionId, headers: headersOf(caller) });
    const message = (answer.json ?? answer.events?.find((e) => (e.data as { id?: unknown })?.id === 3)?.data) as {
      result: { content: Array<{ text: string }> };
    };
    const kept = JSON.parse(message.result.content[0].text);
    assert.deepEqual(kept, {
      capabilities: { roots: { listChanged: true }, elicitation: {} },
      clientInfo: { name: 'c', version: '1' },
    });
  });
});

describe('Sessions: what a session holds ends with it', () => {
  it("eviction beyond the caller cap ends the evicted session's GET stream and in-flight calls", async () => {
    const running = await start({ limits: { sessionsPerAddress: 1 } });
    try {
      const caller = { ip: '10.5.0.1' };
      const first = await initialize(running.url, caller);
      const stream = await openGetStream(running.url, caller, first);
      const call = rpc(running.url, callBody('hang'), {
        sessionId: first,
        headers: headersOf(caller),
        timeoutMs: 60_000,
      });
      // The call is running once the server answered with headers; a ping on the session orders us after it.
      assert.equal(await pingStatus(running.url, caller, first), 200);
      await initialize(running.url, caller);
      await stream.ended;
      const answered = await call;
      assert.notEqual(answered.timedOut, true, "the evicted session's call ends with it");
    } finally {
      await running.close();
    }
  });

  it("idle expiry ends the session's GET stream", async () => {
    // The store's clock is the test's: the session expires when the test says, however slow the
    // machine, and the store's own sweep then ends the stream.
    let now = Date.now();
    const store = new InMemorySessionStore({ idleTtlMs: 300, maxSessions: 100, now: () => now });
    const running = await start({ sessions: { store } });
    try {
      const caller = { ip: '10.5.0.2' };
      const id = await initialize(running.url, caller);
      const stream = await openGetStream(running.url, caller, id);
      now += 301;
      await stream.ended;
      assert.equal(await pingStatus(running.url, caller, id), 404);
    } finally {
      await running.close();
    }
  });

  it('a resource update reaches subscribed GET streams without a session-store read per stream', async () => {
    class CountingStore extends InMemorySessionStore {
      gets = 0;
      override get(id: string) {
        this.gets++;
        return super.get(id);
      }
    }
    const store = new CountingStore({ idleTtlMs: 60_000, maxSessions: 100 });
    const running = await start({ sessions: { store } });
    const streams: GetStream[] = [];
    try {
      const caller = { ip: '10.5.0.3' };
      let subscribed = '';
      for (let i = 0; i < 20; i++) {
        const id = await initialize(running.url, caller);
        streams.push(await openGetStream(running.url, caller, id));
        if (i === 0) {
          subscribed = id;
          const sub = await rpc(
            running.url,
            { jsonrpc: '2.0', id: 4, method: 'resources/subscribe', params: { uri: 'test://watched' } },
            { sessionId: id, headers: headersOf(caller) },
          );
          assert.equal(sub.status, 200, sub.text);
        }
      }
      const before = store.gets;
      const touched = await rpc(running.url, callBody('touch', { uri: 'test://watched' }), {
        sessionId: subscribed,
        headers: headersOf(caller),
      });
      assert.equal(touched.status, 200, touched.text);
      // One read for the touch call itself; none per GET stream.
      assert.equal(store.gets - before, 1);
      await streams[0].received('notifications/resources/updated');
    } finally {
      for (const stream of streams) stream.cancel();
      await running.close();
    }
  });
});

const skip = (await redisAvailable()) ? false : `no Redis at ${REDIS_URL} (start one, or run .ci/run)`;

describe('Sessions on Redis: caps per caller, refusal at sessions.maxSessions', { skip }, () => {
  const prefix = `mcp-test:sessions:${randomBytes(4).toString('hex')}:`;
  let redis: Redis;
  before(() => {
    redis = new Redis(REDIS_URL);
  });
  after(async () => {
    // The module wraps a prefix without a hash tag in one: {<prefix>a:}…
    const keys = (await redis.keys(`{${prefix}*`)) as string[];
    if (keys.length) await redis.del(...keys);
    await redis.quit();
  });

  it('a flood from one address ends only its own sessions, and a full server refuses with 503', async () => {
    const running = await start({
      sessions: { maxSessions: 5 },
      limits: { sessionsPerAddress: 3 },
      redis: { url: REDIS_URL, keyPrefix: `${prefix}a:` },
    });
    try {
      const victim = { ip: '10.6.0.1' };
      const attacker = { ip: '10.6.0.2' };
      const kept = await initialize(running.url, victim);
      const stream = await openGetStream(running.url, attacker, await initialize(running.url, attacker));
      const flood: string[] = [];
      for (let i = 0; i < 8; i++) flood.push(await initialize(running.url, attacker));
      assert.equal(
        await pingStatus(running.url, victim, kept),
        200,
        "another address's flood must not end this session",
      );
      assert.equal(await pingStatus(running.url, attacker, flood[0]), 404);
      for (const id of flood.slice(-3)) assert.equal(await pingStatus(running.url, attacker, id), 200);
      await stream.ended;
      // 1 + 3 sessions held; one more address fills the server, the next is refused.
      await initialize(running.url, { ip: '10.6.0.3' });
      const refused = await rpc(running.url, initializeBody(), { headers: { 'X-Forwarded-For': '10.6.0.4' } });
      assert.equal(refused.status, 503, refused.text);
      assert.match(refused.headers.get('retry-after') ?? '', /^\d+$/);
      assert.match((refused.json as { error: { message: string } }).error.message, /sessions\.maxSessions/);
      assert.equal(await pingStatus(running.url, victim, kept), 200);
    } finally {
      await running.close();
    }
  });
});

describe('Sessions: an IPv6 host counts as its /64 for limits.sessionsPerAddress', () => {
  let running: RunningApp;
  before(async () => {
    running = await start({ limits: { sessionsPerAddress: 2 } });
  });
  after(() => running.close());

  it('one host rotating through the addresses of its /64 still holds at most the cap', async () => {
    const neighbour = { ip: '2001:db8:0:1::7' };
    const kept = await initialize(running.url, neighbour);
    const flood: string[] = [];
    for (let i = 1; i <= 5; i++) flood.push(await initialize(running.url, { ip: `2001:db8::${i.toString(16)}` }));
    assert.equal(
      await pingStatus(running.url, { ip: '2001:db8::1' }, flood[0]!),
      404,
      'the /64 is one caller: its oldest session ended',
    );
    assert.equal(await pingStatus(running.url, { ip: '2001:db8::5' }, flood[4]!), 200);
    assert.equal(await pingStatus(running.url, neighbour, kept), 200, 'another /64 is another caller');
  });
});
