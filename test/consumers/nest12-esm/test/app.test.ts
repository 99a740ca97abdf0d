import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { AddressInfo } from 'node:net';
import type { INestApplication } from '@nestjs/common';
import { Client as SdkClient } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as SdkTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { Client as ModernClient, StreamableHTTPClientTransport as ModernTransport } from '@modelcontextprotocol/client';
import { createApp } from '../src/app.module.js';

type Json = Record<string, any>;

describe('an enterprise Nest 12 ESM app with nestjs-model-context from the tarball', () => {
  let app: INestApplication;
  let base: string;
  before(async () => {
    app = await createApp();
    await app.listen(0, '127.0.0.1');
    base = `http://127.0.0.1:${(app.getHttpServer().address() as AddressInfo).port}`;
  });
  after(() => app.close());

  describe('REST routes still behave', () => {
    it('keeps the bearer guard, the @Public() convention and the serializer', async () => {
      assert.deepEqual(await (await fetch(`${base}/api/v1/health`)).json(), { status: 'up' });
      const denied = await fetch(`${base}/api/v1/orders/A1`);
      assert.equal(denied.status, 401);
      assert.equal(((await denied.json()) as Json).ok, false);
      const found = await fetch(`${base}/api/v1/orders/A1`, { headers: { Authorization: 'Bearer secret' } });
      assert.equal(found.status, 200);
      assert.deepEqual(await found.json(), { id: 'A1', item: 'widget', quantity: 2 });
      assert.ok(found.headers.get('x-content-type-options'), 'helmet headers');
    });

    it('keeps the global ValidationPipe and the catch-all filter', async () => {
      const headers = { Authorization: 'Bearer secret', 'Content-Type': 'application/json' };
      const extra = await fetch(`${base}/api/v1/orders`, { method: 'POST', headers, body: JSON.stringify({ item: 'x', quantity: 1, admin: true }) });
      assert.equal(extra.status, 400);
      assert.match(JSON.stringify(await extra.json()), /property admin should not exist/);
      const created = await fetch(`${base}/api/v1/orders`, { method: 'POST', headers, body: JSON.stringify({ item: 'gear', quantity: 3 }) });
      assert.equal(created.status, 201);
      assert.equal(((await created.json()) as Json).item, 'gear');
      const missing = await fetch(`${base}/api/v1/orders/Z9`, { headers });
      assert.equal(missing.status, 404);
      assert.deepEqual(await missing.json(), { ok: false, status: 404, error: { message: 'Order Z9 not found', error: 'Not Found', statusCode: 404 } });
    });
  });

  describe('the MCP endpoint at /api/mcp (version-neutral, @Public())', () => {
    it('works with @modelcontextprotocol/sdk 1.32 on 2025-11-25', async () => {
      const client = new SdkClient({ name: 'consumer-sdk', version: '1.0.0' });
      const transport = new SdkTransport(new URL(`${base}/api/mcp`));
      await client.connect(transport);
      try {
        assert.equal(transport.protocolVersion, '2025-11-25');
        const { tools } = await client.listTools();
        assert.deepEqual(tools.map((t) => t.name).sort(), ['create_order', 'get_order']);
        const found = await client.callTool({ name: 'get_order', arguments: { id: 'A1' } });
        assert.deepEqual(found.structuredContent, { id: 'A1', item: 'widget', quantity: 2 });
        const missing = await client.callTool({ name: 'get_order', arguments: { id: 'Z9' } });
        assert.equal(missing.isError, true);
        assert.deepEqual(missing.content, [{ type: 'text', text: 'Order Z9 not found' }]);
      } finally {
        await transport.terminateSession().catch(() => undefined);
        await client.close();
      }
    });

    it('works with @modelcontextprotocol/client 2.4 pinned to 2026-07-28', async () => {
      const client = new ModernClient({ name: 'consumer-modern', version: '1.0.0' }, { versionNegotiation: { mode: { pin: '2026-07-28' } } });
      await client.connect(new ModernTransport(new URL(`${base}/api/mcp`)));
      try {
        assert.equal(client.getNegotiatedProtocolVersion(), '2026-07-28');
        const created = await client.callTool({ name: 'create_order', arguments: { item: 'bolt', quantity: 5 } });
        assert.equal(created.isError, undefined);
        assert.match(JSON.stringify(created.content), /Created O\d+/);
        const invalid = await client.callTool({ name: 'create_order', arguments: { item: 'bolt', quantity: 0 } });
        assert.equal(invalid.isError, true);
        assert.match(JSON.stringify(invalid.content), /quantity/);
        const missing = await client.callTool({ name: 'get_order', arguments: { id: 'Z9' } });
        assert.deepEqual(missing.content, [{ type: 'text', text: 'Order Z9 not found' }]);
      } finally {
        await client.close();
      }
    });
  });
});
