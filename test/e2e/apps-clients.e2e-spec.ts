/**
 * MCP Apps and clients that do not support it, with the official clients on both eras
 * (`@modelcontextprotocol/sdk` 1.32 on 2025-11-25, `@modelcontextprotocol/client` 2.4 on
 * 2026-07-28), against sample/09-apps-skills: a client that does not advertise
 * `io.modelcontextprotocol/ui` lists the same model-visible tools, gets a useful text result from
 * the dashboard tool, and never sees (nor can call) the app-only tool; one that advertises it
 * sees the app-only tool and can call it.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { AppModule } from '../../sample/09-apps-skills/app.module.js';
import { startApp, type RunningApp } from '../utils/app.js';
import { connectModernClient, connectSdkClient } from '../utils/clients.js';

const APPS = { extensions: { 'io.modelcontextprotocol/ui': { mimeTypes: ['text/html;profile=mcp-app'] } } };

type Tool = { name: string; _meta?: { ui?: { resourceUri?: string; visibility?: string[] } } };
type ToolResult = {
  content: Array<{ type: string; text?: string }>;
  structuredContent?: { orders: Array<{ id: string; status: string }> };
  isError?: boolean;
};

/** The client calls of both official clients, reduced to what this spec uses. */
interface Calls {
  listTools(): Promise<{ tools: Tool[] }>;
  callTool(name: string, args: Record<string, unknown>): Promise<ToolResult>;
  close(): Promise<void>;
}

const clients: Array<{ era: string; connect: (url: string, apps: boolean) => Promise<Calls> }> = [
  {
    era: 'legacy (sdk 1.32.2, 2025-11-25)',
    connect: async (url, apps) => {
      const c = await connectSdkClient(url, apps ? { capabilities: APPS } : {});
      return {
        listTools: () => c.client.listTools() as Promise<{ tools: Tool[] }>,
        callTool: (name, args) => c.client.callTool({ name, arguments: args }) as Promise<ToolResult>,
        close: () => c.close(),
      };
    },
  },
  {
    era: 'modern (client 2.4.0, 2026-07-28)',
    connect: async (url, apps) => {
      const c = await connectModernClient(url, apps ? { capabilities: APPS } : {});
      return {
        listTools: () => c.client.listTools() as Promise<{ tools: Tool[] }>,
        callTool: (name, args) => c.client.callTool({ name, arguments: args }) as Promise<ToolResult>,
        close: () => c.close(),
      };
    },
  },
];

describe('MCP Apps with the official clients, sample/09-apps-skills', () => {
  let server: RunningApp;

  before(async () => {
    server = await startApp(AppModule);
  });
  after(() => server.close());

  for (const { era, connect } of clients) {
    describe(era, () => {
      it('without the extension: the same tools, a text result, and never the app-only tool', async () => {
        const client = await connect(server.url, false);
        try {
          const { tools } = await client.listTools();
          assert.deepEqual(
            tools.map((t) => t.name),
            ['order_dashboard'],
          );
          assert.equal(
            tools[0]!._meta?.ui?.resourceUri,
            'ui://orders/dashboard',
            'the link is there, harmless to a client that ignores it',
          );
          const result = await client.callTool('order_dashboard', {});
          assert.equal(result.isError, undefined);
          const text = result.content.find((c) => c.type === 'text')?.text ?? '';
          assert.match(text, /^3 orders, \d open\.\nA-1001 Ada Lovelace: 120\.50 EUR, (open|shipped)\n/);
          await assert.rejects(
            client.callTool('ship_order', { id: 'A-1002' }),
            (error: { code?: number; message?: string }) => {
              assert.equal(error.code, -32602);
              assert.match(error.message ?? '', /Unknown tool "ship_order"/);
              return true;
            },
          );
          // An invalid call meets the same wall: no validation message tells the tool exists.
          await assert.rejects(
            client.callTool('ship_order', { id: 'not-an-id' }),
            (error: { code?: number; message?: string }) =>
              error.code === -32602 && /Unknown tool "ship_order"/.test(error.message ?? ''),
          );
          const again = await client.callTool('order_dashboard', {});
          assert.equal(
            again.structuredContent?.orders.find((o) => o.id === 'A-1002')?.status,
            'open',
            'the refused call changed nothing',
          );
        } finally {
          await client.close();
        }
      });

      it('with the extension: the app-only tool is listed, marked, and callable', async () => {
        const client = await connect(server.url, true);
        try {
          const { tools } = await client.listTools();
          assert.deepEqual(
            tools.map((t) => [t.name, t._meta?.ui?.visibility]),
            [
              ['order_dashboard', undefined],
              ['ship_order', ['app']],
            ],
          );
          const result = await client.callTool('ship_order', { id: 'A-1003' });
          assert.equal(result.isError, undefined, JSON.stringify(result));
          assert.equal(result.structuredContent?.orders.find((o) => o.id === 'A-1003')?.status, 'shipped');
        } finally {
          await client.close();
        }
      });
    });
  }
});
