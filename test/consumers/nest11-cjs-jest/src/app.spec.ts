import { Test } from '@nestjs/testing';
import type { INestApplication } from '@nestjs/common';
import type { AddressInfo } from 'node:net';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { AppModule } from './app.module';

describe('nestjs-model-context required from a Nest 11 CommonJS app under Jest + ts-jest', () => {
  let app: INestApplication;
  let base: string;

  beforeAll(async () => {
    const moduleRef = await Test.createTestingModule({ imports: [AppModule] }).compile();
    app = moduleRef.createNestApplication({ logger: false });
    await app.listen(0, '127.0.0.1');
    base = `http://127.0.0.1:${(app.getHttpServer().address() as AddressInfo).port}`;
  });

  afterAll(async () => {
    await app.close();
  });

  it('loads the CommonJS build', () => {
    expect(require.resolve('nestjs-model-context')).toMatch(/dist[\\/]cjs[\\/]index\.js$/);
  });

  it('keeps the REST route', async () => {
    const res = await fetch(`${base}/`);
    expect(res.status).toBe(200);
    expect(await res.text()).toBe('Hello World!');
  });

  it('serves tools to @modelcontextprotocol/sdk 1.32 (2025-11-25)', async () => {
    const client = new Client({ name: 'jest-consumer', version: '1.0.0' });
    const transport = new StreamableHTTPClientTransport(new URL(`${base}/mcp`));
    await client.connect(transport);
    try {
      const { tools } = await client.listTools();
      expect(tools.map((t) => t.name)).toEqual(['greet']);
      expect(tools[0].inputSchema.properties).toEqual({
        name: { type: 'string', minLength: 1, maxLength: 50 },
        greeting: { type: 'string' },
      });
      const result = await client.callTool({ name: 'greet', arguments: { name: 'Ada' } });
      expect(result.content).toEqual([{ type: 'text', text: 'Hello, Ada!' }]);
      const missing = await client.callTool({ name: 'greet', arguments: { name: 'nobody' } });
      expect(missing.isError).toBe(true);
      expect(missing.content).toEqual([{ type: 'text', text: 'Nobody to greet' }]);
    } finally {
      await transport.terminateSession().catch(() => undefined);
      await client.close();
    }
  });

  it('serves the 2026-07-28 era (stateless, per-request _meta)', async () => {
    const res = await fetch(`${base}/mcp`, {
      method: 'POST',
      headers: {
        'Content-Type': 'application/json',
        Accept: 'application/json, text/event-stream',
        'MCP-Protocol-Version': '2026-07-28',
        'Mcp-Method': 'tools/call',
        'Mcp-Name': 'greet',
      },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'tools/call',
        params: {
          name: 'greet',
          arguments: { name: 'Grace', greeting: 'Hi' },
          _meta: { 'io.modelcontextprotocol/protocolVersion': '2026-07-28', 'io.modelcontextprotocol/clientCapabilities': {} },
        },
      }),
    });
    expect(res.status).toBe(200);
    const body = (await res.json()) as { result: { content: unknown[] } };
    expect(body.result.content).toEqual([{ type: 'text', text: 'Hi, Grace!' }]);
  });
});
