import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { AddressInfo } from 'node:net';
import { startApp, type RunningApp } from '../utils/app.js';
import { connectModernClient, connectSdkClient, modernRpc } from '../utils/clients.js';

type Json = Record<string, any>;

describe('sample 05-auth-guards (passport-jwt on the endpoint)', () => {
  let server: RunningApp;
  let mintToken: (sub: string, roles: string[], scopes: string[], audience?: string, expiresIn?: number) => string;

  before(async () => {
    // The sample's audience is its own URL; fix the port before its modules load.
    const probe = await import('node:net').then(
      ({ createServer }) =>
        new Promise<number>((resolve) => {
          const s = createServer().listen(0, '127.0.0.1', () => {
            const { port } = s.address() as AddressInfo;
            s.close(() => resolve(port));
          });
        }),
    );
    process.env.MCP_RESOURCE = `http://127.0.0.1:${probe}/mcp`;
    ({ mintToken } = await import('../../sample/05-auth-guards/mint-token.js'));
    const { AppModule } = await import('../../sample/05-auth-guards/app.module.js');
    server = await startApp(AppModule, { port: probe });
  });
  after(async () => {
    await server.close();
    delete process.env.MCP_RESOURCE;
  });

  it('challenges a request without a token, and serves the metadata publicly', async () => {
    const res = await modernRpc(server.url, 'tools/list');
    assert.equal(res.status, 401);
    assert.match(
      res.headers.get('www-authenticate')!,
      /resource_metadata="http:\/\/127\.0\.0\.1:\d+\/\.well-known\/oauth-protected-resource\/mcp"/,
    );
    assert.equal((res.json as Json).error.code, -32600);
    const meta = await fetch(`${server.base}/.well-known/oauth-protected-resource/mcp`);
    assert.equal(meta.status, 200);
    assert.equal(((await meta.json()) as Json).resource, process.env.MCP_RESOURCE);
  });

  it('refuses a token for another audience and an expired token with 401', async () => {
    for (const token of [
      mintToken('eve', ['admin'], ['invoices:read'], 'http://elsewhere/mcp'),
      mintToken('eve', ['admin'], ['invoices:read'], undefined, -10),
    ]) {
      const res = await modernRpc(server.url, 'tools/list', {}, { headers: { Authorization: `Bearer ${token}` } });
      assert.equal(res.status, 401);
      assert.match(res.headers.get('www-authenticate')!, /^Bearer /);
    }
  });

  it('hides the admin tool from users and shows it to admins (both eras)', async () => {
    const userToken = mintToken('bob', ['user'], ['invoices:read', 'invoices:write']);
    const adminToken = mintToken('alice', ['admin'], ['invoices:read', 'invoices:write']);
    const asUser = await connectSdkClient(server.url, { headers: { Authorization: `Bearer ${userToken}` } });
    const asAdmin = await connectModernClient(server.url, { headers: { Authorization: `Bearer ${adminToken}` } });
    try {
      const userTools = (await asUser.client.listTools()).tools.map((t) => t.name);
      assert.deepEqual(userTools, ['list_invoices', 'create_invoice']);
      const adminTools = (await asAdmin.client.listTools()).tools.map((t: Json) => t.name);
      assert.deepEqual(adminTools, ['list_invoices', 'create_invoice', 'wipe_invoices']);
      const created = await asUser.client.callTool({
        name: 'create_invoice',
        arguments: { customer: 'ACME', amount: 10 },
      });
      assert.equal((created.content as Json[])[0].text, 'bob: created invoice for ACME (10)');
      const quota = await asUser.client.callTool({
        name: 'create_invoice',
        arguments: { customer: 'ACME', amount: 50_000 },
      });
      assert.equal(quota.isError, true);
      assert.match((quota.content as Json[])[0].text, /Quota exceeded/);
      const denied = await asUser.client.callTool({ name: 'wipe_invoices', arguments: {} });
      assert.equal(denied.isError, true);
      const wiped = await asAdmin.client.callTool({ name: 'wipe_invoices', arguments: {} });
      assert.equal((wiped.content as Json[])[0].text, 'alice: wiped invoices');
    } finally {
      await asUser.close();
      await asAdmin.close();
    }
  });

  it('answers 403 insufficient_scope for a read-only token calling a write tool', async () => {
    const token = mintToken('carol', ['user'], ['invoices:read']);
    const res = await modernRpc(
      server.url,
      'tools/call',
      { name: 'create_invoice', arguments: { customer: 'X', amount: 1 } },
      { headers: { Authorization: `Bearer ${token}` } },
    );
    assert.equal(res.status, 403);
    assert.match(res.headers.get('www-authenticate')!, /error="insufficient_scope", scope="invoices:write"/);
  });
});
