import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { PipelineModule, exclusiveGate, trail } from '../fixtures/pipeline.module.js';
import { startApp, type RunningApp } from '../utils/app.js';
import { connectModernClient, connectSdkClient, modernRpc, rpc } from '../utils/clients.js';
import { guard, nextEvent } from '../utils/wait.js';

type Json = Record<string, any>;
const admin = { Authorization: 'Bearer admin-token' };
const user = { Authorization: 'Bearer user-token' };

describe('the Nest pipeline on every call, guard-aware lists and authorization', () => {
  let server: RunningApp;
  before(async () => {
    server = await startApp(PipelineModule.register());
  });
  after(() => server.close());

  describe('enhancers', () => {
    it('runs global, class and method interceptors in Nest order around the handler', async () => {
      const res = (
        await modernRpc(server.url, 'tools/call', { name: 'ordered', arguments: { text: 'x' } }, { headers: admin })
      ).json as Json;
      assert.equal(res.result.content[0].text, 'x');
      assert.deepEqual(trail.slice(-7), [
        'before:global',
        'before:class',
        'before:method',
        'handler',
        'after:method',
        'after:class',
        'after:global',
      ]);
    });

    it('applies method-level guards: denied principals get a tool error, allowed ones the result', async () => {
      const denied = (
        await modernRpc(server.url, 'tools/call', { name: 'admin_only', arguments: {} }, { headers: user })
      ).json as Json;
      assert.equal(denied.result.isError, true);
      assert.match(denied.result.content[0].text, /Forbidden/);
      const allowed = (
        await modernRpc(server.url, 'tools/call', { name: 'admin_only', arguments: {} }, { headers: admin })
      ).json as Json;
      assert.equal(allowed.result.content[0].text, 'admin stuff');
    });

    it('applies class-level guards with the validated arguments', async () => {
      const denied = (
        await modernRpc(server.url, 'tools/call', { name: 'ordered', arguments: { text: 'deny' } }, { headers: admin })
      ).json as Json;
      assert.equal(denied.result.isError, true);
    });

    it('applies global guards, and a guard that throws is a denial, not a crash', async () => {
      const blocked = (
        await modernRpc(server.url, 'tools/call', { name: 'globally_blocked', arguments: {} }, { headers: admin })
      ).json as Json;
      assert.equal(blocked.result.isError, true);
      const throws = await modernRpc(
        server.url,
        'tools/call',
        { name: 'guard_throws', arguments: {} },
        { headers: admin },
      );
      assert.equal(throws.status, 200);
      assert.equal((throws.json as Json).result.isError, true);
    });

    it('runs pipes on arguments and custom createParamDecorator decorators', async () => {
      const res = (
        await modernRpc(
          server.url,
          'tools/call',
          { name: 'shout', arguments: { text: 'hi' } },
          { headers: { ...admin, 'x-tenant': 'acme' } },
        )
      ).json as Json;
      assert.equal(res.result.content[0].text, 'HI for acme');
    });

    it('lets an exception filter shape the result', async () => {
      const res = (await modernRpc(server.url, 'tools/call', { name: 'filtered', arguments: {} }, { headers: admin }))
        .json as Json;
      assert.deepEqual(res.result.content, [{ type: 'text', text: 'filtered: out of stock' }]);
      assert.equal(res.result.isError, true);
    });

    it('gives request-scoped providers a fresh instance per call with REQUEST injected', async () => {
      const first = (
        await modernRpc(
          server.url,
          'tools/call',
          { name: 'who_am_i', arguments: {} },
          { headers: { ...admin, 'x-tenant': 't1' } },
        )
      ).json as Json;
      const second = (
        await modernRpc(
          server.url,
          'tools/call',
          { name: 'who_am_i', arguments: {} },
          { headers: { ...admin, 'x-tenant': 't2' } },
        )
      ).json as Json;
      const [, a, tenantA] = /instance (\d+) for (\w+)/.exec(first.result.content[0].text)!;
      const [, b, tenantB] = /instance (\d+) for (\w+)/.exec(second.result.content[0].text)!;
      assert.notEqual(a, b);
      assert.equal(tenantA, 't1');
      assert.equal(tenantB, 't2');
    });
  });

  describe('guard-aware lists', () => {
    it('hides tools a principal may not call, on both eras, with a private cache scope', async () => {
      const asUser = (await modernRpc(server.url, 'tools/list', {}, { headers: user })).json as Json;
      const userTools = asUser.result.tools.map((t: Json) => t.name);
      assert.ok(!userTools.includes('admin_only'));
      assert.ok(!userTools.includes('globally_blocked'));
      assert.ok(userTools.includes('ordered'));
      assert.equal(asUser.result.cacheScope, 'private');
      const asAdmin = (await modernRpc(server.url, 'tools/list', {}, { headers: admin })).json as Json;
      assert.ok(asAdmin.result.tools.some((t: Json) => t.name === 'admin_only'));

      const legacy = await connectSdkClient(server.url, { headers: user });
      try {
        const { tools } = await legacy.client.listTools();
        assert.ok(!tools.some((t) => t.name === 'admin_only'));
      } finally {
        await legacy.close();
      }
      const modern = await connectModernClient(server.url, { headers: admin });
      try {
        const { tools } = await modern.client.listTools();
        assert.ok(tools.some((t: Json) => t.name === 'admin_only'));
      } finally {
        await modern.close();
      }
    });
  });

  describe('authorization', () => {
    it('serves RFC 9728 protected-resource metadata', async () => {
      const res = await fetch(`${server.base}/.well-known/oauth-protected-resource/mcp`);
      assert.equal(res.status, 200);
      const doc = (await res.json()) as Json;
      assert.equal(doc.resource, 'http://127.0.0.1/mcp');
      assert.deepEqual(doc.authorization_servers, ['https://auth.example.com']);
      assert.deepEqual(doc.scopes_supported, ['tasks', 'admin']);
    });

    it('answers 401 with a bearer challenge for missing, malformed and invalid tokens', async () => {
      for (const [headers, error] of [
        [{}, undefined],
        // RFC 6750 §3.1: another scheme is an unsupported method, so no error code either.
        [{ Authorization: 'Basic abc' }, undefined],
        [{ Authorization: 'Bearer not a token' }, 'invalid_request'],
        [{ Authorization: 'Bearer nope' }, 'invalid_token'],
      ] as const) {
        const res = await modernRpc(server.url, 'tools/list', {}, { headers, id: 'auth' });
        assert.equal(res.status, 401, JSON.stringify(headers));
        const challenge = res.headers.get('www-authenticate')!;
        assert.match(challenge, /^Bearer /);
        assert.match(
          challenge,
          /resource_metadata="http:\/\/127\.0\.0\.1\/\.well-known\/oauth-protected-resource\/mcp"/,
        );
        assert.match(challenge, /scope="tasks admin"/);
        if (error) assert.match(challenge, new RegExp(`error="${error}"`));
        else assert.doesNotMatch(challenge, /error=/, 'RFC 6750 §3.1: no error code without credentials');
        assert.equal((res.json as Json).error.code, -32600);
      }
    });

    it('answers 403 insufficient_scope naming every needed scope', async () => {
      const res = await modernRpc(
        server.url,
        'tools/call',
        { name: 'write_task', arguments: {} },
        { headers: user, id: 'w' },
      );
      assert.equal(res.status, 403);
      assert.match(res.headers.get('www-authenticate')!, /error="insufficient_scope", scope="tasks:write"/);
      assert.equal((res.json as Json).id, 'w');
      const ok = (await modernRpc(server.url, 'tools/call', { name: 'write_task', arguments: {} }, { headers: admin }))
        .json as Json;
      assert.equal(ok.result.content[0].text, 'written', 'the "tasks" scope covers "tasks:write"');
    });

    it("refuses to let one principal use another principal's session", async () => {
      const init = await rpc(
        server.url,
        { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {} } },
        { headers: admin },
      );
      const sessionId = init.headers.get('mcp-session-id')!;
      const hijack = await rpc(
        server.url,
        { jsonrpc: '2.0', id: 2, method: 'tools/list' },
        { sessionId, headers: user },
      );
      assert.equal(hijack.status, 404);
      const owner = await rpc(
        server.url,
        { jsonrpc: '2.0', id: 3, method: 'tools/list' },
        { sessionId, headers: admin },
      );
      assert.equal(owner.status, 200);
      const deleteByOther = await rpc(server.url, undefined, { sessionId, headers: user, httpMethod: 'DELETE' });
      assert.equal(deleteByOther.status, 404);
    });

    it('exposes WWW-Authenticate and Mcp-Session-Id to browser clients', async () => {
      const res = await modernRpc(server.url, 'tools/list', {}, { headers: { Origin: 'http://localhost:5173' } });
      assert.match(res.headers.get('access-control-expose-headers') ?? '', /WWW-Authenticate/);
      assert.match(res.headers.get('access-control-expose-headers') ?? '', /Mcp-Session-Id/);
    });
  });

  describe('per-call policies', () => {
    it('cancels a call that exceeds its timeout with a readable tool error', async () => {
      const res = (await modernRpc(server.url, 'tools/call', { name: 'too_slow', arguments: {} }, { headers: admin }))
        .json as Json;
      assert.equal(res.result.isError, true);
      assert.match(res.result.content[0].text, /took longer than 50 ms/);
    });

    it('refuses calls over the rate limit', async () => {
      const results: Json[] = [];
      for (let i = 0; i < 3; i++)
        results.push(
          (await modernRpc(server.url, 'tools/call', { name: 'limited', arguments: {} }, { headers: admin }))
            .json as Json,
        );
      assert.deepEqual(
        results.map((r) => r.result.isError === true),
        [false, false, true],
      );
      assert.match(results[2].result.content[0].text, /Rate limit/);
    });

    it('refuses a second concurrent call over the concurrency limit', async () => {
      const entered = nextEvent(exclusiveGate, 'entered', 'the first exclusive call never started');
      const first = modernRpc(server.url, 'tools/call', { name: 'exclusive', arguments: {} }, { headers: admin });
      await entered;
      const second = (
        await guard(
          modernRpc(server.url, 'tools/call', { name: 'exclusive', arguments: {} }, { headers: admin }),
          'the second call was not refused while the first held the slot',
        )
      ).json as Json;
      assert.equal(second.result.isError, true, JSON.stringify(second));
      exclusiveGate.emit('release');
      assert.notEqual(((await first).json as Json).result.isError, true, 'the first call finishes once released');
    });
  });
});
