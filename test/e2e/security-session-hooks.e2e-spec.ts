/**
 * Session hooks and session state from the attacker's side. A connection `sessions.onSession`
 * refuses is refused on every transport that keeps a session (Streamable HTTP on both eras, and the
 * 2024-11-05 HTTP+SSE transport), and what it seeds is what every tool reads there. One session's
 * state is never another's (two anonymous clients, two principals, concurrent 2026-07-28
 * requests); a state write that races the session's end brings nothing back; a hook that throws
 * leaks nothing, and one that hangs holds up no one else; with Redis, concurrent writes of one
 * session keep each other's fields, and a Redis outage fails the write, not the process.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { Injectable, Module, type DynamicModule } from '@nestjs/common';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { SSEClientTransport } from '@modelcontextprotocol/sdk/client/sse.js';
import { IsString } from 'class-validator';
import {
  Args,
  Ctx,
  McpContext,
  McpError,
  McpModule,
  Resource,
  Tool,
  type McpModuleForRootOptions,
  type McpPrincipal,
} from 'nestjs-model-context';
import { McpSessionAdmin, type McpSessionClosed } from 'nestjs-model-context/sessions';
import { TaskGates } from '../fixtures/tasks.module.js';
import { startApp, type RunningApp } from '../utils/app.js';
import { modernRpc, rpc } from '../utils/clients.js';
import { openSession } from '../utils/paths.js';
import { REDIS_URL, clearRedisPrefix, redisAvailable } from '../utils/redis.js';
import { RedisChild } from '../utils/redis-server.js';
import { Watched, guard } from '../utils/wait.js';

type Json = Record<string, any>;
const VERSION = '2025-11-25';
const SECRET = 'postgres://app:HOOK-SECRET@db';

class ValueDto {
  @IsString()
  value!: string;
}

/** How each late write of `later` ended, by its value. */
const writes = Object.assign(new Map<string, string>(), { changed: new Watched() });
const written = (value: string): Promise<string> =>
  writes.changed.until(() => writes.has(value), `the write of ${value} settling`).then(() => writes.get(value)!);

@Injectable()
class StateTools {
  constructor(private readonly gates: TaskGates) {}

  @Tool({ description: 'The session state as the tool reads it.' })
  whoami(@Ctx() ctx: McpContext): string {
    const state = ctx.state();
    return JSON.stringify({ ...state.get(), persistent: state.persistent });
  }

  @Tool({ description: 'Stores a value in the session state.' })
  async remember(@Args() { value }: ValueDto, @Ctx() ctx: McpContext): Promise<string> {
    await ctx.state().update((state) => ({ ...state, value }));
    return JSON.stringify(ctx.state().get());
  }

  @Tool({ description: 'Waits for the test, then stores a value: a write that races whatever happened meanwhile.' })
  async later(@Args() { value }: ValueDto, @Ctx() ctx: McpContext): Promise<string> {
    await this.gates.pass(value, new AbortController().signal);
    let outcome = 'stored';
    try {
      await ctx.state().update((state) => ({ ...state, value }));
    } catch (error) {
      outcome = `refused: ${(error as Error).message}`;
    }
    writes.set(value, outcome);
    writes.changed.notify();
    return outcome;
  }

  @Resource({ uri: 'notes://today', description: 'Today.' })
  today(): string {
    return 'today';
  }
}

/** Every close the hook saw, to wait on. */
class Closes {
  readonly seen: McpSessionClosed[] = [];
  readonly changed = new Watched();

  push(closed: McpSessionClosed): void {
    this.seen.push(closed);
    this.changed.notify();
  }

  of(sessionId: string | undefined): Promise<McpSessionClosed> {
    return this.changed
      .until(() => this.seen.some((c) => c.sessionId === sessionId), `the close hook of ${sessionId}`)
      .then(() => this.seen.find((c) => c.sessionId === sessionId)!);
  }
}

function hooksApp(options: Partial<McpModuleForRootOptions>): DynamicModule {
  @Module({
    imports: [McpModule.forRoot({ name: 'abuse-hooks', version: '1.0.0', ...options } as McpModuleForRootOptions)],
    providers: [TaskGates, StateTools],
  })
  class HooksAbuseApp {}
  return { module: HooksAbuseApp };
}

/** Refuses tenant "banned", throws a secret-laden error for tenant "broken", seeds the tenant otherwise. */
function tenantHooks(
  closes: Closes,
): Pick<NonNullable<McpModuleForRootOptions['sessions']>, 'onSession' | 'onSessionClose'> {
  return {
    onSession: ({ header, principal }) => {
      const tenant = header('x-tenant');
      if (tenant === 'banned')
        throw new McpError(-32001, 'Forbidden: tenant "banned" may not connect.', undefined, 403);
      if (tenant === 'broken') throw new Error(`could not reach ${SECRET}`);
      return { tenant: tenant ?? 'none', principal: principal?.id ?? 'anonymous' };
    },
    onSessionClose: (closed) => closes.push(closed),
  };
}

let nextId = 1;

async function toolText(
  url: string,
  sessionId: string,
  name: string,
  args: Json = {},
  headers: Record<string, string> = {},
): Promise<string> {
  const answer = await rpc(
    url,
    { jsonrpc: '2.0', id: nextId++, method: 'tools/call', params: { name, arguments: args } },
    { sessionId, headers: { 'MCP-Protocol-Version': VERSION, ...headers } },
  );
  const message = (answer.json ?? answer.events?.find((e) => (e.data as Json)?.id !== undefined)?.data) as Json;
  return message?.result?.content?.[0]?.text ?? JSON.stringify(message ?? answer.text);
}

async function sseClient(
  base: string,
  headers: Record<string, string>,
): Promise<{ client: Client; transport: SSEClientTransport }> {
  const transport = new SSEClientTransport(new URL(`${base}/sse`), {
    requestInit: { headers },
    eventSourceInit: {
      fetch: (url, init) =>
        fetch(url, { ...init, headers: { ...(init?.headers as Record<string, string>), ...headers } }),
    },
  });
  const client = new Client({ name: 'abuse-sse', version: '1.0.0' });
  await client.connect(transport);
  return { client, transport };
}

describe('security: session hooks on the 2024-11-05 HTTP+SSE transport', () => {
  const closes = new Closes();
  let server: RunningApp;

  before(async () => {
    server = await startApp(hooksApp({ legacySse: true, sessions: tenantHooks(closes) }));
  });
  after(() => server.close());

  /** The error connecting gives; a connection that opens is closed and fails the test. */
  async function refusal(headers: Record<string, string>): Promise<Error> {
    const connected = await sseClient(server.base, headers).catch((error: Error) => error);
    if (!(connected instanceof Error)) {
      const read = await connected.client.callTool({ name: 'whoami', arguments: {} }).catch((error: Error) => error);
      await connected.client.close();
      assert.fail(`the connection opened, and a tool read ${JSON.stringify(read)}`);
    }
    return connected;
  }

  it('a connection onSession refuses on Streamable HTTP is refused on /sse too', async () => {
    assert.match((await refusal({ 'x-tenant': 'banned' })).message, /tenant "banned" may not connect/);
  });

  it('tools on /sse read the state onSession seeded, and the close hook runs when the stream ends', async () => {
    const { client } = await sseClient(server.base, { 'x-tenant': 'acme' });
    const read = (await client.callTool({ name: 'whoami', arguments: {} }).finally(() => client.close())) as Json;
    assert.deepEqual(JSON.parse(read.content[0].text), { tenant: 'acme', principal: 'anonymous', persistent: true });
    await closes.changed.until(
      () => closes.seen.some((c) => c.session?.state?.tenant === 'acme'),
      'the close hook of the /sse session',
    );
    assert.equal(closes.seen.find((c) => c.session?.state?.tenant === 'acme')?.reason, 'deleted');
  });

  it('a hook that throws leaks nothing on /sse', async () => {
    const error = await refusal({ 'x-tenant': 'broken' });
    assert.ok(!error.message.includes('HOOK-SECRET') && /internal error/i.test(error.message), error.message);
  });
});

describe('security: session state between callers (in memory)', () => {
  const closes = new Closes();
  const principals: Record<string, McpPrincipal> = { 'alice-token': { id: 'alice' }, 'bob-token': { id: 'bob' } };
  let server: RunningApp;
  let secured: RunningApp;

  before(async () => {
    server = await startApp(hooksApp({ sessions: tenantHooks(closes) }));
    secured = await startApp(
      hooksApp({
        sessions: tenantHooks(closes),
        auth: {
          resource: 'http://127.0.0.1/mcp',
          authorizationServers: ['https://auth.example.com'],
          verifyToken: (token) => principals[token] ?? null,
        },
      }),
    );
  });
  after(async () => {
    await server.close();
    await secured.close();
  });

  it('two anonymous clients and two principals each read only their own state', async () => {
    for (const [url, one, two] of [
      [server.url, { 'x-tenant': 'one' }, { 'x-tenant': 'two' }],
      [secured.url, { Authorization: 'Bearer alice-token' }, { Authorization: 'Bearer bob-token' }],
    ] as const) {
      const a = await openSession(url, VERSION, one);
      const b = await openSession(url, VERSION, two);
      await toolText(url, a, 'remember', { value: 'A-ONLY' }, one);
      await toolText(url, b, 'remember', { value: 'B-ONLY' }, two);
      assert.ok(!(await toolText(url, b, 'whoami', {}, two)).includes('A-ONLY'));
      assert.ok(!(await toolText(url, a, 'whoami', {}, one)).includes('B-ONLY'));
      if (url === server.url) continue;
      // Another principal holding the session id gets nothing of it (an anonymous session's id is its bearer).
      const crossed = await rpc(
        url,
        { jsonrpc: '2.0', id: nextId++, method: 'tools/call', params: { name: 'whoami', arguments: {} } },
        { sessionId: a, headers: { 'MCP-Protocol-Version': VERSION, ...two } },
      );
      assert.ok(!crossed.text.includes('A-ONLY'), crossed.text);
    }
  });

  it('concurrent 2026-07-28 requests each get their own state, seeded afresh', async () => {
    const answers = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        modernRpc(
          server.url,
          'tools/call',
          { name: 'remember', arguments: { value: `v${i}` } },
          { headers: { 'x-tenant': `t${i}` } },
        ),
      ),
    );
    answers.forEach((answer, i) =>
      assert.deepEqual(JSON.parse((answer.json as Json).result.content[0].text), {
        tenant: `t${i}`,
        principal: 'anonymous',
        value: `v${i}`,
      }),
    );
  });

  it('onSession answers over limits.sessionStateBytes refuse the connection and open no session', async () => {
    const small = await startApp(
      hooksApp({
        limits: { sessionStateBytes: 64 },
        sessions: { onSession: ({ header }) => ({ blob: header('x-blob') ?? '' }) },
      }),
    );
    try {
      const admin = small.app.get(McpSessionAdmin);
      const answer = await rpc(
        small.url,
        {
          jsonrpc: '2.0',
          id: 1,
          method: 'initialize',
          params: { protocolVersion: VERSION, capabilities: {}, clientInfo: { name: 'x', version: '1' } },
        },
        { headers: { 'x-blob': 'x'.repeat(200) } },
      );
      assert.equal(answer.headers.get('mcp-session-id'), null);
      assert.match(answer.text, /limits\.sessionStateBytes/);
      assert.deepEqual(await admin.list(), []);
      const modern = await modernRpc(
        small.url,
        'tools/call',
        { name: 'whoami', arguments: {} },
        { headers: { 'x-blob': 'x'.repeat(200) } },
      );
      assert.match(modern.text, /limits\.sessionStateBytes/);
    } finally {
      await small.close();
    }
  });

  it('a hook that throws leaks nothing on either era', async () => {
    const init = await rpc(
      server.url,
      {
        jsonrpc: '2.0',
        id: 1,
        method: 'initialize',
        params: { protocolVersion: VERSION, capabilities: {}, clientInfo: { name: 'x', version: '1' } },
      },
      { headers: { 'x-tenant': 'broken' } },
    );
    const modern = await modernRpc(
      server.url,
      'tools/call',
      { name: 'whoami', arguments: {} },
      { headers: { 'x-tenant': 'broken' } },
    );
    for (const answer of [init, modern]) {
      assert.ok(!answer.text.includes('HOOK-SECRET'), answer.text);
      assert.equal((answer.json as Json).error?.code, -32603, answer.text);
    }
  });

  it("a state write racing the session's end brings the session back nowhere, and the write says so", async () => {
    const gates = server.app.get(TaskGates);
    const admin = server.app.get(McpSessionAdmin);
    for (const end of ['DELETE', 'admin close'] as const) {
      const headers = { 'x-tenant': `race-${end}` };
      const sessionId = await openSession(server.url, VERSION, headers);
      const value = `late-${end.replace(' ', '-')}`;
      const writing = toolText(server.url, sessionId, 'later', { value }, headers);
      await guard(gates.hasStarted(value), 'the racing call starting');
      if (end === 'DELETE')
        await rpc(server.url, undefined, {
          httpMethod: 'DELETE',
          sessionId,
          headers: { 'MCP-Protocol-Version': VERSION },
        });
      else assert.equal(await admin.close(sessionId), true);
      const closed = await closes.of(sessionId);
      gates.open(value);
      assert.match(await written(value), /^refused: .*session/i, 'the write tells the tool its session ended');
      await writing.catch(() => undefined);
      assert.equal(closed.session?.state?.value, undefined, 'the close hook saw the state before the late write');
      assert.equal(await admin.find(sessionId), undefined, `${end}: the session stays ended`);
      const reuse = await rpc(
        server.url,
        { jsonrpc: '2.0', id: nextId++, method: 'tools/call', params: { name: 'whoami', arguments: {} } },
        { sessionId, headers: { 'MCP-Protocol-Version': VERSION, ...headers } },
      );
      assert.equal(reuse.status, 404, reuse.text);
    }
  });

  it('a hook that hangs holds up no other client, and its client can leave', async () => {
    let hung = 0;
    const waiting = new Watched();
    const slow = await startApp(
      hooksApp({
        sessions: {
          onSession: ({ header }) => {
            if (header('x-hang') !== '1') return { ok: true };
            hung++;
            waiting.notify();
            return new Promise(() => undefined);
          },
          onSessionClose: () => new Promise(() => undefined),
        },
      }),
    );
    try {
      const controller = new AbortController();
      const hanging = fetch(slow.url, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream', 'x-hang': '1' },
        body: JSON.stringify({
          jsonrpc: '2.0',
          id: 1,
          method: 'initialize',
          params: { protocolVersion: VERSION, capabilities: {}, clientInfo: { name: 'x', version: '1' } },
        }),
        signal: controller.signal,
      }).catch(() => undefined);
      await waiting.until(() => hung === 1, 'the hanging hook running');
      const other = await openSession(slow.url, VERSION);
      assert.deepEqual(JSON.parse(await toolText(slow.url, other, 'whoami')), { ok: true, persistent: true });
      // A close hook that never settles does not hold the DELETE either.
      const deleted = await rpc(slow.url, undefined, {
        httpMethod: 'DELETE',
        sessionId: other,
        headers: { 'MCP-Protocol-Version': VERSION },
      });
      assert.equal(deleted.status, 200);
      controller.abort();
      await hanging;
    } finally {
      await slow.close();
    }
  });
});

describe('security: session state with Redis', async () => {
  const available = await redisAvailable();
  const keyPrefix = `abuse-hooks-${randomBytes(4).toString('hex')}:`;
  let a: RunningApp;
  let b: RunningApp;

  before(async () => {
    if (!available) return;
    a = await startApp(hooksApp({ redis: { url: REDIS_URL, keyPrefix } }));
    b = await startApp(hooksApp({ redis: { url: REDIS_URL, keyPrefix } }));
  });
  after(async () => {
    await a?.close();
    await b?.close();
    if (available) await clearRedisPrefix(keyPrefix);
  });

  it(
    'a state write of a long call keeps a subscription the session made meanwhile on another instance',
    { skip: !available && 'Redis is not answering' },
    async () => {
      const gates = a.app.get(TaskGates);
      const sessionId = await openSession(a.url, VERSION);
      // The long call loads the session, then waits; meanwhile the session subscribes on B.
      const writing = toolText(a.url, sessionId, 'later', { value: 'from-the-long-call' });
      await guard(gates.hasStarted('from-the-long-call'), 'the long call starting');
      const subscribed = await rpc(
        b.url,
        { jsonrpc: '2.0', id: nextId++, method: 'resources/subscribe', params: { uri: 'notes://today' } },
        { sessionId, headers: { 'MCP-Protocol-Version': VERSION } },
      );
      assert.equal(subscribed.status, 200, subscribed.text);
      gates.open('from-the-long-call');
      assert.equal(await writing, 'stored');
      const { Redis } = await import('ioredis');
      const redis = new Redis(REDIS_URL);
      try {
        const stored = JSON.parse((await redis.get(`{${keyPrefix}}session:${sessionId}`))!) as Json;
        assert.deepEqual(stored.subscriptions, ['notes://today'], 'the subscription survived the state write');
        assert.equal(stored.state?.value, 'from-the-long-call');
      } finally {
        redis.disconnect();
      }
    },
  );
});

describe('security: session state while Redis hangs', () => {
  let redis: RedisChild;
  let server: RunningApp;
  const unhandled: unknown[] = [];
  const onUnhandled = (reason: unknown) => unhandled.push(reason);

  before(async () => {
    process.on('unhandledRejection', onUnhandled);
    redis = await RedisChild.start();
    server = await startApp(
      hooksApp({ redis: { url: redis.url, keyPrefix: 'abuse-hooks-stall:', commandTimeoutMs: 300 } }),
    );
  });
  after(async () => {
    process.off('unhandledRejection', onUnhandled);
    redis.resume();
    await server?.close().catch(() => undefined);
    await redis?.stop();
  });

  it('a write that Redis does not answer fails its call with 503 or a tool error, never the process', async () => {
    const gates = server.app.get(TaskGates);
    const sessionId = await openSession(server.url, VERSION);
    const writing = rpc(
      server.url,
      { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'later', arguments: { value: 'stalled' } } },
      { sessionId, headers: { 'MCP-Protocol-Version': VERSION } },
    );
    await guard(gates.hasStarted('stalled'), 'the call starting');
    redis.pause();
    gates.open('stalled');
    const answer = await writing;
    assert.ok(answer.status === 503 || /refused|unreachable|Redis/i.test(answer.text), answer.text);
    redis.resume();
    const after = await rpc(
      server.url,
      { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'whoami', arguments: {} } },
      { sessionId, headers: { 'MCP-Protocol-Version': VERSION } },
    );
    assert.equal(after.status, 200, after.text);
    assert.deepEqual(unhandled, []);
  });
});
