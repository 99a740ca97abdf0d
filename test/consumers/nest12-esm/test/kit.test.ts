import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { INestApplication } from '@nestjs/common';
import { Test, type TestingModule } from '@nestjs/testing';
import { McpTestClient, type McpTestEra } from 'nestjs-model-context/testing';
import { AppModule, createApp } from '../src/app.module.js';
import { Order, OrdersService } from '../src/orders.js';

type Json = Record<string, any>;

const listeningSockets = (): number => process.getActiveResourcesInfo().filter((r) => r === 'TCPServerWrap').length;

describe('the enterprise app through nestjs-model-context/testing (no port)', () => {
  let app: INestApplication;
  before(async () => {
    // The app exactly as main.ts sets it up (global prefix, versioning, pipes, interceptors,
    // helmet, compression, APP_GUARD, the catch-all APP_FILTER), but never listened on.
    app = await createApp();
  });
  after(() => app.close());

  for (const era of ['2025-11-25', '2026-07-28'] satisfies McpTestEra[]) {
    it(`calls the tools on ${era}, with the app's global pipeline`, async () => {
      const mcp = await McpTestClient.create(app, { era });
      try {
        assert.equal(mcp.serverInfo.name, 'orders');
        assert.deepEqual((await mcp.listTools()).map((t) => t.name).sort(), ['create_order', 'get_order']);
        const found = await mcp.callTool('get_order', { id: 'A1' });
        assert.deepEqual(found.structuredContent, { id: 'A1', item: 'widget', quantity: 2 });
        // The HTTP-only catch-all filter does not turn the tool's NotFoundException into an internal error.
        const missing = await mcp.callTool('get_order', { id: 'Z9' });
        assert.equal(missing.isError, true);
        assert.deepEqual(missing.content, [{ type: 'text', text: 'Order Z9 not found' }]);
        const invalid = await mcp.callTool('create_order', { item: 'bolt', quantity: 0 });
        assert.equal(invalid.isError, true);
        assert.match(JSON.stringify(invalid.content), /quantity/);
        const created = await mcp.callTool('create_order', { item: 'bolt', quantity: 5 });
        assert.match(JSON.stringify(created.content), /Created O\d+/);
        assert.equal(listeningSockets(), 0);
      } finally {
        await mcp.close();
      }
    });
  }
});

describe('a TestingModule with overrideProvider through the kit', () => {
  let moduleRef: TestingModule;
  before(async () => {
    const fake = { find: (id: string) => new Order({ id, item: 'fake', quantity: 1, internalNote: 'from the fake' }) };
    moduleRef = await Test.createTestingModule({ imports: [AppModule] }).overrideProvider(OrdersService).useValue(fake).compile();
  });
  after(() => moduleRef.close());

  it('the tool runs on the overridden service', async () => {
    const mcp = await McpTestClient.create(moduleRef, { era: '2026-07-28' });
    try {
      const result = await mcp.callTool('get_order', { id: 'X7' });
      assert.deepEqual(result.structuredContent as Json, { id: 'X7', item: 'fake', quantity: 1 });
    } finally {
      await mcp.close();
    }
  });
});
