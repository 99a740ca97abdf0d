import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { AppModule } from '../../sample/01-basic/app.module.js';
import { startApp, type RunningApp } from '../utils/app.js';
import { connectModernClient, connectSdkClient } from '../utils/clients.js';

type Json = Record<string, any>;

interface AnyClient {
  listTools(): Promise<{ tools: Json[] }>;
  callTool(params: { name: string; arguments?: Record<string, unknown> }): Promise<Json>;
}

const clients: Array<{
  label: string;
  era: string;
  connect: (url: string) => Promise<{ client: AnyClient; close(): Promise<void>; protocolVersion?: string }>;
}> = [
  {
    label: '@modelcontextprotocol/sdk 1.32 (2025-11-25)',
    era: '2025-11-25',
    connect: (url) => connectSdkClient(url) as never,
  },
  {
    label: '@modelcontextprotocol/sdk 1.12 (2025-03-26)',
    era: '2025-03-26',
    connect: (url) => connectSdkClient(url, { version: 'legacy' }) as never,
  },
  {
    label: '@modelcontextprotocol/client 2.4 pinned to 2026-07-28',
    era: '2026-07-28',
    connect: (url) => connectModernClient(url) as never,
  },
];

describe('sample 01-basic with the official clients', () => {
  let server: RunningApp;
  before(async () => {
    server = await startApp(AppModule);
  });
  after(() => server.close());

  for (const { label, era, connect } of clients) {
    describe(label, () => {
      it('negotiates its protocol version', async () => {
        const connection = await connect(server.url);
        try {
          assert.equal(connection.protocolVersion, era);
        } finally {
          await connection.close();
        }
      });

      it('lists the tools with DTO-derived schemas', async () => {
        const connection = await connect(server.url);
        try {
          const { tools } = await connection.client.listTools();
          assert.deepEqual(
            tools.map((t) => t.name),
            ['create_task', 'list_tasks', 'get_task', 'complete_task', 'delete_task'],
          );
          const create = tools.find((t) => t.name === 'create_task')!;
          assert.equal(create.inputSchema.type, 'object');
          assert.equal(create.inputSchema.$schema, undefined);
          assert.deepEqual(create.inputSchema.required, ['title']);
          assert.equal(create.inputSchema.properties.title.type, 'string');
          assert.equal(create.inputSchema.properties.title.minLength, 1);
          assert.equal(create.inputSchema.properties.title.maxLength, 200);
          assert.deepEqual(
            [...create.inputSchema.properties.priority.enum].filter((v: unknown) => v !== null),
            ['low', 'medium', 'high'],
          );
          assert.equal(create.inputSchema.properties.tags.maxItems, 10);
          assert.equal(create.inputSchema.properties.assignee.properties.email.format, 'email');
          assert.equal(create.outputSchema.type, 'object');
          assert.equal(tools.find((t) => t.name === 'delete_task')!.annotations.destructiveHint, true);
        } finally {
          await connection.close();
        }
      });

      it('calls a tool and gets structured output', async () => {
        const connection = await connect(server.url);
        try {
          const result = await connection.client.callTool({
            name: 'create_task',
            arguments: {
              title: 'Write docs',
              priority: 'high',
              tags: ['docs'],
              assignee: { name: 'Ada', email: 'ada@example.com' },
            },
          });
          assert.notEqual(result.isError, true);
          assert.equal(result.structuredContent.title, 'Write docs');
          assert.equal(result.structuredContent.priority, 'high');
          assert.deepEqual(JSON.parse(result.content[0].text), result.structuredContent);
          const got = await connection.client.callTool({
            name: 'get_task',
            arguments: { id: result.structuredContent.id },
          });
          assert.equal(got.structuredContent.title, 'Write docs');
        } finally {
          await connection.close();
        }
      });

      it('reports bad arguments as an isError result naming each field', async () => {
        const connection = await connect(server.url);
        try {
          const result = await connection.client.callTool({
            name: 'create_task',
            arguments: { title: '', priority: 'urgent', assignee: { name: 'Ada', email: 'not-an-email' } },
          });
          assert.equal(result.isError, true);
          const text: string = result.content[0].text;
          assert.match(text, /title/);
          assert.match(text, /priority/);
          assert.match(text, /assignee\.email/);
          assert.doesNotMatch(text, /not-an-email/);
          assert.doesNotMatch(text, /urgent/);
        } finally {
          await connection.close();
        }
      });

      it('turns a NotFoundException into a readable tool error', async () => {
        const connection = await connect(server.url);
        try {
          const result = await connection.client.callTool({
            name: 'get_task',
            arguments: { id: '00000000-0000-4000-8000-000000000000' },
          });
          assert.equal(result.isError, true);
          assert.match(result.content[0].text, /does not exist/);
        } finally {
          await connection.close();
        }
      });
    });
  }
});
