/**
 * ISSUE-18 item 1: Standard Schema inputs. A zod 4 tool and a valibot tool go through the same
 * cases as the equivalent DTO tool (schema listed, valid call, invalid call naming the field), on
 * the legacy era (SDK 1.32.2, 2025-11-25) and the stateless era (client v2, 2026-07-28); prompts
 * and elicitation take a Standard Schema too.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { StandardSchemaModule } from '../fixtures/standard-schema.module.js';
import { startApp, type RunningApp } from '../utils/app.js';
import { connectModernClient, connectSdkClient } from '../utils/clients.js';

type Json = Record<string, any>;

interface EraClient {
  listTools(): Promise<{ tools: Json[] }>;
  callTool(params: { name: string; arguments: Json }): Promise<Json>;
  getPrompt(params: { name: string; arguments: Record<string, string> }): Promise<Json>;
  listPrompts(): Promise<{ prompts: Json[] }>;
}

const TOOLS = [
  { tool: 'dto_create', kind: 'dto' },
  { tool: 'zod_create', kind: 'zod' },
  { tool: 'valibot_create', kind: 'valibot' },
];

function text(result: Json): string {
  return (result.content as Json[]).map((c) => c.text).join('\n');
}

/** The schema as a client reads it, minus what libraries legitimately add around the same shape. */
function shape(schema: Json): Json {
  const props = schema.properties as Record<string, Json>;
  return {
    type: schema.type,
    required: schema.required,
    title: { type: props.title?.type, minLength: props.title?.minLength },
    priority: { type: props.priority?.type, minimum: props.priority?.minimum, maximum: props.priority?.maximum },
  };
}

const eras: Array<{
  era: string;
  connect: (url: string, onElicit?: (p: Json) => Json) => Promise<{ client: EraClient; close(): Promise<void> }>;
}> = [
  {
    era: 'legacy 2025-11-25',
    connect: async (url, onElicit) => {
      const conn = await connectSdkClient(url, onElicit ? { onElicit: onElicit as never } : {});
      assert.equal(conn.protocolVersion, '2025-11-25');
      return { client: conn.client as unknown as EraClient, close: () => conn.close() };
    },
  },
  {
    era: 'stateless 2026-07-28',
    connect: async (url, onElicit) => {
      const conn = await connectModernClient(url, onElicit ? { onElicit: onElicit as never } : {});
      return { client: conn.client as unknown as EraClient, close: () => conn.close() };
    },
  },
];

describe('Standard Schema inputs (issue 18 item 1)', () => {
  let server: RunningApp;
  before(async () => {
    server = await startApp(StandardSchemaModule.register());
  });
  after(() => server.close());

  for (const { era, connect } of eras) {
    describe(era, () => {
      it('lists the zod and valibot tools with the same input schema as the DTO tool', async () => {
        const conn = await connect(server.url);
        try {
          const { tools } = await conn.client.listTools();
          const byName = new Map(tools.map((t) => [t.name, t]));
          const expected = {
            type: 'object',
            required: ['title'],
            title: { type: 'string', minLength: 1 },
            priority: { type: 'integer', minimum: 1, maximum: 5 },
          };
          for (const { tool } of TOOLS) {
            const listed = byName.get(tool);
            assert.ok(listed, `${tool} is not listed: ${[...byName.keys()].join(', ')}`);
            assert.deepEqual(shape(listed.inputSchema), expected, `${tool}: ${JSON.stringify(listed.inputSchema)}`);
            assert.equal(listed.inputSchema.$schema, undefined, `${tool} lists a $schema key`);
          }
        } finally {
          await conn.close();
        }
      });

      for (const { tool, kind } of TOOLS) {
        it(`${tool}: a valid call reaches the method with typed arguments`, async () => {
          const conn = await connect(server.url);
          try {
            const result = await conn.client.callTool({ name: tool, arguments: { title: 'Write docs', priority: 2 } });
            assert.notEqual(result.isError, true, text(result));
            assert.equal(text(result), `${kind}: Write docs (priority 2)`);
            const bare = await conn.client.callTool({ name: tool, arguments: { title: 'Bare' } });
            assert.equal(text(bare), `${kind}: Bare (priority none)`);
          } finally {
            await conn.close();
          }
        });

        it(`${tool}: an invalid call is a readable isError result naming each bad field`, async () => {
          const conn = await connect(server.url);
          try {
            const result = await conn.client.callTool({ name: tool, arguments: { title: '', priority: 9 } });
            assert.equal(result.isError, true, JSON.stringify(result));
            const message = text(result);
            assert.match(message, new RegExp(`^Invalid arguments for tool "${tool}":`), message);
            assert.match(message, /^- title: /m, message);
            assert.match(message, /^- priority: /m, message);
            const missing = await conn.client.callTool({ name: tool, arguments: { priority: 1 } });
            assert.equal(missing.isError, true, JSON.stringify(missing));
            assert.match(text(missing), /^- title: /m, text(missing));
          } finally {
            await conn.close();
          }
        });
      }

      it('a prompt with zod arguments lists them, coerces the string values and names a bad one', async () => {
        const conn = await connect(server.url);
        try {
          const { prompts } = await conn.client.listPrompts();
          const greet = prompts.find((p) => p.name === 'greet');
          assert.deepEqual(greet?.arguments, [
            { name: 'name', required: true },
            { name: 'times', required: false },
          ]);
          const result = await conn.client.getPrompt({ name: 'greet', arguments: { name: 'Ada', times: '2' } });
          assert.equal(result.messages[0].content.text, 'Hello Ada Hello Ada');
          await assert.rejects(
            conn.client.getPrompt({ name: 'greet', arguments: { name: 'A' } }),
            (error: Error) =>
              /Invalid arguments for prompt "greet":\n- name: /.test(error.message) || assert.fail(error.message),
          );
        } finally {
          await conn.close();
        }
      });

      it('elicits with a zod form: requested schema from the converter, answer validated', async () => {
        let requested: Json | undefined;
        const conn = await connect(server.url, (params) => {
          requested = params.requestedSchema;
          return { action: 'accept', content: { confirm: true, reason: 'obsolete' } };
        });
        try {
          const result = await conn.client.callTool({ name: 'confirm', arguments: {} });
          assert.equal(text(result), 'confirmed=true reason=obsolete');
          assert.deepEqual(requested, {
            type: 'object',
            properties: { confirm: { type: 'boolean' }, reason: { type: 'string' } },
            required: ['confirm'],
          });
        } finally {
          await conn.close();
        }
      });
    });
  }
});
