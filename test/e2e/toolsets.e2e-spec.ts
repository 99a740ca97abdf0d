/**
 * ISSUE-18 item 2: one provider class registered twice with different injected options and name
 * prefixes, through McpModule.forFeature(), in one module or in feature modules.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { NestFactory } from '@nestjs/core';
import { ClashingApp, FeatureModulesApp, OneModuleApp } from '../fixtures/toolsets.module.js';
import { startApp } from '../utils/app.js';
import { connectModernClient, connectSdkClient } from '../utils/clients.js';

type Json = Record<string, any>;

function text(result: Json): string {
  return (result.content as Json[]).map((c) => c.text).join('\n');
}

interface EraClient {
  listTools(): Promise<{ tools: Json[] }>;
  listPrompts(): Promise<{ prompts: Json[] }>;
  callTool(params: { name: string; arguments?: Json }): Promise<Json>;
  getPrompt(params: { name: string }): Promise<Json>;
}

async function checkIndependent(client: EraClient): Promise<void> {
  const { tools } = await client.listTools();
  assert.deepEqual(tools.map((t) => t.name).sort(), ['eu_region', 'eu_stock', 'us_region', 'us_stock']);
  const { prompts } = await client.listPrompts();
  assert.deepEqual(prompts.map((p) => p.name).sort(), ['eu_restock_plan', 'us_restock_plan']);
  assert.equal(text(await client.callTool({ name: 'eu_stock', arguments: { sku: 'bolt' } })), 'eu-west: bolt x 12');
  assert.equal(text(await client.callTool({ name: 'us_stock', arguments: { sku: 'bolt' } })), 'us-east: bolt x 40');
  assert.equal(text(await client.callTool({ name: 'us_stock', arguments: { sku: 'nut' } })), 'us-east: nut x 3');
  assert.equal(text(await client.callTool({ name: 'eu_region', arguments: {} })), 'eu-west');
  assert.equal(text(await client.callTool({ name: 'us_region', arguments: {} })), 'us-east');
  const plan = await client.getPrompt({ name: 'us_restock_plan' });
  assert.equal(plan.messages[0].content.text, 'Plan a restock for us-east');
  // Validation still runs per instance, naming the prefixed tool.
  const bad = await client.callTool({ name: 'eu_stock', arguments: { sku: 7 } });
  assert.equal(bad.isError, true);
  assert.match(text(bad), /^Invalid arguments for tool "eu_stock":\n- sku: /);
}

for (const [layout, module] of [
  ['in one module', OneModuleApp.register()],
  ['in feature modules', FeatureModulesApp],
] as const) {
  describe(`the same provider twice with options, ${layout} (issue 18 item 2)`, () => {
    it('lists and calls both instances independently on the legacy era (2025-11-25)', async () => {
      const server = await startApp(module);
      const conn = await connectSdkClient(server.url);
      try {
        await checkIndependent(conn.client as unknown as EraClient);
      } finally {
        await conn.close();
        await server.close();
      }
    });

    it('lists and calls both instances independently on the stateless era (2026-07-28)', async () => {
      const server = await startApp(module);
      const conn = await connectModernClient(server.url);
      try {
        await checkIndependent(conn.client as unknown as EraClient);
      } finally {
        await conn.close();
        await server.close();
      }
    });
  });
}

describe('toolset name clashes (issue 18 item 2)', () => {
  it('fail the bootstrap naming both toolsets', async () => {
    // Discovery runs in onModuleInit, so init() is where the bootstrap fails.
    const app = await NestFactory.create(ClashingApp.register(), { logger: false, abortOnError: false });
    await assert.rejects(app.init(), (error: Error) => {
      assert.match(error.message, /^Tool "eu_stock" is declared twice/, error.message);
      assert.ok(error.message.includes('WarehouseTools#stock in EU warehouse'), error.message);
      assert.ok(error.message.includes('WarehouseTools#stock in US warehouse mislabelled eu_'), error.message);
      return true;
    });
    await app.close().catch(() => undefined);
  });

  it('refuse an invalid prefix when the module is declared', async () => {
    const { McpModule } = await import('nestjs-model-context');
    assert.throws(
      () => McpModule.forFeature({ prefix: 'eu warehouse', providers: [class A {}] }),
      /prefix "eu warehouse" is not a valid name prefix/,
    );
  });
});
