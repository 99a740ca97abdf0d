/**
 * Exposed routes and CQRS handlers, from the attacker's side (issues 26 items 3-5, 27 items 8, 9
 * and 12), on Express and on Fastify: a route tool is a real request through the app, carrying the
 * caller's credentials, so what protects the route over HTTP protects the tool; a command or query
 * is sent only past the guards its entry names, with the caller's fields filled by the server.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import {
  Controller,
  Get,
  Module,
  UseGuards,
  VersioningType,
  type CanActivate,
  type INestApplication,
} from '@nestjs/common';
import { APP_GUARD, NestFactory } from '@nestjs/core';
import { CqrsModule } from '@nestjs/cqrs';
import { McpModule, type McpModuleForRootOptions } from 'nestjs-model-context';
import {
  AdminUsersController,
  GlobalGuardModule,
  DEFAULT_EXPOSE,
  OrdersV1Controller,
  OrdersV2Controller,
  PingQuery,
  PlaceOrderCommand,
  SecurityExposeModule,
  SideEffects,
} from '../fixtures/security-expose.module.js';
import { startApp, type RunningApp, type TestPlatform } from '../utils/app.js';
import { connectModernClient, connectSdkClient, modernRpc, rpc } from '../utils/clients.js';
import { legacySession } from '../utils/legacy-session.js';
import { nextEvent } from '../utils/wait.js';

type Json = Record<string, any>;
const bearer = (token: string): Record<string, string> => ({ Authorization: `Bearer ${token}` });
const ALICE = bearer('alice-token');
const BOB = bearer('bob-token');
/** The module's own auth, for the tests of scopes: the same tokens, with scopes. */
const MODULE_AUTH: McpModuleForRootOptions['auth'] = {
  resource: 'http://127.0.0.1/api/mcp',
  authorizationServers: ['https://auth.example.com'],
  verifyToken: (token) =>
    ({ 'alice-token': { id: 'alice', scopes: ['orders'] }, 'bob-token': { id: 'bob', scopes: ['orders', 'admin'] } })[
      token
    ] ?? null,
};

const ERAS = [
  { era: '2025-11-25', connect: (url: string, headers: Record<string, string>) => connectSdkClient(url, { headers }) },
  {
    era: '2026-07-28',
    connect: (url: string, headers: Record<string, string>) => connectModernClient(url, { headers }),
  },
] as const;

const textOf = (result: Json): string => (result.content as Json[]).map((c) => c.text).join('\n');

async function call(
  era: (typeof ERAS)[number],
  url: string,
  name: string,
  args: Json,
  headers: Record<string, string> = {},
): Promise<Json> {
  const connection = await era.connect(url, headers);
  try {
    return (await connection.client.callTool({ name, arguments: args })) as Json;
  } finally {
    await connection.close();
  }
}

async function listTools(url: string, headers: Record<string, string> = {}): Promise<Json[]> {
  const connection = await connectSdkClient(url, { headers });
  try {
    return (await connection.client.listTools()).tools as Json[];
  } finally {
    await connection.close();
  }
}

async function listNames(url: string, headers: Record<string, string> = {}): Promise<string[]> {
  return (await listTools(url, headers)).map((t) => t.name as string).sort();
}

function start(
  platform: TestPlatform,
  mcp: Partial<McpModuleForRootOptions> = {},
  versioning: 'uri' | 'header' = 'uri',
): Promise<RunningApp> {
  return startApp(SecurityExposeModule.register(mcp), {
    platform,
    path: 'api/mcp',
    configure: (app) => {
      app.setGlobalPrefix('api');
      app.enableVersioning(
        versioning === 'uri' ? { type: VersioningType.URI } : { type: VersioningType.HEADER, header: 'X-API-Version' },
      );
    },
  });
}

for (const platform of ['express', 'fastify'] as const) {
  describe(`exposed routes under attack (${platform})`, () => {
    let server: RunningApp;
    let effects: SideEffects;
    before(async () => {
      server = await start(platform);
      effects = server.app.get(SideEffects);
    });
    after(() => server.close());

    it('item 26.3: a route protected only by a Nest middleware refuses an anonymous tool call on both eras, as it answers 401 over HTTP', async () => {
      assert.equal((await fetch(`${server.base}/api/admin/users`)).status, 401);
      for (const era of ERAS) {
        const result = await call(era, server.url, 'list_users', {});
        assert.equal(result.isError, true, `${era.era}: ${textOf(result)}`);
        assert.equal(textOf(result), 'Admin API: a valid bearer token is required.');
        assert.doesNotMatch(JSON.stringify(result), /root@corp\.example/);
        const allowed = await call(era, server.url, 'list_users', {}, ALICE);
        assert.deepEqual(allowed.structuredContent, {
          users: ['root@corp.example', 'alice@corp.example'],
          seenBy: 'alice',
        });
      }
    });

    it("runs the app's own auth for each caller: two principals each get their own user, an anonymous one none", async () => {
      for (const era of ERAS) {
        assert.deepEqual((await call(era, server.url, 'me', {}, ALICE)).structuredContent, {
          sub: 'alice',
          roles: ['user'],
        });
        assert.deepEqual((await call(era, server.url, 'me', {}, BOB)).structuredContent, {
          sub: 'bob',
          roles: ['admin'],
        });
        const anonymous = await call(era, server.url, 'me', {});
        assert.equal(anonymous.isError, true);
        assert.equal(textOf(anonymous), 'A valid bearer token is required.');
        assert.equal((await call(era, server.url, 'me', {}, bearer('forged-token'))).isError, true);
      }
    });

    it('two anonymous clients: neither reaches a protected route, a public one answers both', async () => {
      const [one, two] = await Promise.all([connectModernClient(server.url), connectSdkClient(server.url)]);
      try {
        for (const connection of [one, two]) {
          const refused = (await connection.client.callTool({ name: 'get_user', arguments: { id: 'root' } })) as Json;
          assert.equal(refused.isError, true);
          assert.deepEqual(
            ((await connection.client.callTool({ name: 'echo', arguments: { id: 'x' } })) as Json).structuredContent,
            { id: 'x', viaMcp: true },
          );
        }
      } finally {
        await Promise.all([one.close(), two.close()]);
      }
      assert.ok(!effects.log.includes('get root'), 'the refused route never ran');
    });

    it("a 2025-03-26 batch: each call is its own request with the batch request's credentials; none without a token", async () => {
      const batch = [
        { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'get_user', arguments: { id: 'batch-1' } } },
        { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'me', arguments: {} } },
      ];
      const anonymous = await legacySession(server.url, 'batch-anonymous', { protocolVersion: '2025-03-26' });
      const refused = (await rpc(server.url, batch, { sessionId: anonymous })).json as Json[];
      assert.deepEqual(
        refused.map((r) => r.result.isError),
        [true, true],
      );
      assert.ok(!effects.log.includes('get batch-1'));
      const alice = await legacySession(server.url, 'batch-alice', { protocolVersion: '2025-03-26', headers: ALICE });
      const allowed = ((await rpc(server.url, batch, { sessionId: alice, headers: ALICE })).json as Json[]).sort(
        (a, b) => a.id - b.id,
      );
      assert.deepEqual(
        allowed.map((r) => r.result.structuredContent),
        [
          { id: 'batch-1', email: 'batch-1@corp.example' },
          { sub: 'alice', roles: ['user'] },
        ],
      );
    });

    it('the task path: a route tool is no task; a call with a "task" parameter is the same request and the same refusal, and creates no task', async () => {
      const sessionId = await legacySession(server.url, 'tasks-anonymous');
      const headers = { 'MCP-Protocol-Version': '2025-11-25' };
      const answer = (
        await rpc(
          server.url,
          {
            jsonrpc: '2.0',
            id: 't',
            method: 'tools/call',
            params: { name: 'get_user', arguments: { id: 'task-1' }, task: { ttl: 60_000 } },
          },
          { sessionId, headers },
        )
      ).json as Json;
      assert.equal(answer.result.isError, true, JSON.stringify(answer));
      assert.equal(answer.result.task, undefined);
      assert.ok(!effects.log.includes('get task-1'));
    });

    it('a cancelled call ends its injected request; the route finishing later harms nothing, and the server goes on', async () => {
      const connection = await connectSdkClient(server.url);
      try {
        const abort = new AbortController();
        const started = nextEvent(effects.events, 'slow', 'the slow route started');
        const pending = connection.client.callTool({ name: 'slow', arguments: {} }, undefined, {
          signal: abort.signal,
        });
        await started;
        abort.abort();
        await assert.rejects(pending, /abort/i);
        const done = nextEvent(effects.events, 'slow-done', 'the slow route answered');
        effects.release();
        await done;
        assert.deepEqual(
          ((await connection.client.callTool({ name: 'echo', arguments: { id: 'after' } })) as Json).structuredContent,
          { id: 'after', viaMcp: true },
        );
      } finally {
        await connection.close();
      }
    });

    it('a filter that swallows an error: the tool gets exactly the HTTP answer (200 {"ok":false}), nothing more', async () => {
      const http = await fetch(`${server.base}/api/public/swallowed`);
      assert.equal(http.status, 200);
      const body = await http.json();
      for (const era of ERAS) assert.deepEqual((await call(era, server.url, 'swallowed', {})).structuredContent, body);
    });

    it("what errors leak: a route failing with a secret in its message gives the app's 500 body, not the message", async () => {
      for (const era of ERAS) {
        const result = await call(era, server.url, 'boom', {});
        assert.equal(result.isError, true);
        assert.equal(textOf(result), 'Internal server error');
        assert.doesNotMatch(JSON.stringify(result), /SECRET|postgres/);
      }
    });

    it('item 26.4: an exclude selector in the form the tool description prints hides the route: not listed, not callable, never run', async () => {
      const names = await listNames(server.url, BOB);
      assert.ok(names.includes('get_user') && !names.includes('remove'), names.join(', '));
      const tools = await listTools(server.url);
      assert.match(
        tools.find((t) => t.name === 'get_user')!.description!,
        /^GET \/api\/admin\/users\/:id \(AdminUsersController\.get\)\.$/,
      );
      const answer = (
        await modernRpc(server.url, 'tools/call', { name: 'remove', arguments: { id: 'root' } }, { headers: BOB })
      ).json as Json;
      assert.match(answer.error.message, /Unknown tool "remove"/);
      assert.ok(!effects.log.includes('delete root'));
    });

    it('a tool reaches its route and no other: method-override headers, dot segments and empty path parameters are refused or ignored', async () => {
      const overridden = await call(
        ERAS[0],
        server.url,
        'get_user',
        { id: 'override' },
        { ...BOB, 'X-HTTP-Method-Override': 'DELETE' },
      );
      assert.deepEqual(overridden.structuredContent, { id: 'override', email: 'override@corp.example' });
      assert.ok(!effects.log.includes('delete override'), 'the DELETE route never ran');
      for (const id of ['..', '.', '']) {
        const result = await call(ERAS[1], server.url, 'get_user', { id }, BOB);
        assert.equal(result.isError, true, `id ${JSON.stringify(id)}`);
        assert.match(textOf(result), /path parameter "id" of GET \/api\/admin\/users\/:id cannot be/);
      }
      assert.deepEqual((await call(ERAS[1], server.url, 'echo', { id: '../admin/users' })).structuredContent, {
        id: '../admin/users',
        viaMcp: true,
      });
      assert.deepEqual(await (await fetch(`${server.base}/api/public/echo/x`)).json(), { id: 'x', viaMcp: false });
    });

    it('item 27.12: versioned routes: each tool calls its own version, its description names it, and a caller-sent version changes nothing', async () => {
      const tools = await listTools(server.url);
      assert.equal(
        tools.find((t) => t.name === 'list')!.description,
        'GET /api/v1/orders (OrdersV1Controller.list, API version 1).',
      );
      assert.equal(
        tools.find((t) => t.name === 'list_v2')!.description,
        'GET /api/v2/orders (OrdersV2Controller.listV2, API version 2).',
      );
      for (const era of ERAS) {
        assert.deepEqual((await call(era, server.url, 'list', {}, { 'X-API-Version': '2' })).structuredContent, {
          version: 'v1',
        });
        assert.deepEqual((await call(era, server.url, 'list_v2', {})).structuredContent, { version: 'v2' });
      }
    });

    it('item 26.5: an exposed command runs only past the guard its entry names; anonymous callers are refused on both eras and do not see it listed', async () => {
      for (const era of ERAS) {
        const stolen = await call(era, server.url, 'list_my_orders', { limit: 1, customerId: 'bob' });
        assert.equal(
          stolen.isError,
          true,
          `${era.era}: an anonymous list_my_orders answered ${JSON.stringify(stolen.structuredContent)}`,
        );
        assert.equal(
          textOf(stolen),
          'A valid bearer token is required.',
          'the guard answers first, before any validation message',
        );
        const refused = await call(era, server.url, 'place_order', { sku: `ANON-${era.era}`, quantity: 1 });
        assert.equal(refused.isError, true, `${era.era}: an anonymous place_order answered ${JSON.stringify(refused)}`);
        assert.equal(textOf(refused), 'A valid bearer token is required.');
      }
      assert.ok(
        !effects.log.some((line) => line.includes('ANON') || line === 'list bob'),
        `a handler ran for an anonymous caller: ${effects.log.join('; ')}`,
      );
      assert.ok(
        !(await listNames(server.url)).includes('place_order'),
        'place_order is hidden from a caller its guard refuses',
      );
      assert.ok((await listNames(server.url, ALICE)).includes('place_order'));
      assert.deepEqual(
        (await call(ERAS[0], server.url, 'ping', {})).structuredContent,
        { pong: true },
        'public: true sends with no guard',
      );
    });

    it('item 27.9: a constructor-style command takes its input from the model and its customer from the caller; a model-sent customerId is refused', async () => {
      const tools = await listTools(server.url, BOB);
      assert.deepEqual(Object.keys(tools.find((t) => t.name === 'place_order')!.inputSchema.properties!).sort(), [
        'quantity',
        'sku',
      ]);
      for (const era of ERAS) {
        const placed = await call(era, server.url, 'place_order', { sku: 'BOOK-1', quantity: 2 }, BOB);
        assert.deepEqual(placed.structuredContent, { placedFor: 'bob', sku: 'BOOK-1' });
        const forged = await call(
          era,
          server.url,
          'place_order',
          { sku: 'BOOK-1', quantity: 2, customerId: 'alice' },
          BOB,
        );
        assert.equal(forged.isError, true);
        assert.match(textOf(forged), /customerId/);
        const invalid = await call(era, server.url, 'place_order', { sku: 'BOOK-1', quantity: 0 }, BOB);
        assert.match(textOf(invalid), /quantity/);
      }
      assert.ok(!effects.log.some((line) => line.startsWith('place alice')), effects.log.join('; '));
    });

    it("item 27.9: a decorated query's customerId comes from the caller: left out of the schema, refused when the model sends it", async () => {
      const tools = await listTools(server.url, ALICE);
      const schema = tools.find((t) => t.name === 'list_my_orders')!.inputSchema as Json;
      assert.deepEqual(Object.keys(schema.properties), ['limit']);
      assert.deepEqual(schema.required, ['limit']);
      for (const era of ERAS) {
        assert.deepEqual((await call(era, server.url, 'list_my_orders', { limit: 5 }, ALICE)).structuredContent, {
          customerId: 'alice',
          limit: 5,
        });
        const forged = await call(era, server.url, 'list_my_orders', { limit: 5, customerId: 'bob' }, ALICE);
        assert.equal(forged.isError, true);
        assert.match(textOf(forged), /"customerId" is set by the server from the caller, not by the model/);
      }
      assert.ok(!effects.log.includes('list bob'), effects.log.join('; '));
    });
  });

  describe(`exposed routes with the module's auth (${platform})`, () => {
    let server: RunningApp;
    before(async () => {
      const expose = {
        ...DEFAULT_EXPOSE,
        routes: [
          {
            controllers: [AdminUsersController],
            include: ['report', 'get'],
            tools: { report: { requiredScopes: ['admin'] } },
          },
        ],
      };
      server = await start(platform, { auth: MODULE_AUTH, expose });
    });
    after(() => server.close());

    it("item 27.8: the app's guard reads its own user fields: request.user is what the app's middleware made, not the module's principal", async () => {
      for (const era of ERAS) {
        const result = await call(era, server.url, 'report', {}, BOB);
        assert.equal(result.isError, undefined, textOf(result));
        assert.deepEqual(result.structuredContent, { report: 'salaries', by: 'bob' });
      }
    });

    it('scopes: a token without the scope a route tool requires gets 403 insufficient_scope, and the route never runs', async () => {
      const refused = await modernRpc(server.url, 'tools/call', { name: 'report', arguments: {} }, { headers: ALICE });
      assert.equal(refused.status, 403);
      assert.match(refused.headers.get('www-authenticate')!, /error="insufficient_scope", scope="admin"/);
      assert.equal(
        (await modernRpc(server.url, 'tools/call', { name: 'get_user', arguments: { id: 'x' } })).status,
        401,
      );
    });
  });
}

for (const platform of ['express', 'fastify'] as const) {
  describe(`a global auth guard that steps aside for MCP calls, and a global catch-all filter (${platform})`, () => {
    let server: RunningApp;
    before(async () => {
      server = await startApp(GlobalGuardModule, {
        platform,
        path: 'api/mcp',
        configure: (app) => {
          app.setGlobalPrefix('api');
          app.enableVersioning({ type: VersioningType.URI });
        },
      });
    });
    after(() => server.close());

    it("a route tool's request is an HTTP request: the global guard judges it, the filter shapes the refusal, on both eras", async () => {
      const http = await fetch(`${server.base}/api/v1/accounts/mine`);
      assert.equal(http.status, 401);
      for (const era of ERAS) {
        const refused = await call(era, server.url, 'mine', {});
        assert.equal(refused.isError, true, `${era.era}: ${JSON.stringify(refused.structuredContent)}`);
        assert.equal(textOf(refused), 'A bearer token is required (global guard).');
        assert.deepEqual((await call(era, server.url, 'mine', {}, BOB)).structuredContent, { owner: 'bob' });
        assert.deepEqual((await call(era, server.url, 'status', {})).structuredContent, { up: true });
        const failed = await call(era, server.url, 'fail', {});
        assert.equal(textOf(failed), 'Something went wrong.');
      }
      assert.match(
        (await listTools(server.url)).find((t) => t.name === 'mine')!.description,
        /^GET \/api\/v1\/accounts\/mine \(AccountsController\.mine, API version 1\)\.$/,
      );
    });
  });
}

describe('exposed routes with header versioning', () => {
  it('item 27.12: each tool sends its version header, whatever the caller sent; descriptions name the version', async () => {
    const server = await start('express', {}, 'header');
    try {
      const tools = await listTools(server.url);
      assert.equal(
        tools.find((t) => t.name === 'list_v2')!.description,
        'GET /api/orders (OrdersV2Controller.listV2, API version 2).',
      );
      assert.deepEqual((await call(ERAS[1], server.url, 'list', {}, { 'X-API-Version': '2' })).structuredContent, {
        version: 'v1',
      });
      assert.deepEqual((await call(ERAS[0], server.url, 'list_v2', {}, { 'X-API-Version': '1' })).structuredContent, {
        version: 'v2',
      });
    } finally {
      await server.close();
    }
  });
});

class AllowAll implements CanActivate {
  canActivate(): boolean {
    return true;
  }
}

@Controller('plain')
class PlainController {
  @Get()
  @UseGuards(AllowAll)
  read(): string {
    return 'plain';
  }
}

/** Boots a module and resolves with the bootstrap error's message (or fails the test when there is none). */
async function bootstrapError(mcp: Partial<McpModuleForRootOptions>, globalGuard = false): Promise<string> {
  @Module({
    imports: [CqrsModule.forRoot(), McpModule.forRoot({ name: 'x', version: '1', ...mcp })],
    controllers: [AdminUsersController, OrdersV1Controller, OrdersV2Controller, PlainController],
    providers: [SideEffects, ...(globalGuard ? [{ provide: APP_GUARD, useClass: AllowAll }] : [])],
  })
  class BootModule {}
  let app: INestApplication | undefined;
  try {
    app = await NestFactory.create(BootModule, { logger: false, abortOnError: false });
    app.setGlobalPrefix('api');
    app.enableVersioning({ type: VersioningType.URI });
    await app.init();
  } catch (error) {
    return (error as Error).message;
  } finally {
    await app?.close();
  }
  assert.fail('the bootstrap succeeded');
}

describe('exposed routes and messages: what fails the bootstrap', () => {
  it('item 26.4: a selector that matches no route, in include, exclude, tools or tags, naming it and the routes it could mean', async () => {
    const typo = await bootstrapError({
      expose: { routes: [{ controllers: [AdminUsersController], exclude: ['DELETE /api/admin/user/:id'] }] },
    });
    assert.match(
      typo,
      /expose\.routes\[0\]\.exclude has "DELETE \/api\/admin\/user\/:id", which matches no route of AdminUsersController/,
    );
    assert.match(
      typo,
      /The routes it could mean: "DELETE \/api\/admin\/users\/:id" \(AdminUsersController\.remove, declared as "DELETE \/admin\/users\/:id"\)/,
    );
    for (const [key, value, list] of [
      ['include', ['lsit'], 'include'],
      ['tools', { 'GET /nope': { name: 'x' } }, 'tools'],
      ['tags', ['admin'], 'tags'],
    ] as const) {
      const message = await bootstrapError({
        expose: { routes: [{ controllers: [AdminUsersController], [key]: value }] },
      });
      assert.match(message, new RegExp(`expose\\.routes\\[0\\]\\.${list} has "`), message);
    }
  });

  it('item 26.5: an exposed message no guard protects, even with a global guard, unless it says public: true', async () => {
    for (const globalGuard of [false, true]) {
      const message = await bootstrapError({ expose: { queries: [PingQuery] } }, globalGuard);
      assert.match(message, /QueryBus PingQuery would be sent by any MCP client: no guard protects it/);
      assert.match(
        message,
        /"decorators: \[UseGuards\(YourAuthGuard\)\]".*"requiredScopes" with the module's "auth".*"public: true"/,
      );
    }
    assert.match(
      await bootstrapError({ expose: { queries: [{ message: PingQuery, requiredScopes: ['orders'] }] } }),
      /QueryBus PingQuery requires the scope\(s\) orders, which only the module's "auth" option enforces, and it is not set/,
    );
  });

  it('item 27.9: a constructor-style message without a schema source, or with "input" and no "create", names what to add', async () => {
    const bare = await bootstrapError({ expose: { commands: [{ message: PlaceOrderCommand, public: true }] } });
    assert.match(
      bare,
      /CommandBus PlaceOrderCommand cannot be a tool: PlaceOrderCommand has no decorated properties.*constructor takes 3 parameter\(s\)/,
    );
    assert.match(bare, /give the entry "input" .* and "create: \(input\) => new PlaceOrderCommand\(\.\.\.\)"/);
    const noCreate = await bootstrapError({
      expose: { commands: [{ message: PlaceOrderCommand, public: true, input: { type: 'object', properties: {} } }] },
    });
    assert.match(noCreate, /gives "input" but no "create"/);
    const typo = await bootstrapError({
      expose: { queries: [{ message: PingQuery, public: true, fromCaller: { tenant: () => 't' } }] },
    });
    assert.match(typo, /"fromCaller" fills "tenant", which is not a property of PingQuery/);
  });

  it('item 27.12: two routes one selector names get one name: the error says how to rename each, in "tools" by its path', async () => {
    const message = await bootstrapError({
      expose: {
        routes: [
          { controllers: [OrdersV1Controller, OrdersV2Controller], tools: { 'GET /orders': { name: 'list_orders' } } },
        ],
      },
    });
    assert.match(
      message,
      /Tool "list_orders" is declared twice: by "OrdersV1Controller#list" and by "OrdersV2Controller#listV2"/,
    );
    assert.match(message, /tools: \{ 'GET \/api\/v2\/orders': \{ name: '\.\.\.' \} \}/);
    assert.doesNotMatch(message, /@Tool\(\{ name \}\)/);
  });
});
