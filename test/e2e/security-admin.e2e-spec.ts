/**
 * The admin view (`adminRoutes`, `McpSessionAdmin`) from the attacker's side. Its routes answer
 * only through the app's guard, on Express and Fastify, under the global prefix, whatever the
 * path's spelling; they only read. What they show of a session is bounded and never its state,
 * subscriptions or token, however large the client made its `clientInfo`. A Redis outage makes
 * them answer 503 naming Redis, not a bare 500.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import {
  Injectable,
  Module,
  UseGuards,
  type CanActivate,
  type DynamicModule,
  type ExecutionContext,
} from '@nestjs/common';
import { Ctx, McpContext, McpModule, Resource, Tool, type McpModuleForRootOptions } from 'nestjs-model-context';
import { McpSessionAdmin } from 'nestjs-model-context/sessions';
import { startApp, type RunningApp, type TestPlatform } from '../utils/app.js';
import { rpc } from '../utils/clients.js';
import { openSession } from '../utils/paths.js';
import { RedisChild } from '../utils/redis-server.js';

type Json = Record<string, any>;
const VERSION = '2025-11-25';
const STATE_SECRET = 'STATE-SECRET-93';
const TOKEN = 'bearer-token-of-alice-0123456789';

/** The app's own guard: only `x-admin: yes` passes. */
@Injectable()
class AdminGuard implements CanActivate {
  canActivate(context: ExecutionContext): boolean {
    return (
      context.switchToHttp().getRequest<{ headers: Record<string, string | undefined> }>().headers['x-admin'] === 'yes'
    );
  }
}

@Injectable()
class SecretTools {
  @Tool({ description: 'Keeps a secret in the session state.' })
  async keep(@Ctx() ctx: McpContext): Promise<string> {
    await ctx.state().set({ secret: STATE_SECRET });
    return 'kept';
  }

  @Resource({ uri: 'private://inbox', description: 'An inbox.' })
  inbox(): string {
    return 'inbox';
  }
}

function adminApp(options: Partial<McpModuleForRootOptions> = {}): DynamicModule {
  @Module({
    imports: [
      McpModule.forRoot({
        name: 'abuse-admin',
        version: '1.0.0',
        adminRoutes: { decorators: [UseGuards(AdminGuard)] },
        auth: {
          resource: 'http://127.0.0.1/mcp',
          authorizationServers: ['https://auth.example.com'],
          verifyToken: (token) => (token === TOKEN ? { id: 'alice' } : null),
        },
        ...options,
      } as McpModuleForRootOptions),
    ],
    providers: [AdminGuard, SecretTools],
  })
  class AdminAbuseApp {}
  return { module: AdminAbuseApp };
}

const admin = { 'x-admin': 'yes' };
const bearer = { Authorization: `Bearer ${TOKEN}` };

async function get(
  url: string,
  headers: Record<string, string> = {},
  method: 'GET' | 'DELETE' | 'POST' = 'GET',
): Promise<{ status: number; text: string; json?: Json; headers: Headers }> {
  const res = await fetch(url, { method, headers });
  const text = await res.text();
  let json: Json | undefined;
  try {
    json = JSON.parse(text) as Json;
  } catch {
    json = undefined;
  }
  return { status: res.status, text, json, headers: res.headers };
}

for (const platform of ['express', 'fastify'] as TestPlatform[]) {
  describe(`security: admin routes (${platform})`, () => {
    let server: RunningApp;
    let sessionId: string;

    before(async () => {
      server = await startApp(adminApp(), {
        platform,
        configure: (app) => void app.setGlobalPrefix('api'),
        path: 'api/mcp',
      });
      sessionId = await openSession(server.url, VERSION, bearer, {
        name: 'n'.repeat(5000),
        version: 'v'.repeat(5000),
        title: 't'.repeat(5000),
      });
      const keep = await rpc(
        server.url,
        { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'keep', arguments: {} } },
        { sessionId, headers: { ...bearer, 'MCP-Protocol-Version': VERSION } },
      );
      assert.equal(keep.status, 200, keep.text);
      const subscribe = await rpc(
        server.url,
        { jsonrpc: '2.0', id: 2, method: 'resources/subscribe', params: { uri: 'private://inbox' } },
        { sessionId, headers: { ...bearer, 'MCP-Protocol-Version': VERSION } },
      );
      assert.equal(subscribe.status, 200, subscribe.text);
    });
    after(() => server.close());

    it("answers nothing without the app's guard, however the path is spelled", async () => {
      const paths = [
        '/api/mcp-admin/sessions',
        '/api/mcp-admin/sessions/',
        '/api/MCP-ADMIN/sessions',
        '/api/mcp-admin//sessions',
        '/api/mcp-admin/sessions?x=1',
        `/api/mcp-admin/sessions/${sessionId}`,
        `/api/mcp-admin/sessions/${encodeURIComponent(sessionId)}/`,
        '/api/mcp-admin/%73essions',
      ];
      for (const path of paths) {
        for (const headers of [{}, bearer, { 'x-admin': 'no' }] as Array<Record<string, string>>) {
          const answer = await get(`${server.base}${path}`, headers);
          assert.ok(answer.status === 403 || answer.status === 404, `${path}: ${answer.status} ${answer.text}`);
          // A 404 may echo the path asked for; nothing of the session itself shows.
          assert.ok(
            !answer.text.includes('alice') && !answer.text.includes('nnnn') && !answer.text.includes('"sessions"'),
            `${path}: ${answer.text}`,
          );
        }
      }
      // Outside the global prefix there is no admin route at all.
      assert.equal((await get(`${server.base}/mcp-admin/sessions`, admin)).status, 404);
    });

    it('only reads: no method closes or changes a session', async () => {
      for (const method of ['DELETE', 'POST'] as const) {
        const answer = await get(`${server.base}/api/mcp-admin/sessions/${sessionId}`, admin, method);
        assert.equal(answer.status, 404, `${method}: ${answer.text}`);
      }
      const still = await rpc(
        server.url,
        { jsonrpc: '2.0', id: 3, method: 'ping' },
        { sessionId, headers: { ...bearer, 'MCP-Protocol-Version': VERSION } },
      );
      assert.equal(still.status, 200);
    });

    it('shows a session without its state, subscriptions or token, and bounds what the client sent', async () => {
      const list = await get(`${server.base}/api/mcp-admin/sessions`, admin);
      const one = await get(`${server.base}/api/mcp-admin/sessions/${sessionId}`, admin);
      for (const answer of [list, one]) {
        assert.equal(answer.status, 200, answer.text);
        for (const secret of [STATE_SECRET, 'private://inbox', TOKEN])
          assert.ok(!answer.text.includes(secret), `${secret} shown: ${answer.text.slice(0, 200)}`);
      }
      const summary = one.json!;
      assert.equal(summary.principal, 'alice');
      for (const field of ['name', 'version', 'title']) {
        assert.ok(
          summary.clientInfo[field].length <= 129,
          `clientInfo.${field} is ${summary.clientInfo[field].length} characters`,
        );
      }
    });

    it('a session id that is no session, however odd, is a 404 naming nothing else', async () => {
      for (const id of [
        'nope',
        '*',
        '..%2F..%2Fsessions',
        '%7Bsessions%7D',
        'x'.repeat(4000),
        encodeURIComponent('{abuse}session:*'),
      ]) {
        const answer = await get(`${server.base}/api/mcp-admin/sessions/${id}`, admin);
        // Fastify refuses a path parameter that long itself (414).
        assert.ok(
          answer.status === 404 || (answer.status === 414 && platform === 'fastify'),
          `${id.slice(0, 40)}: ${answer.status} ${answer.text.slice(0, 200)}`,
        );
        assert.ok(!answer.text.includes(sessionId) && !answer.text.includes('alice'));
      }
    });
  });
}

describe('security: McpSessionAdmin with a Redis that is down', () => {
  let redis: RedisChild;
  let server: RunningApp;

  before(async () => {
    redis = await RedisChild.start();
    server = await startApp(adminApp({ redis: { url: redis.url, keyPrefix: 'abuse-admin:' } }));
  });
  after(async () => {
    await server?.close().catch(() => undefined);
    await redis?.stop();
  });

  it('the admin routes answer 503 with Retry-After, naming Redis; the service method rejects with the same reason', async () => {
    await openSession(server.url, VERSION, bearer);
    assert.equal((await get(`${server.base}/mcp-admin/sessions`, admin)).status, 200);
    await redis.kill();
    const answer = await get(`${server.base}/mcp-admin/sessions`, admin);
    assert.equal(answer.status, 503, answer.text);
    assert.ok(answer.headers.get('retry-after'), 'Retry-After');
    assert.match(answer.text, /Redis/);
    await assert.rejects(server.app.get(McpSessionAdmin).list(), /Redis/);
  });
});

describe('security: McpSessionAdmin.close', () => {
  it('ends exactly the session named, once: an unknown, ended or malformed id is false and touches nothing', async () => {
    const closed: string[] = [];
    const server = await startApp(
      adminApp({ sessions: { onSessionClose: ({ sessionId }) => void closed.push(sessionId) } }),
    );
    try {
      const sessions = server.app.get(McpSessionAdmin);
      const victim = await openSession(server.url, VERSION, bearer);
      const bystander = await openSession(server.url, VERSION, bearer);
      for (const id of ['', '*', `${victim}x`, victim.slice(0, -1), '../' + victim])
        assert.equal(await sessions.close(id), false, JSON.stringify(id));
      assert.equal(await sessions.close(victim), true);
      assert.equal(await sessions.close(victim), false, 'a second close finds nothing');
      assert.deepEqual(closed, [victim]);
      const gone = await rpc(
        server.url,
        { jsonrpc: '2.0', id: 1, method: 'ping' },
        { sessionId: victim, headers: { ...bearer, 'MCP-Protocol-Version': VERSION } },
      );
      assert.equal(gone.status, 404);
      const alive = await rpc(
        server.url,
        { jsonrpc: '2.0', id: 2, method: 'ping' },
        { sessionId: bystander, headers: { ...bearer, 'MCP-Protocol-Version': VERSION } },
      );
      assert.equal(alive.status, 200);
    } finally {
      await server.close();
    }
  });
});
