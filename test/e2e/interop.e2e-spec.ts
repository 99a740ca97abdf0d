/**
 * Interop matrix: official clients we did not write, each over Streamable HTTP (the app on Express
 * and again on Fastify 12) and over stdio,
 * against the conformance fixture (tools, resources, a template, prompts, completion, one
 * client interaction) and sample/01-basic (tools only, the `npm run sample:stdio` one-liner):
 * - `@modelcontextprotocol/sdk` 1.32 (negotiates 2025-11-25),
 * - `sdk-legacy` = `@modelcontextprotocol/sdk` 1.12.3 (speaks 2025-03-26),
 * - `@modelcontextprotocol/client` 2.4 pinned to 2026-07-28 (stateless, per-request `_meta`),
 * - the CLI of `@modelcontextprotocol/inspector` 2.12 (`mcp-inspector --cli`, one process per call;
 *   an isError result exits 5), which replaced the deprecated
 *   `@modelcontextprotocol/inspector-cli` 1.0.3 and runs on Node 20; with `--header` on a protected
 *   endpoint too, the command the README gives.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import type { Readable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { after, before, describe, it } from 'node:test';
import { Client as SdkClient } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport as SdkStdioTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import {
  CreateMessageRequestSchema as SdkCreateMessageRequestSchema,
  ElicitRequestSchema as SdkElicitRequestSchema,
} from '@modelcontextprotocol/sdk/types.js';
import { Client as LegacyClient } from 'sdk-legacy/client/index.js';
import { StdioClientTransport as LegacyStdioTransport } from 'sdk-legacy/client/stdio.js';
import { CreateMessageRequestSchema as LegacyCreateMessageRequestSchema } from 'sdk-legacy/types.js';
import { Client as ModernClient } from '@modelcontextprotocol/client';
import { StdioClientTransport as ModernStdioTransport } from '@modelcontextprotocol/client/stdio';
import { AppModule as FixtureModule } from '../../sample/conformance/app.module.js';
import { AppModule as BasicModule } from '../../sample/01-basic/app.module.js';
import { SecurityWireModule } from '../fixtures/security-wire.module.js';
import { startApp, type RunningApp } from '../utils/app.js';
import { GUARDED_NODE_ARGS, guardedChildEnv } from '../utils/child-guard.js';
import {
  connectModernClient,
  connectSdkClient,
  MODERN_PROTOCOL_VERSION,
  type InputHandlers,
} from '../utils/clients.js';
import { Watched } from '../utils/wait.js';

type Json = Record<string, any>;

/** The surface the three client packages share (each has its own types). */
interface AnyClient {
  listTools(): Promise<{ tools: Json[] }>;
  callTool(params: { name: string; arguments?: Record<string, unknown> }): Promise<Json>;
  listResources(): Promise<{ resources: Json[] }>;
  listResourceTemplates(): Promise<{ resourceTemplates: Json[] }>;
  readResource(params: { uri: string }): Promise<{ contents: Json[] }>;
  listPrompts(): Promise<{ prompts: Json[] }>;
  getPrompt(params: { name: string; arguments?: Record<string, string> }): Promise<{ messages: Json[] }>;
  complete(params: Json): Promise<{ completion: { values: string[] } }>;
}

interface Connection {
  client: AnyClient;
  /** What the client negotiated, when it tells. */
  protocolVersion?: string;
  close(): Promise<void>;
}

type Target = { transport: 'http'; url: string } | { transport: 'stdio'; script: string };

// Compiled to dist/test/e2e; the stdio entry points are compiled next to their samples.
const FIXTURE_STDIO = fileURLToPath(new URL('../../sample/conformance/stdio.js', import.meta.url));
const BASIC_STDIO = fileURLToPath(new URL('../../sample/01-basic/stdio.js', import.meta.url));

const ELICIT_ANSWER = { action: 'accept', content: { username: 'ada', email: 'ada@example.com' } } as const;
const SAMPLING_ANSWER = {
  role: 'assistant',
  content: { type: 'text', text: 'Paris' },
  model: 'interop-model',
  stopReason: 'endTurn',
} as const;

/** A spawned server's stderr, kept for failure messages (and drained so the pipe never fills). */
function collect(stream: Readable | null | undefined): () => string {
  let text = '';
  stream?.on('data', (chunk: Buffer) => (text = (text + chunk.toString('utf8')).slice(-4000)));
  return () => text;
}

function stdioParams(script: string) {
  return {
    command: process.execPath,
    args: [...GUARDED_NODE_ARGS, script],
    env: guardedChildEnv(),
    stderr: 'pipe' as const,
  };
}

async function connectSdkStdio(script: string, handlers: InputHandlers): Promise<Connection> {
  const client = new SdkClient(
    { name: 'interop-sdk-stdio', version: '1.0.0' },
    {
      capabilities: {
        ...(handlers.onElicit ? { elicitation: {} } : {}),
        ...(handlers.onSample ? { sampling: {} } : {}),
      },
    },
  );
  if (handlers.onElicit) {
    const onElicit = handlers.onElicit;
    client.setRequestHandler(
      SdkElicitRequestSchema,
      async (request) => (await onElicit(request.params as never)) as never,
    );
  }
  if (handlers.onSample) {
    const onSample = handlers.onSample;
    client.setRequestHandler(
      SdkCreateMessageRequestSchema,
      async (request) => (await onSample(request.params as never)) as never,
    );
  }
  const transport = new SdkStdioTransport(stdioParams(script));
  const stderr = collect(transport.stderr as Readable | null);
  await client.connect(transport).catch((error: unknown) => {
    throw new Error(
      `sdk 1.32 could not connect over stdio to ${script}: ${String(error)}\nserver stderr:\n${stderr()}`,
    );
  });
  return { client: client as unknown as AnyClient, close: () => client.close() };
}

async function connectLegacyStdio(script: string, handlers: InputHandlers): Promise<Connection> {
  const client = new LegacyClient(
    { name: 'interop-legacy-stdio', version: '1.0.0' },
    {
      capabilities: handlers.onSample ? { sampling: {} } : {},
    },
  );
  if (handlers.onSample) {
    const onSample = handlers.onSample;
    client.setRequestHandler(
      LegacyCreateMessageRequestSchema,
      async (request) => (await onSample(request.params as never)) as never,
    );
  }
  const transport = new LegacyStdioTransport(stdioParams(script));
  const stderr = collect(transport.stderr as Readable | null);
  await client.connect(transport).catch((error: unknown) => {
    throw new Error(
      `sdk 1.12 could not connect over stdio to ${script}: ${String(error)}\nserver stderr:\n${stderr()}`,
    );
  });
  return { client: client as unknown as AnyClient, protocolVersion: '2025-03-26', close: () => client.close() };
}

async function connectModernStdio(script: string, handlers: InputHandlers): Promise<Connection> {
  const client = new ModernClient(
    { name: 'interop-modern-stdio', version: '1.0.0' },
    {
      capabilities: {
        ...(handlers.onElicit ? { elicitation: {} } : {}),
        ...(handlers.onSample ? { sampling: {} } : {}),
      },
      versionNegotiation: { mode: { pin: MODERN_PROTOCOL_VERSION } },
    },
  );
  if (handlers.onElicit) {
    const onElicit = handlers.onElicit;
    client.setRequestHandler(
      'elicitation/create',
      async (request) => (await onElicit(request.params as never)) as never,
    );
  }
  const transport = new ModernStdioTransport(stdioParams(script));
  const stderr = collect(transport.stderr as Readable | null);
  await client.connect(transport).catch((error: unknown) => {
    throw new Error(
      `client 2.4 could not connect over stdio to ${script}: ${String(error)}\nserver stderr:\n${stderr()}`,
    );
  });
  return {
    client: client as unknown as AnyClient,
    protocolVersion: client.getNegotiatedProtocolVersion(),
    close: () => client.close(),
  };
}

interface ClientFlavour {
  label: string;
  /** The version it must end up speaking. */
  era: string;
  /** The interaction this client can answer, and what the tool's answer then contains. */
  interaction: { tool: string; arguments: Record<string, unknown>; handlers: InputHandlers; expect: RegExp };
  connect(target: Target, handlers: InputHandlers): Promise<Connection>;
}

const flavours: ClientFlavour[] = [
  {
    label: '@modelcontextprotocol/sdk 1.32',
    era: '2025-11-25',
    interaction: {
      tool: 'test_elicitation',
      arguments: { message: 'Who are you?' },
      handlers: { onElicit: () => ELICIT_ANSWER },
      expect: /"username":"ada"/,
    },
    connect: async (target, handlers) => {
      if (target.transport === 'stdio') return connectSdkStdio(target.script, handlers);
      const c = await connectSdkClient(target.url, handlers);
      return { client: c.client as unknown as AnyClient, protocolVersion: c.protocolVersion, close: () => c.close() };
    },
  },
  {
    label: 'sdk-legacy 1.12.3',
    era: '2025-03-26',
    interaction: {
      tool: 'test_sampling',
      arguments: { prompt: 'Capital of France?' },
      handlers: { onSample: () => SAMPLING_ANSWER },
      expect: /Paris/,
    },
    connect: async (target, handlers) => {
      if (target.transport === 'stdio') return connectLegacyStdio(target.script, handlers);
      const c = await connectSdkClient(target.url, { ...handlers, version: 'legacy' });
      return { client: c.client as unknown as AnyClient, protocolVersion: c.protocolVersion, close: () => c.close() };
    },
  },
  {
    label: '@modelcontextprotocol/client 2.4 pinned to 2026-07-28',
    era: MODERN_PROTOCOL_VERSION,
    interaction: {
      tool: 'test_input_required_result_elicitation',
      arguments: {},
      handlers: { onElicit: () => ({ action: 'accept', content: { name: 'Alice' } }) },
      expect: /Hello, Alice!/,
    },
    connect: async (target, handlers) => {
      if (target.transport === 'stdio') return connectModernStdio(target.script, handlers);
      const c = await connectModernClient(target.url, handlers);
      return { client: c.client as unknown as AnyClient, protocolVersion: c.protocolVersion, close: () => c.close() };
    },
  },
];

function textOf(result: Json): string {
  return (result.content as Json[])
    .filter((c) => c.type === 'text')
    .map((c) => c.text)
    .join('\n');
}

async function using<T>(
  connection: Promise<Connection>,
  body: (client: AnyClient, connection: Connection) => Promise<T>,
): Promise<T> {
  const opened = await connection;
  try {
    return await body(opened.client, opened);
  } finally {
    await opened.close();
  }
}

const LEGS = {
  http: 'Streamable HTTP (Express)',
  fastify: 'Streamable HTTP (Fastify)',
  stdio: 'stdio',
} as const;

describe('interop matrix: official clients × (Streamable HTTP on Express and Fastify, stdio)', () => {
  let fixture: RunningApp;
  let basic: RunningApp;
  let fixtureOnFastify: RunningApp;
  let basicOnFastify: RunningApp;
  before(async () => {
    fixture = await startApp(FixtureModule);
    basic = await startApp(BasicModule);
    fixtureOnFastify = await startApp(FixtureModule, { platform: 'fastify' });
    basicOnFastify = await startApp(BasicModule, { platform: 'fastify' });
  });
  after(async () => {
    await fixture.close();
    await basic.close();
    await fixtureOnFastify.close();
    await basicOnFastify.close();
  });

  for (const flavour of flavours) {
    for (const transport of ['http', 'fastify', 'stdio'] as const) {
      describe(`${flavour.label} over ${LEGS[transport]}`, () => {
        const target = (express: () => RunningApp, fastify: () => RunningApp, script: string): Target =>
          transport === 'stdio'
            ? { transport, script }
            : { transport: 'http', url: (transport === 'http' ? express() : fastify()).url };
        const fixtureTarget = (): Target =>
          target(
            () => fixture,
            () => fixtureOnFastify,
            FIXTURE_STDIO,
          );
        const basicTarget = (): Target =>
          target(
            () => basic,
            () => basicOnFastify,
            BASIC_STDIO,
          );

        it(`speaks ${flavour.era} and lists and calls the fixture's tools`, async () => {
          await using(flavour.connect(fixtureTarget(), {}), async (client, connection) => {
            if (connection.protocolVersion !== undefined) assert.equal(connection.protocolVersion, flavour.era);
            const { tools } = await client.listTools();
            assert.equal(tools[0]?.name, 'test_x_mcp_header');
            for (const name of [
              'test_simple_text',
              'test_error_handling',
              'json_schema_2020_12_tool',
              'test_input_required_result_elicitation',
            ]) {
              assert.ok(
                tools.some((t) => t.name === name),
                `tools/list has ${name}`,
              );
            }
            assert.equal(
              textOf(await client.callTool({ name: 'test_simple_text' })),
              'This is a simple text response for testing.',
            );
            // Over HTTP the 2026 client mirrors `region` into Mcp-Param-Region, which the server checks.
            assert.equal(
              textOf(await client.callTool({ name: 'test_x_mcp_header', arguments: { region: 'eu-west', level: 2 } })),
              'region=eu-west, level=2',
            );
            const failed = await client.callTool({ name: 'test_error_handling', arguments: {} });
            assert.equal(failed.isError, true);
            assert.match(textOf(failed), /intentionally returns an error/);
          });
        });

        it('lists and reads resources, and reads through a template', async () => {
          await using(flavour.connect(fixtureTarget(), {}), async (client) => {
            const { resources } = await client.listResources();
            assert.equal(resources[0]?.uri, 'test://static-text');
            const { resourceTemplates } = await client.listResourceTemplates();
            assert.ok(resourceTemplates.some((t) => t.uriTemplate === 'test://template/{id}/data'));
            const text = await client.readResource({ uri: 'test://static-text' });
            assert.equal(text.contents[0]?.text, 'This is the content of the static text resource.');
            const binary = await client.readResource({ uri: 'test://static-binary' });
            assert.equal(binary.contents[0]?.mimeType, 'image/png');
            assert.ok(typeof binary.contents[0]?.blob === 'string' && binary.contents[0].blob.length > 0);
            const templated = await client.readResource({ uri: 'test://template/4711/data' });
            assert.match(String(templated.contents[0]?.text), /4711/);
          });
        });

        it('lists and gets prompts, and completes a prompt argument', async () => {
          await using(flavour.connect(fixtureTarget(), {}), async (client) => {
            const { prompts } = await client.listPrompts();
            assert.ok(prompts.some((p) => p.name === 'test_prompt_with_arguments'));
            const { messages } = await client.getPrompt({
              name: 'test_prompt_with_arguments',
              arguments: { arg1: 'alpha', arg2: 'beta' },
            });
            assert.match(JSON.stringify(messages), /alpha[\s\S]*beta/);
            const image = await client.getPrompt({ name: 'test_prompt_with_image' });
            assert.ok(image.messages.some((m) => m.content?.type === 'image'));
            const { completion } = await client.complete({
              ref: { type: 'ref/prompt', name: 'test_prompt_with_arguments' },
              argument: { name: 'arg1', value: 'pa' },
            });
            assert.deepEqual(completion.values, ['paris', 'park', 'party']);
          });
        });

        it(`answers the server's ${flavour.interaction.tool} interaction`, async () => {
          const { tool, arguments: args, handlers, expect } = flavour.interaction;
          await using(flavour.connect(fixtureTarget(), handlers), async (client) => {
            const result = await client.callTool({ name: tool, arguments: args });
            assert.notEqual(result.isError, true, textOf(result));
            assert.match(textOf(result), expect);
          });
        });

        it('drives sample/01-basic (tools only)', async () => {
          await using(flavour.connect(basicTarget(), {}), async (client) => {
            const { tools } = await client.listTools();
            assert.deepEqual(
              tools.map((t) => t.name),
              ['create_task', 'list_tasks', 'get_task', 'complete_task', 'delete_task'],
            );
            const created = await client.callTool({
              name: 'create_task',
              arguments: { title: `interop ${transport}` },
            });
            assert.notEqual(created.isError, true, textOf(created));
            assert.equal(created.structuredContent?.title, `interop ${transport}`);
          });
        });
      });
    }
  }

  describe('the CLI of @modelcontextprotocol/inspector 2.12 (mcp-inspector --cli)', () => {
    const require = createRequire(import.meta.url);
    const manifest = require('@modelcontextprotocol/inspector/package.json') as { bin: Record<string, string> };
    const inspectorBin = join(
      dirname(require.resolve('@modelcontextprotocol/inspector/package.json')),
      manifest.bin['mcp-inspector']!,
    );

    function inspector(
      args: string[],
    ): Promise<{ code: number | null; json: Json | undefined; stdout: string; stderr: string }> {
      return new Promise((resolve, reject) => {
        const child = spawn(process.execPath, [inspectorBin, '--cli', ...args], {
          stdio: ['ignore', 'pipe', 'pipe'],
          env: { ...process.env, NO_COLOR: '1' },
        });
        let stdout = '';
        let stderr = '';
        child.stdout.on('data', (c: Buffer) => (stdout += c.toString('utf8')));
        child.stderr.on('data', (c: Buffer) => (stderr += c.toString('utf8')));
        // A guard against a hung inspector, not a speed check: with every core busy, starting the
        // inspector and the stdio server it spawns took over 20 s.
        const timer = setTimeout(() => child.kill('SIGKILL'), 90_000);
        child.on('error', reject);
        child.on('close', (code) => {
          clearTimeout(timer);
          let json: Json | undefined;
          try {
            json = JSON.parse(stdout) as Json;
          } catch {
            json = undefined;
          }
          resolve({ code, json, stdout, stderr });
        });
      });
    }

    it('lists the tools over Streamable HTTP', async () => {
      const run = await inspector([fixture.url, '--method', 'tools/list']);
      assert.equal(run.code, 0, run.stderr);
      assert.equal(run.json?.tools?.[0]?.name, 'test_x_mcp_header', run.stdout);
    });

    it('calls tools over Streamable HTTP (an isError result exits 5 and says so on stderr)', async () => {
      const ok = await inspector([
        fixture.url,
        '--method',
        'tools/call',
        '--tool-name',
        'test_x_mcp_header',
        '--tool-arg',
        'region=eu',
        'level=3',
      ]);
      assert.equal(ok.code, 0, ok.stderr);
      assert.equal(textOf(ok.json ?? { content: [] }), 'region=eu, level=3', ok.stdout);
      const failed = await inspector([fixture.url, '--method', 'tools/call', '--tool-name', 'test_error_handling']);
      assert.equal(failed.code, 5, failed.stdout + failed.stderr);
      assert.match(
        failed.stderr,
        /"code":"tool_is_error","message":"Tool 'test_error_handling' returned isError:true\."/,
      );
    });

    it('reads a resource and gets a prompt over Streamable HTTP', async () => {
      const read = await inspector([fixture.url, '--method', 'resources/read', '--uri', 'test://template/99/data']);
      assert.match(String(read.json?.contents?.[0]?.text), /99/, read.stdout + read.stderr);
      const prompt = await inspector([
        fixture.url,
        '--method',
        'prompts/get',
        '--prompt-name',
        'test_prompt_with_arguments',
        '--prompt-args',
        'arg1=x1',
        'arg2=y2',
      ]);
      assert.match(JSON.stringify(prompt.json?.messages), /x1[\s\S]*y2/, prompt.stdout + prompt.stderr);
    });

    it('sends a bearer token with --header to a protected endpoint (the README command), and without one is refused', async () => {
      const secured = await startApp(SecurityWireModule.register());
      try {
        const list = await inspector([
          secured.url,
          '--method',
          'tools/list',
          '--header',
          'Authorization: Bearer alice-token',
        ]);
        assert.equal(list.code, 0, list.stderr);
        assert.deepEqual(
          list.json?.tools?.map((t: Json) => t.name),
          ['read_notes', 'write_note', 'who_answers'],
          list.stdout,
        );
        const call = await inspector([
          secured.url,
          '--method',
          'tools/call',
          '--tool-name',
          'read_notes',
          '--header',
          'Authorization: Bearer alice-token',
        ]);
        assert.match(textOf(call.json ?? { content: [] }), /note\(s\)/, call.stdout + call.stderr);
        const anonymous = await inspector([secured.url, '--method', 'tools/list']);
        assert.notEqual(anonymous.code, 0, anonymous.stdout);
      } finally {
        await secured.close();
      }
    });

    it('lists and calls tools of sample/01-basic over stdio', async () => {
      const list = await inspector([process.execPath, ...GUARDED_NODE_ARGS, BASIC_STDIO, '--method', 'tools/list']);
      assert.equal(list.code, 0, list.stderr);
      assert.equal(list.json?.tools?.length, 5, list.stdout);
      const call = await inspector([
        process.execPath,
        ...GUARDED_NODE_ARGS,
        BASIC_STDIO,
        '--method',
        'tools/call',
        '--tool-name',
        'list_tasks',
      ]);
      assert.equal(call.code, 0, call.stderr);
      assert.deepEqual(call.json?.structuredContent, { tasks: [] }, call.stdout);
    });
  });

  describe('stdio process hygiene (`npm run sample:stdio`)', () => {
    it('writes only JSON-RPC lines on stdout and exits 0 when stdin closes', async () => {
      const child = spawn(process.execPath, [...GUARDED_NODE_ARGS, BASIC_STDIO], { stdio: ['pipe', 'pipe', 'pipe'] });
      let stdout = '';
      const stderr = collect(child.stderr);
      const listed = new Watched();
      child.stdout.on('data', (c: Buffer) => ((stdout += c.toString('utf8')), listed.notify()));
      const exited = new Promise<number | null>((resolve) => child.on('close', resolve));
      const lines = [
        {
          jsonrpc: '2.0',
          id: 1,
          method: 'initialize',
          params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
        },
        { jsonrpc: '2.0', method: 'notifications/initialized' },
        { jsonrpc: '2.0', id: 2, method: 'tools/list' },
      ];
      child.stdin.write(lines.map((l) => JSON.stringify(l)).join('\n') + '\n');
      await listed.until(() => stdout.includes('"id":2'), 'no answer to tools/list on stdout of sample:stdio', 60_000);
      child.stdin.end();
      const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
      const code = await exited;
      clearTimeout(timer);
      assert.equal(code, 0, `exit code; stderr:\n${stderr()}`);
      const out = stdout.split('\n').filter((l) => l !== '');
      assert.equal(out.length, 2, stdout);
      for (const line of out) assert.equal(JSON.parse(line).jsonrpc, '2.0');
      assert.match(stderr(), /Discovered 5 MCP tool/, 'Nest logs go to stderr');
    });
  });
});
