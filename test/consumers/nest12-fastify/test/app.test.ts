import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { AddressInfo } from 'node:net';
import { ConsoleLogger } from '@nestjs/common';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { Client as SdkClient } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as SdkTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { Client as ModernClient, StreamableHTTPClientTransport as ModernTransport } from '@modelcontextprotocol/client';
import { createApp } from '../src/app.module.js';

type Json = Record<string, any>;

/** Keeps the warnings so a test can read what the app's operators would see. */
class RecordingLogger extends ConsoleLogger {
  readonly warnings: string[] = [];
  override warn(message: unknown, ...rest: unknown[]): void {
    this.warnings.push(String(message));
    super.warn(message, ...(rest as []));
  }
}

describe('the enterprise Nest 12 app on Fastify with nestjs-model-context from the tarball', () => {
  let app: NestFastifyApplication;
  let base: string;
  const logger = new RecordingLogger('consumer', { logLevels: ['error', 'warn'] });
  before(async () => {
    app = await createApp(logger);
    await app.listen(0, '127.0.0.1');
    base = `http://127.0.0.1:${(app.getHttpServer().address() as AddressInfo).port}`;
  });
  after(() => app.close());

  describe('REST routes still behave', () => {
    it('keeps the bearer guard, the @Public() convention, the serializer and helmet', async () => {
      const health = await fetch(`${base}/api/v1/health`);
      assert.equal(health.status, 200);
      assert.deepEqual(await health.json(), { status: 'up' });
      assert.equal(health.headers.get('x-content-type-options'), 'nosniff', '@fastify/helmet headers');
      const denied = await fetch(`${base}/api/v1/orders/A1`);
      assert.equal(denied.status, 401);
      assert.deepEqual(await denied.json(), { ok: false, status: 401, error: { message: 'Missing or wrong bearer token', error: 'Unauthorized', statusCode: 401 } });
      const found = await fetch(`${base}/api/v1/orders/A1`, { headers: { Authorization: 'Bearer secret' } });
      assert.equal(found.status, 200);
      assert.deepEqual(await found.json(), { id: 'A1', item: 'widget', quantity: 2 });
    });

    it('compresses large answers with @fastify/compress', async () => {
      const headers = { Authorization: 'Bearer secret', 'Content-Type': 'application/json', 'Accept-Encoding': 'gzip' };
      // Sixty unknown properties make the filter's 400 body pass compress's 1 KiB threshold.
      const extra = Object.fromEntries(Array.from({ length: 60 }, (_, i) => [`unknown${i}`, true]));
      const rejected = await fetch(`${base}/api/v1/orders`, { method: 'POST', headers, body: JSON.stringify({ item: 'x', quantity: 1, ...extra }) });
      assert.equal(rejected.status, 400);
      assert.equal(rejected.headers.get('content-encoding'), 'gzip');
      const body = (await rejected.json()) as Json;
      assert.equal(body.error.message.length, 60);
      assert.equal(body.error.message[0], 'property unknown0 should not exist');
    });

    it('keeps the global ValidationPipe and the catch-all filter', async () => {
      const headers = { Authorization: 'Bearer secret', 'Content-Type': 'application/json' };
      const extra = await fetch(`${base}/api/v1/orders`, { method: 'POST', headers, body: JSON.stringify({ item: 'x', quantity: 1, admin: true }) });
      assert.equal(extra.status, 400);
      const body = (await extra.json()) as Json;
      assert.equal(body.ok, false);
      assert.deepEqual(body.error.message, ['property admin should not exist']);
      const invalid = await fetch(`${base}/api/v1/orders`, { method: 'POST', headers, body: JSON.stringify({ item: 'x', quantity: '2' }) });
      assert.equal(invalid.status, 400);
      assert.match(JSON.stringify(await invalid.json()), /quantity must be an integer number/);
      const created = await fetch(`${base}/api/v1/orders`, { method: 'POST', headers, body: JSON.stringify({ item: 'gear', quantity: 3 }) });
      assert.equal(created.status, 201);
      const order = (await created.json()) as Json;
      assert.deepEqual({ item: order.item, quantity: order.quantity, internalNote: order.internalNote }, { item: 'gear', quantity: 3, internalNote: undefined });
      const missing = await fetch(`${base}/api/v1/orders/Z9`, { headers });
      assert.equal(missing.status, 404);
      assert.deepEqual(await missing.json(), { ok: false, status: 404, error: { message: 'Order Z9 not found', error: 'Not Found', statusCode: 404 } });
    });
  });

  describe('the MCP endpoint at /api/mcp (version-neutral, @Public())', () => {
    it('works with @modelcontextprotocol/sdk 1.32 on 2025-11-25, with progress over SSE', async () => {
      const client = new SdkClient({ name: 'consumer-sdk', version: '1.0.0' });
      const transport = new SdkTransport(new URL(`${base}/api/mcp`));
      await client.connect(transport);
      try {
        assert.equal(transport.protocolVersion, '2025-11-25');
        const { tools } = await client.listTools();
        assert.deepEqual(tools.map((t) => t.name).sort(), ['create_order', 'get_order', 'pack_order']);
        const found = await client.callTool({ name: 'get_order', arguments: { id: 'A1' } });
        assert.deepEqual(found.structuredContent, { id: 'A1', item: 'widget', quantity: 2 });
        const seen: string[] = [];
        const packed = await client.callTool({ name: 'pack_order', arguments: { id: 'A1' } }, undefined, {
          onprogress: (p) => seen.push(`${p.progress}/${p.total} ${p.message}`),
        });
        assert.deepEqual(seen, ['1/2 picked', '2/2 boxed']);
        assert.deepEqual(packed.content, [{ type: 'text', text: 'Packed A1' }]);
        // The app's HTTP-only filter cannot reply to a tool call: the model still gets the message.
        const missing = await client.callTool({ name: 'get_order', arguments: { id: 'Z9' } });
        assert.equal(missing.isError, true);
        assert.deepEqual(missing.content, [{ type: 'text', text: 'Order Z9 not found' }]);
        const warned = logger.warnings.filter((w) => w.includes('AllExceptionsFilter'));
        assert.equal(warned.length, 1, logger.warnings.join('\n'));
        assert.match(warned[0], /host\.getType<string>\(\) === 'mcp'/);
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
        const seen: number[] = [];
        const packed = await client.callTool({ name: 'pack_order', arguments: { id: 'A1' } }, { onprogress: (p: { progress: number }) => seen.push(p.progress) });
        assert.deepEqual(seen, [1, 2]);
        assert.deepEqual(packed.content, [{ type: 'text', text: 'Packed A1' }]);
        const missing = await client.callTool({ name: 'pack_order', arguments: { id: 'Z9' } });
        assert.equal(missing.isError, true);
        assert.deepEqual(missing.content, [{ type: 'text', text: 'Order Z9 not found' }]);
      } finally {
        await client.close();
      }
    });
  });
});
