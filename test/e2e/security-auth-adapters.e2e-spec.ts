/**
 * The app's own authentication in front of the MCP endpoint, from the attacker's side, on Express
 * and on Fastify, behind a global prefix and URI versioning: the same passport-jwt guard (with a
 * `@Public()` reflector) and the same custom `CanActivate` guard authenticate MCP as they do HTTP
 * routes; a client cannot forge the user they set; a bad token is told apart from none; what a
 * 401 or 403 says leaks no token and no user. The principal is read from the request the app's
 * guards wrote to (Fastify's request, not `request.raw`), on every path: both eras, a legacy
 * session, legacy SSE.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import {
  configureEnterpriseApp,
  EnterpriseAuthModule,
  mintToken,
  Public,
  resourceFor,
} from '../fixtures/enterprise-auth.module.js';
import { startApp, type RunningApp } from '../utils/app.js';
import { connectModernClient, connectSdkClient, modernRpc, rpc } from '../utils/clients.js';
import { guard } from '../utils/wait.js';

type Json = Record<string, any>;

const alice = mintToken('alice', ['admin'], ['reports:read', 'reports:write']);
const bob = mintToken('bob', ['user'], ['reports:read']);
const bearer = (token: string) => ({ Authorization: `Bearer ${token}` });
const INIT = {
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'attacker', version: '1' } },
};
const CHALLENGE =
  'Bearer scope="reports:read reports:write", resource_metadata="http://127.0.0.1/.well-known/oauth-protected-resource/api/mcp"';

/** The first JSON-RPC message of an answer, JSON or SSE. */
function messageOf(res: { json?: unknown; events?: Array<{ data: unknown }> }): Json {
  return (res.json ??
    res.events
      ?.map((e) => e.data)
      .find((d) => typeof d === 'object' && d !== null && 'jsonrpc' in (d as Json))) as Json;
}

/** The text of a tool result. */
function textOf(result: Json): string {
  return (result.content as Json[]).map((c) => c.text).join('');
}

for (const platform of ['express', 'fastify'] as const) {
  for (const kind of ['passport', 'custom'] as const) {
    describe(`${platform}, the app's ${kind === 'passport' ? "passport-jwt AuthGuard('jwt')" : 'own CanActivate'} as a global guard, prefix api + URI versioning`, () => {
      let server: RunningApp;
      let url: string;

      before(async () => {
        server = await startApp(EnterpriseAuthModule.register({ guard: kind, legacySse: true }), {
          platform,
          configure: configureEnterpriseApp,
        });
        url = `${server.base}/api/mcp`;
      });
      after(() => server.close());

      it("authenticates MCP with the app's guard as it does HTTP routes, on both eras (a valid token is never a 401)", async () => {
        const http = await fetch(`${server.base}/api/v1/profile`, { headers: bearer(alice) });
        assert.equal(http.status, 200);
        assert.equal(((await http.json()) as Json).userId, 'alice');

        const modern = await modernRpc(url, 'tools/list', {}, { headers: bearer(alice) });
        assert.equal(modern.status, 200, modern.text);
        assert.deepEqual(
          messageOf(modern).result.tools.map((t: Json) => t.name),
          ['whoami', 'admin_report', 'write_report'],
        );
        const legacy = await connectSdkClient(url, { headers: bearer(alice) });
        try {
          assert.deepEqual(
            (await legacy.client.listTools()).tools.map((t) => t.name),
            ['whoami', 'admin_report', 'write_report'],
          );
        } finally {
          await legacy.close();
        }
      });

      it("maps request.user to the principal (id from userId, scopes from scope, the user as claims) and hands tools the app's own user", async () => {
        const client = await connectModernClient(url, { headers: bearer(alice) });
        try {
          const result = (await client.client.callTool({ name: 'whoami', arguments: {} })) as Json;
          const seen = JSON.parse(textOf(result)) as Json;
          assert.deepEqual(seen.user, {
            userId: 'alice',
            username: 'alice (name)',
            roles: ['admin'],
            scope: 'reports:read reports:write',
          });
          assert.equal(seen.principal.id, 'alice');
          assert.deepEqual(seen.principal.scopes, ['reports:read', 'reports:write']);
          assert.deepEqual(seen.principal.claims, seen.user);
        } finally {
          await client.close();
        }
      });

      it("runs the app's roles guard on its own user fields: hides and refuses the admin tool for a user, serves it to an admin", async () => {
        const asBob = await connectSdkClient(url, { headers: bearer(bob) });
        const asAlice = await connectModernClient(url, { headers: bearer(alice) });
        try {
          // write_report needs a scope bob's token lacks; admin_report, the admin role bob's user lacks.
          assert.deepEqual(
            (await asBob.client.listTools()).tools.map((t) => t.name),
            ['whoami'],
          );
          const refused = await asBob.client.callTool({ name: 'admin_report', arguments: {} }).then(
            (r) => JSON.stringify(r),
            (e: Error) => e.message,
          );
          assert.doesNotMatch(refused, /admin report for/);
          assert.doesNotMatch(refused, /Cannot read properties/);
          assert.equal(
            textOf((await asAlice.client.callTool({ name: 'admin_report', arguments: {} })) as Json),
            'admin report for alice (name)',
          );
        } finally {
          await asBob.close();
          await asAlice.close();
        }
      });

      it('answers no token with a 401 challenge without an error code, and a message that says what to send (not "Unauthorized: Unauthorized")', async () => {
        for (const headers of [{}, { Authorization: 'Basic YWxpY2U6c2VjcmV0' }]) {
          const res = await modernRpc(url, 'tools/list', {}, { headers });
          assert.equal(res.status, 401);
          assert.equal(
            res.headers.get('www-authenticate'),
            CHALLENGE,
            'RFC 6750 §3.1: no error code without a bearer token',
          );
          const error = messageOf(res).error;
          assert.equal(error.code, -32600);
          assert.match(
            error.message,
            /^Unauthorized: this MCP endpoint needs a bearer token\. Send "Authorization: Bearer <token>"/,
          );
          assert.notEqual(error.message, 'Unauthorized: Unauthorized');
          assert.equal(
            messageOf(res).app,
            undefined,
            "the app's catch-all filter does not reshape the endpoint's answer",
          );
        }
      });

      it('tells a bad token from none: 401 invalid_token with a description, never echoing the token', async () => {
        const forged = mintToken('alice', ['admin'], ['reports:read', 'reports:write'], { secret: 'not-the-idp-key' });
        const badTokens = {
          garbage: 'not-a-jwt',
          expired: mintToken('alice', ['admin'], ['reports:read'], { expiresIn: -60 }),
          'another audience': mintToken('alice', ['admin'], ['reports:read'], {
            audience: 'http://127.0.0.1/api/other-mcp',
          }),
          'another key': forged,
        };
        for (const [what, token] of Object.entries(badTokens)) {
          const res = await modernRpc(url, 'tools/list', {}, { headers: bearer(token) });
          assert.equal(res.status, 401, what);
          const challenge = res.headers.get('www-authenticate')!;
          assert.match(
            challenge,
            /^Bearer error="invalid_token", scope="reports:read reports:write", resource_metadata="[^"]+", error_description="The access token is invalid, expired, or not issued for this resource"$/,
            what,
          );
          const { message } = messageOf(res).error;
          assert.match(
            message,
            /^Unauthorized: the bearer token was refused: it is invalid, expired, or not issued for this resource \(http:\/\/127\.0\.0\.1\/api\/mcp\)/,
            what,
          );
          if (kind === 'custom') assert.match(message, /The app's guard said: Invalid token$/, what);
          for (const part of token.split('.').filter((p) => p.length > 8)) {
            assert.ok(!res.text.includes(part) && !challenge.includes(part), `${what}: the answer echoes the token`);
          }
        }
      });

      it('cannot be given a user by the client: headers, body, query and _meta named "user" authenticate no one', async () => {
        const admin = JSON.stringify({
          userId: 'alice',
          username: 'alice',
          roles: ['admin'],
          scope: 'reports:read reports:write',
        });
        const forgeries: Array<[string, () => Promise<{ status: number }>]> = [
          [
            'a user header',
            () =>
              modernRpc(
                url,
                'tools/list',
                {},
                { headers: { user: admin, 'x-user': admin, 'x-forwarded-user': 'alice', 'remote-user': 'alice' } },
              ),
          ],
          [
            'a user field in the body',
            () => rpc(url, { ...INIT, user: JSON.parse(admin), principal: { id: 'alice' } }),
          ],
          [
            'a user in _meta',
            () =>
              modernRpc(url, 'tools/list', {
                _meta: { user: JSON.parse(admin), principal: { id: 'alice', scopes: ['reports:write'] } },
              }),
          ],
          ['a user in the query', () => rpc(`${url}?user=alice&user[roles]=admin&principal=alice`, INIT)],
          ['a batch carrying a user', () => rpc(url, [{ ...INIT, user: JSON.parse(admin) }])],
        ];
        for (const [what, send] of forgeries) assert.equal((await send()).status, 401, what);

        // A low-privileged token with a forged admin user beside it stays that user.
        const res = await modernRpc(
          url,
          'tools/call',
          { name: 'whoami', arguments: {}, user: JSON.parse(admin) },
          { headers: { ...bearer(bob), user: admin } },
        );
        assert.equal(res.status, 200, res.text);
        const seen = JSON.parse(textOf(messageOf(res).result)) as Json;
        assert.equal(seen.user.userId, 'bob');
        assert.deepEqual(seen.user.roles, ['user']);
        const admin403 = await modernRpc(
          url,
          'tools/call',
          { name: 'admin_report', arguments: {} },
          { headers: { ...bearer(bob), user: admin } },
        );
        assert.doesNotMatch(admin403.text, /admin report for/);
      });

      it("keeps a legacy session to the principal that opened it: another principal's token, or none, gets nothing from it", async () => {
        const init = await rpc(url, INIT, { headers: bearer(alice) });
        assert.equal(init.status, 200, init.text);
        const session = init.headers.get('mcp-session-id')!;
        const list = { jsonrpc: '2.0', id: 2, method: 'tools/list' };
        const asBob = await rpc(url, list, {
          sessionId: session,
          headers: { ...bearer(bob), 'MCP-Protocol-Version': '2025-11-25' },
        });
        assert.equal(asBob.status, 404, asBob.text);
        const anonymous = await rpc(url, list, {
          sessionId: session,
          headers: { 'MCP-Protocol-Version': '2025-11-25' },
        });
        assert.equal(anonymous.status, 401);
        const asAlice = await rpc(url, list, {
          sessionId: session,
          headers: { ...bearer(alice), 'MCP-Protocol-Version': '2025-11-25' },
        });
        assert.equal(asAlice.status, 200, asAlice.text);
      });

      it("runs each message of a 2025-03-26 batch as the token's principal, with the app's own user", async () => {
        const init = await rpc(
          url,
          { ...INIT, params: { ...INIT.params, protocolVersion: '2025-03-26' } },
          { headers: bearer(bob) },
        );
        assert.equal(init.status, 200, init.text);
        const sessionId = init.headers.get('mcp-session-id')!;
        const headers = { ...bearer(bob), 'MCP-Protocol-Version': '2025-03-26' };
        await rpc(url, { jsonrpc: '2.0', method: 'notifications/initialized' }, { sessionId, headers });
        const batch = await rpc(
          url,
          [
            { jsonrpc: '2.0', id: 'who', method: 'tools/call', params: { name: 'whoami', arguments: {} } },
            { jsonrpc: '2.0', id: 'admin', method: 'tools/call', params: { name: 'admin_report', arguments: {} } },
          ],
          { sessionId, headers },
        );
        assert.equal(batch.status, 200, batch.text);
        const answers = (batch.json ?? batch.events?.map((e) => e.data)) as Json[];
        const who = answers.find((m) => m.id === 'who')!;
        assert.equal(JSON.parse(textOf(who.result)).user.userId, 'bob');
        const admin = answers.find((m) => m.id === 'admin')!;
        assert.doesNotMatch(JSON.stringify(admin), /admin report for/);
        // Another principal's token on bob's session finds nothing.
        assert.equal(
          (
            await rpc(url, [{ jsonrpc: '2.0', id: 1, method: 'tools/list' }], {
              sessionId,
              headers: { ...headers, ...bearer(alice) },
            })
          ).status,
          404,
        );
      });

      it('answers a missing scope with 403 insufficient_scope that names scopes only: no token, no user, no claim', async () => {
        const res = await modernRpc(
          url,
          'tools/call',
          { name: 'write_report', arguments: {} },
          { headers: bearer(bob) },
        );
        assert.equal(res.status, 403);
        assert.match(
          res.headers.get('www-authenticate')!,
          /^Bearer error="insufficient_scope", scope="reports:write", resource_metadata=/,
        );
        assert.equal(
          messageOf(res).error.message,
          'Forbidden: this call needs the scope(s) reports:write; the token lacks reports:write.',
        );
        for (const secret of [...bob.split('.'), 'bob (name)', '"user"', 'roles'])
          assert.ok(!res.text.includes(secret), `the 403 leaks ${secret}`);
        const ok = await modernRpc(
          url,
          'tools/call',
          { name: 'write_report', arguments: {} },
          { headers: bearer(alice) },
        );
        assert.equal(textOf(messageOf(ok).result), 'written by alice');
      });

      it('authenticates the legacy SSE transport with the same guard', async () => {
        const open = async (headers: Record<string, string>) => {
          const controller = new AbortController();
          const res = await guard(
            fetch(`${server.base}/api/sse`, {
              headers: { Accept: 'text/event-stream', ...headers },
              signal: controller.signal,
            }),
            'GET /api/sse',
          );
          const first =
            res.status === 200
              ? Buffer.from((await guard(res.body!.getReader().read(), 'the endpoint event')).value!).toString('utf8')
              : await res.text();
          controller.abort();
          return { status: res.status, first };
        };
        const opened = await open(bearer(alice));
        assert.equal(opened.status, 200);
        assert.match(opened.first, /event: endpoint\ndata: \/api\/messages\?sessionId=/);
        const refused = await open({});
        assert.equal(refused.status, 401);
        assert.match(refused.first, /needs a bearer token/);
      });

      it("leaves the app's HTTP routes as they were: its guard, its filter, its @Public()", async () => {
        const anonymous = await fetch(`${server.base}/api/v1/profile`);
        assert.equal(anonymous.status, 401);
        assert.equal(((await anonymous.json()) as Json).app, 'enterprise');
        assert.equal((await fetch(`${server.base}/api/v1/profile/status`)).status, 200);
      });
    });
  }

  describe(`${platform}: an endpoint marked @Public() while the app's guard is what authenticates it`, () => {
    it('answers a valid token 401 invalid_token (no guard set request.user), and says why in the log, once', async () => {
      const warnings: string[] = [];
      const logger = {
        log: () => undefined,
        error: () => undefined,
        verbose: () => undefined,
        debug: () => undefined,
        warn: (message: unknown) => void warnings.push(String(message)),
      };
      const server = await startApp(
        EnterpriseAuthModule.register({ guard: 'passport', controllerDecorators: [Public()] }),
        { platform, configure: configureEnterpriseApp, logger },
      );
      try {
        for (let i = 0; i < 2; i++) {
          const res = await modernRpc(`${server.base}/api/mcp`, 'tools/list', {}, { headers: bearer(alice) });
          assert.equal(res.status, 401);
          assert.match(res.headers.get('www-authenticate')!, /^Bearer error="invalid_token"/);
        }
        const why = warnings.filter((w) => w.includes('no guard authenticated it'));
        assert.equal(why.length, 1, warnings.join('\n'));
        assert.match(why[0]!, /do not mark the endpoint public \(controllerDecorators\)/);
        assert.ok(!why[0]!.includes(alice.split('.')[2]!), 'the log holds no token');
      } finally {
        await server.close();
      }
    });
  });

  describe(`${platform}: the principal under a versioned endpoint (/api/v2/mcp)`, () => {
    it('authenticates at /api/v2/mcp and points its challenge at the metadata of that path', async () => {
      const server = await startApp(EnterpriseAuthModule.register({ guard: 'passport', endpointVersion: '2' }), {
        platform,
        configure: configureEnterpriseApp,
      });
      try {
        const url = `${server.base}/api/v2/mcp`;
        const token = mintToken('alice', ['admin'], ['reports:read'], { audience: resourceFor('2') });
        const ok = await modernRpc(url, 'tools/list', {}, { headers: bearer(token) });
        assert.equal(ok.status, 200, ok.text);
        const missing = await modernRpc(url, 'tools/list');
        assert.match(
          missing.headers.get('www-authenticate')!,
          /resource_metadata="http:\/\/127\.0\.0\.1\/\.well-known\/oauth-protected-resource\/api\/v2\/mcp"$/,
        );
      } finally {
        await server.close();
      }
    });
  });
}
