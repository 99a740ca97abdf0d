import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, describe, it } from 'node:test';
import { Injectable, Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { Test } from '@nestjs/testing';
import { trace } from '@opentelemetry/api';
import {
  InjectMcpClient,
  McpClient,
  McpClientError,
  McpClientHealthIndicator,
  McpClientModule,
  McpClients,
  type McpClientOptions,
} from 'nestjs-model-context/client';
import { ClientUpstreamModule } from '../fixtures/client-upstream.module.js';
import { InteractiveModule, fixtureEvents } from '../fixtures/interactive.module.js';
import { startApp, type RunningApp } from '../utils/app.js';
import { EverythingHttp, everythingStdio } from '../utils/everything.js';
import { installOtel } from '../utils/otel.js';
import { freePort } from '../utils/redis-server.js';
import { nextEvent } from '../utils/wait.js';
import { AppModule as StreamingSample } from '../../sample/02-streaming/app.module.js';

type UpstreamTools = {
  echo: { args: { text: string }; result: { text: string } };
  whoami: { args: Record<string, never>; result: { authorization: string | null } };
  trace: { args: Record<string, never>; result: { traceparent: string | null } };
};

/** A client straight from its options, closed by the caller. */
async function withClient<T>(options: McpClientOptions, run: (client: McpClient<any>) => Promise<T>): Promise<T> {
  const moduleRef = await Test.createTestingModule({
    imports: [McpClientModule.forRoot({ clients: [options] })],
  }).compile();
  await moduleRef.init();
  try {
    return await run(moduleRef.get(McpClients).get(options.name));
  } finally {
    await moduleRef.close();
  }
}

function textOf(result: { content?: Array<{ type: string; text?: string }> }): string {
  return (result.content ?? []).map((block) => block.text ?? '').join('');
}

describe('McpClientModule: the official server-everything over stdio (legacy era)', () => {
  let moduleRef: Awaited<ReturnType<ReturnType<typeof Test.createTestingModule>['compile']>>;
  let everything: McpClient;
  before(async () => {
    moduleRef = await Test.createTestingModule({
      imports: [McpClientModule.forRoot({ clients: [{ name: 'everything', transport: everythingStdio() }] })],
    }).compile();
    await moduleRef.init();
    everything = moduleRef.get(McpClients).get('everything');
  });
  after(() => moduleRef.close());

  it('negotiates: the probe falls back to an initialize session', async () => {
    const info = await everything.info();
    assert.equal(info.era, 'legacy');
    assert.match(String(info.serverInfo?.name), /everything/i);
  });

  it('lists and calls tools, reads resources, gets prompts', async () => {
    const tools = await everything.listTools();
    assert.ok(tools.some((tool) => tool.name === 'echo'));
    const echoed = await everything.callTool('echo', { message: 'hi' });
    assert.match(textOf(echoed), /hi/);
    const resources = await everything.listResources();
    assert.ok(resources.length > 0);
    const read = await everything.readResource(resources[0]!.uri);
    assert.equal(read.contents[0]!.uri, resources[0]!.uri);
    const prompt = await everything.getPrompt('args-prompt', { city: 'Oslo' });
    assert.match(JSON.stringify(prompt.messages), /Oslo/);
    assert.ok((await everything.listResourceTemplates()).length > 0);
  });

  it('reports progress of a long-running tool', async () => {
    const progress: number[] = [];
    await everything.callTool(
      'trigger-long-running-operation',
      { duration: 1, steps: 3 },
      { onProgress: (p) => progress.push(p.progress) },
    );
    // The last step's notification races the result inside the official client; the earlier ones do not.
    assert.deepEqual(progress.slice(0, 2), [1, 2]);
  });

  it('reuses one child process for successive calls', async () => {
    await everything.ping();
    await everything.ping();
    assert.equal(everything.openConnections, 1);
  });
});

describe('McpClientModule: server-everything over Streamable HTTP', () => {
  let server: EverythingHttp;
  before(async () => {
    server = await EverythingHttp.start();
  });
  after(() => server.stop());

  it('auto-negotiation falls back to a legacy session; calls work', async () => {
    await withClient({ name: 'everything-http', transport: { type: 'http', url: server.url } }, async (client) => {
      const info = await client.info();
      assert.equal(info.era, 'legacy');
      assert.match(textOf(await client.callTool('echo', { message: 'over http' })), /over http/);
      const progress: number[] = [];
      await client.callTool(
        'trigger-long-running-operation',
        { duration: 1, steps: 2 },
        { onProgress: (p) => progress.push(p.progress) },
      );
      assert.deepEqual(progress, [1, 2]);
    });
  });

  it('a pinned 2026-07-28 client refuses a legacy-only server with a clear error', async () => {
    await withClient(
      { name: 'pinned', transport: { type: 'http', url: server.url }, era: '2026-07-28', retry: false },
      async (client) => {
        await assert.rejects(
          client.ping(),
          (error: unknown) =>
            error instanceof McpClientError && error.client === 'pinned' && /pinned/.test(error.message),
        );
      },
    );
  });
});

describe("McpClientModule: this project's own server over HTTP (both eras) and in process", () => {
  let upstream: RunningApp;
  let interactive: RunningApp;
  before(async () => {
    upstream = await startApp(ClientUpstreamModule.register());
    interactive = await startApp(InteractiveModule.register());
  });
  after(async () => {
    await upstream.close();
    await interactive.close();
  });

  it('negotiates 2026-07-28 with a modern server, and a legacy session when asked', async () => {
    await withClient({ name: 'modern', transport: { type: 'http', url: upstream.url } }, async (client) => {
      const info = await client.info();
      assert.equal(info.era, 'modern');
      assert.equal(info.protocolVersion, '2026-07-28');
    });
    await withClient(
      { name: 'legacy', transport: { type: 'http', url: upstream.url }, era: 'legacy' },
      async (client) => {
        const info = await client.info();
        assert.equal(info.era, 'legacy');
        const typed = client as McpClient<UpstreamTools>;
        const result = await typed.callTool('echo', { text: 'legacy era' });
        assert.equal(result.structuredContent?.text, 'legacy era');
      },
    );
  });

  it('typed calls return the structured result', async () => {
    await withClient({ name: 'typed', transport: { type: 'http', url: upstream.url } }, async (client) => {
      const typed = client as McpClient<UpstreamTools>;
      const result = await typed.callTool('echo', { text: 'typed' });
      const text: string | undefined = result.structuredContent?.text;
      assert.equal(text, 'typed');
    });
  });

  for (const era of ['auto', 'legacy'] as const) {
    it(`an AbortSignal cancels the call, and the upstream sees it (${era})`, async () => {
      await withClient({ name: 'cancel', transport: { type: 'http', url: interactive.url }, era }, async (client) => {
        const controller = new AbortController();
        const teardown = nextEvent(fixtureEvents, 'slow:teardown', 'the upstream never saw the cancellation');
        const call = client.callTool('slow', {}, { signal: controller.signal, onProgress: () => controller.abort() });
        await assert.rejects(
          call,
          (error: unknown) =>
            error instanceof McpClientError &&
            error.kind === 'aborted' &&
            /cancelled by the caller/.test(error.message),
        );
        await teardown;
      });
    });
  }

  it('a timeout fails the call with a message naming the upstream and the option, and cancels upstream', async () => {
    await withClient(
      { name: 'slowpoke', transport: { type: 'http', url: interactive.url }, timeoutMs: 300 },
      async (client) => {
        const teardown = nextEvent(fixtureEvents, 'slow:teardown', 'the upstream never saw the timed-out call end');
        await assert.rejects(
          client.callTool('slow', {}),
          (error: unknown) =>
            error instanceof McpClientError &&
            error.kind === 'timeout' &&
            /"slowpoke"/.test(error.message) &&
            /timeoutMs/.test(error.message),
        );
        await teardown;
      },
    );
  });

  it('a JSON-RPC error is a protocol error, not retried', async () => {
    await withClient({ name: 'modern', transport: { type: 'http', url: upstream.url } }, async (client) => {
      await assert.rejects(
        client.getPrompt('no-such-prompt'),
        (error: unknown) =>
          error instanceof McpClientError && error.kind === 'protocol' && typeof error.code === 'number',
      );
    });
  });

  it('retries an unreachable upstream with backoff, then names it', async () => {
    const port = await freePort();
    await withClient(
      {
        name: 'nowhere',
        transport: { type: 'http', url: `http://127.0.0.1:${port}/mcp` },
        retry: { attempts: 2, baseDelayMs: 1 },
      },
      async (client) => {
        await assert.rejects(
          client.listTools(),
          (error: unknown) =>
            error instanceof McpClientError &&
            error.kind === 'transport' &&
            /"nowhere" could not be reached/.test(error.message),
        );
      },
    );
  });

  it("the in-process transport of the testing kit runs the app's pipeline without a port", async () => {
    const app = await NestFactory.createApplicationContext(InteractiveModule.register(), { logger: false });
    try {
      await withClient({ name: 'local', transport: { type: 'in-process', app } }, async (client) => {
        const info = await client.info();
        assert.equal(info.era, 'modern');
        const progress: number[] = [];
        const result = await client.callTool('count', { n: 3 }, { onProgress: (p) => progress.push(p.progress) });
        assert.match(textOf(result), /counted to 3/);
        assert.deepEqual(progress, [1, 2, 3]);
        const controller = new AbortController();
        const teardown = nextEvent(
          fixtureEvents,
          'slow:teardown',
          'the in-process upstream never saw the cancellation',
        );
        await assert.rejects(
          client.callTool('slow', {}, { signal: controller.signal, onProgress: () => controller.abort() }),
          (error: unknown) => error instanceof McpClientError && error.kind === 'aborted',
        );
        await teardown;
      });
      await withClient(
        { name: 'local-legacy', transport: { type: 'in-process', app }, era: 'legacy' },
        async (client) => {
          assert.equal((await client.info()).era, 'legacy');
          assert.match(textOf(await client.callTool('count', { n: 2 })), /counted to 2/);
        },
      );
    } finally {
      await app.close();
    }
  });

  it('sends the active span as _meta.traceparent when OpenTelemetry is active', async () => {
    const otel = installOtel();
    try {
      await withClient({ name: 'traced', transport: { type: 'http', url: upstream.url } }, async (client) => {
        const typed = client as McpClient<UpstreamTools>;
        await trace.getTracer('test').startActiveSpan('caller', async (span) => {
          const result = await typed.callTool('trace', {});
          span.end();
          assert.equal(result.structuredContent?.traceparent?.split('-')[1], span.spanContext().traceId);
        });
        const untraced = await typed.callTool('trace', {});
        assert.equal(untraced.structuredContent?.traceparent, null);
      });
    } finally {
      await otel.shutdown();
    }
  });

  it("one of this project's samples as the upstream: 02-streaming's progress", async () => {
    const sample = await startApp(StreamingSample);
    try {
      await withClient({ name: 'reports', transport: { type: 'http', url: sample.url } }, async (client) => {
        const progress: number[] = [];
        const result = await client.callTool(
          'build_report',
          { title: 'Q3', sections: 2 },
          { onProgress: (p) => progress.push(p.progress) },
        );
        assert.equal(result.isError, undefined);
        assert.deepEqual(progress, [1, 2]);
      });
    } finally {
      await sample.close();
    }
  });
});

describe('McpClientModule: the module', () => {
  @Injectable()
  class Consumer {
    constructor(@InjectMcpClient('up') readonly up: McpClient) {}
  }

  it('forRootAsync with a factory; @InjectMcpClient; the health indicator', async () => {
    const upstream = await startApp(ClientUpstreamModule.register());
    const dead = await freePort();
    @Module({ providers: [{ provide: 'URL', useValue: upstream.url }], exports: ['URL'] })
    class ConfigModule {}
    const moduleRef = await Test.createTestingModule({
      imports: [
        McpClientModule.forRootAsync({
          names: ['up', 'down'],
          imports: [ConfigModule],
          inject: ['URL'],
          useFactory: (url: string) => ({
            clients: [
              { name: 'up', transport: { type: 'http', url } },
              { name: 'down', transport: { type: 'http', url: `http://127.0.0.1:${dead}/mcp` }, retry: false },
            ],
          }),
        }),
      ],
      providers: [Consumer],
    }).compile();
    try {
      await moduleRef.init();
      assert.equal(
        (await moduleRef.get(Consumer).up.listTools()).some((tool) => tool.name === 'echo'),
        true,
      );
      const health = moduleRef.get(McpClientHealthIndicator);
      assert.deepEqual((await health.isHealthy('up')).up.status, 'up', JSON.stringify(await health.isHealthy('up')));
      const down = (await health.isHealthy('down')).down;
      assert.equal(down.status, 'down');
      assert.match(String(down.message), /"down" could not be reached/);
    } finally {
      await moduleRef.close();
      await upstream.close();
    }
  });

  it('fails fast on a names mismatch, a duplicate name and an unknown name', async () => {
    await assert.rejects(
      Test.createTestingModule({
        imports: [
          McpClientModule.forRootAsync({
            names: ['a'],
            useFactory: () => ({
              clients: [{ name: 'b', transport: { type: 'http', url: 'http://127.0.0.1:1/mcp' } }],
            }),
          }),
        ],
      }).compile(),
      /"names" lists \["a"\] but the factory configured \["b"\]/,
    );
    assert.throws(
      () =>
        McpClientModule.forRoot({
          clients: [
            { name: 'a', transport: { type: 'http', url: 'http://x/mcp' } },
            { name: 'a', transport: { type: 'http', url: 'http://y/mcp' } },
          ],
        }),
      /"a" is configured twice/,
    );
    const moduleRef = await Test.createTestingModule({ imports: [McpClientModule.forRoot({ clients: [] })] }).compile();
    assert.throws(() => moduleRef.get(McpClients).get('ghost'), /no client named "ghost"/);
    await moduleRef.close();
  });

  it('refuses credentials on a stdio upstream at bootstrap', async () => {
    await assert.rejects(
      Test.createTestingModule({
        imports: [
          McpClientModule.forRoot({
            clients: [{ name: 'child', transport: everythingStdio(), auth: { type: 'pass-through', audience: 'x' } }],
          }),
        ],
      }).compile(),
      /"child" has "auth" but its transport is not "http"/,
    );
  });
});

describe('the nestjs-model-context/client subpath', () => {
  const require = createRequire(import.meta.url);

  it('resolves import to dist/lib and require to dist/cjs; the CommonJS client loads the official SDK and calls', async () => {
    assert.equal(
      fileURLToPath(import.meta.resolve('nestjs-model-context/client')),
      fileURLToPath(new URL('../../lib/client/index.js', import.meta.url)),
    );
    assert.equal(
      require.resolve('nestjs-model-context/client'),
      fileURLToPath(new URL('../../cjs/client/index.js', import.meta.url)),
    );
    const cjs = require('nestjs-model-context/client') as {
      McpClient: new (options: McpClientOptions) => McpClient;
      McpClientModule: unknown;
    };
    assert.equal(typeof cjs.McpClientModule, 'function');
    const upstream = await startApp(ClientUpstreamModule.register());
    const client = new cjs.McpClient({ name: 'cjs', transport: { type: 'http', url: upstream.url } });
    try {
      assert.deepEqual((await client.callTool('echo', { text: 'from require' })).structuredContent, {
        text: 'from require',
      });
      assert.equal((await client.info()).era, 'modern');
    } finally {
      await client.close();
      await upstream.close();
    }
  });

  it('keeps the client and the official SDK out of the main entry', () => {
    for (const build of ['lib', 'cjs']) {
      const dir = fileURLToPath(new URL(`../../${build}/`, import.meta.url));
      const files = (readdirSync(dir, { recursive: true }) as string[]).filter(
        (f) => f.endsWith('.js') && !f.startsWith('client'),
      );
      assert.ok(files.includes('index.js'));
      for (const file of files)
        assert.doesNotMatch(
          readFileSync(join(dir, file), 'utf8'),
          /@modelcontextprotocol\/client|client\/index\.js/,
          `dist/${build}/${file} loads the client`,
        );
    }
  });
});
