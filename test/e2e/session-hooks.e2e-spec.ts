/**
 * ISSUE-20 items 3 and 4: `sessions.onSession` seeds per-session state from the connection,
 * tools read and write it through `ctx.state()`, the state follows the session to a second
 * instance on Redis, `onSessionClose` runs on DELETE, idle expiry, eviction and admin close
 * (with the reason), and the admin view lists sessions across instances without their state.
 * Every wait is for the hook's own event, never for time.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { EventEmitter } from 'node:events';
import { after, before, describe, it } from 'node:test';
import {
  Injectable,
  Module,
  UseGuards,
  type CanActivate,
  type DynamicModule,
  type ExecutionContext,
} from '@nestjs/common';
import { IsString } from 'class-validator';
import {
  Args,
  Ctx,
  McpContext,
  McpError,
  McpModule,
  Tool,
  type McpModuleOptions,
  type McpModuleForRootOptions,
} from 'nestjs-model-context';
import { McpSessionAdmin, type McpSessionClosed, type McpSessionConnection } from 'nestjs-model-context/sessions';
import { startApp, type RunningApp } from '../utils/app.js';
import { modernRpc, rpc } from '../utils/clients.js';
import { clearRedisPrefix, REDIS_URL, redisAvailable } from '../utils/redis.js';
import { nextEvent } from '../utils/wait.js';

type Json = Record<string, any>;
const VERSION = '2025-11-25';

interface Cart {
  tenant: string;
  client: string;
  items: string[];
}

class ItemDto {
  @IsString()
  item!: string;
}

@Injectable()
class CartTools {
  @Tool({ description: 'Adds an item to the session cart.' })
  async add(@Args() { item }: ItemDto, @Ctx() ctx: McpContext): Promise<string> {
    const cart = ctx.state<Cart>();
    await cart.update((c) => ({ ...c, items: [...c.items, item] }));
    return JSON.stringify(cart.get());
  }

  @Tool({ description: 'The session cart.' })
  cart(@Ctx() ctx: McpContext): string {
    const state = ctx.state<Cart>();
    return JSON.stringify({ ...state.get(), persistent: state.persistent });
  }

  @Tool({ description: 'Tries to store more than the state bound.' })
  async hoard(@Ctx() ctx: McpContext): Promise<string> {
    await ctx.state<Cart>().update((c) => ({ ...c, items: [...c.items, 'x'.repeat(4096)] }));
    return 'stored';
  }
}

/** Every hook call, as events the tests wait on. */
class HookLog extends EventEmitter {
  readonly opened: McpSessionConnection[] = [];
  readonly closed: McpSessionClosed[] = [];

  options(): Pick<NonNullable<McpModuleOptions['sessions']>, 'onSession' | 'onSessionClose'> {
    return {
      onSession: (connection) => {
        this.opened.push(connection);
        const tenant = connection.header('x-tenant');
        if (tenant === 'banned')
          throw new McpError(-32001, 'Forbidden: tenant "banned" may not open sessions.', undefined, 403);
        return { tenant: tenant ?? 'none', client: connection.clientInfo?.name ?? 'unknown', items: [] };
      },
      onSessionClose: (closed) => {
        this.closed.push(closed);
        this.emit('closed', closed);
      },
    };
  }

  /** The next close of `sessionId`, guarded. */
  async closeOf(sessionId: string, what: string): Promise<McpSessionClosed> {
    const done = this.closed.find((c) => c.sessionId === sessionId);
    if (done) return done;
    for (;;) {
      const [closed] = (await nextEvent(this, 'closed', what)) as [McpSessionClosed];
      if (closed.sessionId === sessionId) return closed;
    }
  }
}

class AdminGuard implements CanActivate {
  canActivate(context: ExecutionContext): boolean {
    return (
      context.switchToHttp().getRequest<{ headers: Record<string, string | undefined> }>().headers['x-admin'] === 'yes'
    );
  }
}

function appModule(options: Partial<McpModuleForRootOptions>): DynamicModule {
  @Module({
    imports: [McpModule.forRoot({ name: 'session-hooks', version: '1.0.0', ...options } as McpModuleForRootOptions)],
    providers: [CartTools],
  })
  class SessionHooksApp {}
  return { module: SessionHooksApp };
}

async function start(options: Partial<McpModuleForRootOptions>): Promise<RunningApp> {
  return startApp(appModule(options), {
    configure: (app) => {
      (app.getHttpAdapter().getInstance() as { set(name: string, value: unknown): void }).set('trust proxy', true);
    },
  });
}

let nextId = 1;

async function initialize(
  url: string,
  headers: Record<string, string> = {},
  clientName = 'cart-client',
): Promise<string> {
  const answer = await rpc(
    url,
    {
      jsonrpc: '2.0',
      id: nextId++,
      method: 'initialize',
      params: { protocolVersion: VERSION, capabilities: {}, clientInfo: { name: clientName, version: '1.2.3' } },
    },
    { headers },
  );
  assert.equal(answer.status, 200, answer.text);
  const id = answer.headers.get('mcp-session-id');
  assert.ok(id, 'initialize answers an Mcp-Session-Id');
  return id;
}

async function call(
  url: string,
  sessionId: string,
  name: string,
  args: Json = {},
  headers: Record<string, string> = {},
): Promise<Json> {
  const answer = await rpc(
    url,
    { jsonrpc: '2.0', id: nextId++, method: 'tools/call', params: { name, arguments: args } },
    { sessionId, headers: { 'MCP-Protocol-Version': VERSION, ...headers } },
  );
  assert.equal(answer.status, 200, answer.text);
  const message = (answer.json ?? answer.events?.find((e) => (e.data as Json)?.id !== undefined)?.data) as Json;
  return message;
}

const textOf = (message: Json): string => message.result.content[0].text;

describe('session hooks: state seeded from the connection, close hook on DELETE, idle expiry and eviction (in memory)', () => {
  const log = new HookLog();
  let app: RunningApp;

  before(async () => {
    app = await start({
      sessions: { idleTtlMs: 60_000, ...log.options() },
      limits: { sessionsPerAddress: 2, sessionStateBytes: 2048 },
    });
  });
  after(() => app?.close());

  it('seeds the state from headers and clientInfo, and tools read and write it', async () => {
    const sessionId = await initialize(app.url, { 'X-Tenant': 'acme', 'X-Forwarded-For': '10.0.0.1' });
    const opened = log.opened.find((c) => c.sessionId === sessionId)!;
    assert.equal(opened.era, 'legacy');
    assert.equal(opened.protocolVersion, VERSION);
    assert.deepEqual(opened.clientInfo, { name: 'cart-client', version: '1.2.3' });
    assert.equal(
      JSON.parse(textOf(await call(app.url, sessionId, 'add', { item: 'apple' }, { 'X-Forwarded-For': '10.0.0.1' })))
        .items[0],
      'apple',
    );
    await call(app.url, sessionId, 'add', { item: 'pear' }, { 'X-Forwarded-For': '10.0.0.1' });
    assert.deepEqual(
      JSON.parse(textOf(await call(app.url, sessionId, 'cart', {}, { 'X-Forwarded-For': '10.0.0.1' }))),
      {
        tenant: 'acme',
        client: 'cart-client',
        items: ['apple', 'pear'],
        persistent: true,
      },
    );
  });

  it('refuses a write over limits.sessionStateBytes with a message naming the limit, and keeps the state as it was', async () => {
    const headers = { 'X-Forwarded-For': '10.0.0.2' };
    const sessionId = await initialize(app.url, headers);
    await call(app.url, sessionId, 'add', { item: 'kept' }, headers);
    const refused = await call(app.url, sessionId, 'hoard', {}, headers);
    const message = refused.error?.message ?? textOf(refused);
    assert.match(message, /limits\.sessionStateBytes/);
    assert.deepEqual(JSON.parse(textOf(await call(app.url, sessionId, 'cart', {}, headers))).items, ['kept']);
  });

  it('lets the hook refuse a connection with its McpError', async () => {
    const answer = await rpc(
      app.url,
      {
        jsonrpc: '2.0',
        id: nextId++,
        method: 'initialize',
        params: { protocolVersion: VERSION, capabilities: {}, clientInfo: { name: 'x', version: '1' } },
      },
      { headers: { 'X-Tenant': 'banned', 'X-Forwarded-For': '10.0.0.3' } },
    );
    assert.equal(answer.status, 403);
    assert.equal(answer.headers.get('mcp-session-id'), null);
    assert.match((answer.json as Json).error.message, /tenant "banned"/);
  });

  it('runs the close hook on DELETE with reason "deleted" and the last state', async () => {
    const headers = { 'X-Forwarded-For': '10.0.1.1', 'X-Tenant': 'del' };
    const sessionId = await initialize(app.url, headers);
    await call(app.url, sessionId, 'add', { item: 'last' }, headers);
    const closing = log.closeOf(sessionId, 'the close hook after DELETE');
    const answer = await rpc(app.url, undefined, {
      httpMethod: 'DELETE',
      sessionId,
      headers: { ...headers, 'MCP-Protocol-Version': VERSION },
    });
    assert.equal(answer.status, 200);
    const closed = await closing;
    assert.equal(closed.reason, 'deleted');
    assert.deepEqual(closed.session?.state, { tenant: 'del', client: 'cart-client', items: ['last'] });
    assert.equal(log.closed.filter((c) => c.sessionId === sessionId).length, 1, 'once');
  });

  it('runs the close hook on eviction: the owner\'s oldest session beyond limits.sessionsPerAddress, reason "evicted"', async () => {
    const headers = { 'X-Forwarded-For': '10.0.2.1' };
    const first = await initialize(app.url, headers);
    await initialize(app.url, headers);
    const closing = log.closeOf(first, 'the close hook of the evicted session');
    await initialize(app.url, headers);
    const closed = await closing;
    assert.equal(closed.reason, 'evicted');
    assert.equal(closed.session?.id, first);
    const ping = await rpc(
      app.url,
      { jsonrpc: '2.0', id: nextId++, method: 'ping' },
      { sessionId: first, headers: { ...headers, 'MCP-Protocol-Version': VERSION } },
    );
    assert.equal(ping.status, 404, 'the evicted session is gone');
  });
});

describe('session hooks: idle expiry runs the close hook with reason "expired"', () => {
  const log = new HookLog();
  let app: RunningApp;

  before(async () => {
    // A tiny idle TTL: the store's sweep ends the session, and the hook's event is what the test waits on.
    app = await start({ sessions: { idleTtlMs: 50, ...log.options() } });
  });
  after(() => app?.close());

  it('ends an idle session by itself and tells the hook why', async () => {
    const sessionId = await initialize(app.url, { 'X-Tenant': 'idle' });
    const closed = await log.closeOf(sessionId, 'the close hook of the idle session');
    assert.equal(closed.reason, 'expired');
    assert.equal(closed.session?.state?.tenant, 'idle');
    const ping = await rpc(
      app.url,
      { jsonrpc: '2.0', id: nextId++, method: 'ping' },
      { sessionId, headers: { 'MCP-Protocol-Version': VERSION } },
    );
    assert.equal(ping.status, 404);
  });
});

const skip = (await redisAvailable()) ? false : `no Redis at ${REDIS_URL} (start one, or run .ci/run)`;

describe('session hooks: Redis idle expiry runs the close hook once, on one of two instances', { skip }, () => {
  const prefix = `mcp-hooks-idle:${randomBytes(6).toString('hex')}:`;
  // The module wraps a prefix without a hash tag in braces: the index the instances sweep.
  const index = `{${prefix}}sessions`;
  const log = new HookLog();
  const where = new Map<McpSessionClosed, 'A' | 'B'>();
  let a: RunningApp;
  let b: RunningApp;
  let redis: import('ioredis').Redis;

  /** The hooks of one instance: one log for both, each close marked with the instance that ran it. */
  const hooksOn = (instance: 'A' | 'B') => {
    const hooks = log.options();
    return {
      ...hooks,
      onSessionClose: (closed: McpSessionClosed) => (where.set(closed, instance), hooks.onSessionClose!(closed)),
    };
  };

  before(async () => {
    const { Redis } = await import('ioredis');
    redis = new Redis(REDIS_URL);
    const redisOption = { url: REDIS_URL, keyPrefix: prefix };
    a = await start({ redis: redisOption, sessions: { idleTtlMs: 200, ...hooksOn('A') } });
    b = await start({ redis: redisOption, sessions: { idleTtlMs: 200, ...hooksOn('B') } });
  });
  after(async () => {
    await Promise.all([a?.close(), b?.close()]);
    await clearRedisPrefix(prefix);
    redis?.disconnect();
  });

  it('reports a session Redis expired with reason "expired", exactly once across both instances, and cleans its index entry', async () => {
    const sessionId = await initialize(a.url, { 'X-Tenant': 'idle-redis' });
    const closed = await log.closeOf(sessionId, 'the close hook of the session Redis expired');
    assert.equal(closed.reason, 'expired');
    assert.equal(closed.session, undefined, 'the state expired with the key');
    assert.ok(where.has(closed));
    assert.equal(await redis.zscore(index, `-:${sessionId}`), null, 'the index entry is gone with the claim');

    // "Exactly once" needs both instances to have swept after that close: an entry planted now
    // (an index entry whose session key does not exist, as an expired session leaves) is
    // claimed by a sweep that starts after it, so once each instance has claimed one, each has
    // swept at least once since, and any second report of the session would have come.
    const swept = new Set<'A' | 'B'>();
    for (let i = 0; swept.size < 2; i++) {
      assert.ok(i < 200, `both instances claim planted entries (so far: ${[...swept].join(', ') || 'none'})`);
      const probe = `probe-${i}`;
      await redis.zadd(index, 0, `-:${probe}`);
      const claimed = await log.closeOf(probe, `the sweep that claims planted entry ${probe}`);
      assert.equal(claimed.reason, 'expired');
      swept.add(where.get(claimed)!);
    }
    assert.equal(
      log.closed.filter((c) => c.sessionId === sessionId).length,
      1,
      'one close hook run across both instances',
    );

    for (const url of [a.url, b.url]) {
      const ping = await rpc(
        url,
        { jsonrpc: '2.0', id: nextId++, method: 'ping' },
        { sessionId, headers: { 'MCP-Protocol-Version': VERSION } },
      );
      assert.equal(ping.status, 404, 'the expired session is gone on both instances');
    }
  });
});

describe('session hooks on 2026-07-28: the hook runs per request, the state lasts for that request', () => {
  const log = new HookLog();
  let app: RunningApp;

  before(async () => {
    app = await start({ sessions: log.options() });
  });
  after(() => app?.close());

  it('seeds every request afresh and reports the state as not persistent', async () => {
    const before = log.opened.length;
    for (let i = 0; i < 2; i++) {
      const answer = await modernRpc(
        app.url,
        'tools/call',
        { name: 'add', arguments: { item: `only-${i}` } },
        { headers: { 'X-Tenant': 'modern' } },
      );
      assert.equal(answer.status, 200, answer.text);
      const message = (answer.json ?? answer.events?.at(-1)?.data) as Json;
      assert.deepEqual(
        JSON.parse(message.result.content[0].text).items,
        [`only-${i}`],
        'nothing carried over from the previous request',
      );
    }
    const cart = await modernRpc(
      app.url,
      'tools/call',
      { name: 'cart', arguments: {} },
      { headers: { 'X-Tenant': 'modern' } },
    );
    const state = JSON.parse(((cart.json ?? cart.events?.at(-1)?.data) as Json).result.content[0].text);
    assert.equal(state.persistent, false);
    assert.equal(state.tenant, 'modern');
    const opened = log.opened.slice(before);
    assert.equal(opened.length, 3, 'one hook run per request');
    assert.ok(opened.every((c) => c.era === 'modern' && c.sessionId === undefined));
  });
});

describe('session hooks on a stateless legacy endpoint: the hook runs per request', () => {
  const log = new HookLog();
  let app: RunningApp;

  before(async () => {
    app = await start({ sessions: { mode: 'stateless', ...log.options() } });
  });
  after(() => app?.close());

  it('seeds each request, since there is no session to keep the state in', async () => {
    const headers = { 'X-Tenant': 'stateless', 'MCP-Protocol-Version': VERSION };
    const send = (name: string, args: Json) =>
      rpc(
        app.url,
        { jsonrpc: '2.0', id: nextId++, method: 'tools/call', params: { name, arguments: args } },
        { headers },
      );
    assert.equal((await send('add', { item: 'one' })).status, 200);
    const cart = JSON.parse(textOf((await send('cart', {})).json as Json));
    assert.deepEqual(cart, { tenant: 'stateless', client: 'unknown', items: [], persistent: false });
    assert.equal(log.opened.length, 2);
    assert.ok(log.opened.every((c) => c.era === 'legacy' && c.sessionId === undefined));
  });
});

describe(
  'session hooks on Redis: the state follows the session to a second instance; the admin view spans both',
  { skip },
  () => {
    const prefix = `mcp-hooks:${randomBytes(6).toString('hex')}:`;
    const logA = new HookLog();
    const logB = new HookLog();
    let a: RunningApp;
    let b: RunningApp;

    before(async () => {
      const common = {
        redis: { url: REDIS_URL, keyPrefix: prefix },
        limits: { sessionsPerAddress: 2 },
        adminRoutes: { decorators: [UseGuards(AdminGuard)] },
      };
      a = await start({ ...common, sessions: logA.options() });
      b = await start({ ...common, sessions: logB.options() });
    });
    after(async () => {
      await Promise.all([a?.close(), b?.close()]);
      await clearRedisPrefix(prefix);
    });

    it('writes on A and on B land in one state, read back on either', async () => {
      const headers = { 'X-Tenant': 'shared', 'X-Forwarded-For': '10.1.0.1' };
      const sessionId = await initialize(a.url, headers);
      await call(a.url, sessionId, 'add', { item: 'from-a' }, headers);
      await call(b.url, sessionId, 'add', { item: 'from-b' }, headers);
      await call(a.url, sessionId, 'add', { item: 'from-a-again' }, headers);
      for (const url of [a.url, b.url]) {
        assert.deepEqual(JSON.parse(textOf(await call(url, sessionId, 'cart', {}, headers))), {
          tenant: 'shared',
          client: 'cart-client',
          items: ['from-a', 'from-b', 'from-a-again'],
          persistent: true,
        });
      }
      assert.equal(logB.opened.length, 0, 'the hook ran once, where the session opened');
    });

    it('lists the session from the other instance, without its state, and closes it from there', async () => {
      const headers = { 'X-Tenant': 'tenant-hidden', 'X-Forwarded-For': '10.1.0.2' };
      const sessionId = await initialize(a.url, headers, 'admin-watched');
      await call(a.url, sessionId, 'add', { item: 'secret-item' }, headers);

      const admin = b.app.get(McpSessionAdmin);
      const listed = (await admin.list()).find((s) => s.id === sessionId);
      assert.ok(listed, 'B lists a session opened on A');
      assert.equal(listed.protocolVersion, VERSION);
      assert.deepEqual(listed.clientInfo, { name: 'admin-watched', version: '1.2.3' });
      assert.ok(typeof listed.ageMs === 'number' && listed.ageMs >= 0);
      assert.equal(listed.getStream, false);
      assert.equal(typeof listed.openStreams, 'number');

      const refused = await fetch(`${b.base}/mcp-admin/sessions`);
      assert.equal(refused.status, 403, "the app's guard protects the admin routes");
      const routed = await fetch(`${b.base}/mcp-admin/sessions/${encodeURIComponent(sessionId)}`, {
        headers: { 'X-Admin': 'yes' },
      });
      assert.equal(routed.status, 200);
      const body = await routed.text();
      assert.equal((JSON.parse(body) as Json).id, sessionId);
      assert.doesNotMatch(body, /secret-item|tenant-hidden|"state"/, 'never the session state');
      const all = (await (await fetch(`${b.base}/mcp-admin/sessions`, { headers: { 'X-Admin': 'yes' } })).json()) as {
        sessions: Json[];
      };
      assert.ok(all.sessions.some((s) => s.id === sessionId));

      const closing = logB.closeOf(sessionId, 'the close hook after an admin close');
      assert.equal(await admin.close(sessionId), true);
      const closed = await closing;
      assert.equal(closed.reason, 'closed');
      assert.deepEqual(closed.session?.state?.items, ['secret-item']);
      const ping = await rpc(
        a.url,
        { jsonrpc: '2.0', id: nextId++, method: 'ping' },
        { sessionId, headers: { ...headers, 'MCP-Protocol-Version': VERSION } },
      );
      assert.equal(ping.status, 404, 'closed on B, gone on A');
      assert.equal(await admin.close(sessionId), false);
    });

    it('runs the close hook on a Redis eviction, on the instance whose initialize evicted', async () => {
      const headers = { 'X-Forwarded-For': '10.1.0.3' };
      const first = await initialize(a.url, headers);
      await initialize(b.url, headers);
      const closing = logB.closeOf(first, 'the close hook of the session evicted through Redis');
      await initialize(b.url, headers);
      const closed = await closing;
      assert.equal(closed.reason, 'evicted');
    });
  },
);
