/**
 * Runtime toggles from the attacker's side. A disabled tool, prompt, resource or template is
 * answered exactly as a name never registered on every path (2026-07-28, a 2025-11-25 session, a
 * 2025-03-26 batch, in process; calls, tasks, completions, subscriptions, multi-round-trip
 * retries), so no caller can reach or probe it; a cursor issued before a toggle expires; `update`
 * changes what clients read, never who may call. A call already running when its tool is
 * disabled finishes. With Redis, a toggle made while Redis is down stays on its instance (logged),
 * and the process lives.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import {
  Injectable,
  Module,
  UseGuards,
  type CanActivate,
  type DynamicModule,
  type ExecutionContext,
  type LoggerService,
} from '@nestjs/common';
import { IsString } from 'class-validator';
import {
  Args,
  Complete,
  Ctx,
  McpContext,
  McpExecutionContext,
  McpModule,
  McpRegistry,
  Prompt,
  RequireScopes,
  Resource,
  ResourceTemplate,
  Tool,
  type McpToggleOptions,
} from 'nestjs-model-context';
import { McpTestClient } from 'nestjs-model-context/testing';
import { startApp, type RunningApp } from '../utils/app.js';
import { META_KEYS, modernRpc, rpc } from '../utils/clients.js';
import { ENTRY_PATHS, PathClient, type EntryPath, type PathAnswer } from '../utils/paths.js';
import { RedisChild } from '../utils/redis-server.js';
import { TaskGates } from '../fixtures/tasks.module.js';
import { Watched, guard } from '../utils/wait.js';

type Json = Record<string, any>;

class TopicDto {
  @IsString()
  topic!: string;
}

class IdDto {
  @IsString()
  id!: string;
}

class AnswerDto {
  @IsString()
  answer!: string;
}

/** Refuses callers without `x-role: admin`, on calls and lists alike. */
@Injectable()
class AdminOnly implements CanActivate {
  canActivate(context: ExecutionContext): boolean {
    const request = McpExecutionContext.create(context).getRequest<
      { headers?: Record<string, string | undefined> } | undefined
    >();
    return request?.headers?.['x-role'] === 'admin';
  }
}

@Injectable()
class FlaggedCapabilities {
  /** Calls of `slow` that started. */
  slowStarted = 0;

  constructor(private readonly gates: TaskGates) {}

  @Tool({ description: 'Always on.' })
  alpha(): string {
    return 'alpha';
  }

  @Tool({ description: 'Behind a flag; may run as a task.', task: 'optional' })
  beta(@Args() { topic }: TopicDto): string {
    return `beta ${topic}`;
  }

  @Tool({ description: 'Behind a flag; asks the user first.' })
  async confirm(@Ctx() ctx: McpContext): Promise<string> {
    const answer = await ctx.elicit('Sure?', AnswerDto);
    return answer.action === 'accept' ? `confirmed ${answer.content.answer}` : 'declined';
  }

  @Tool({ description: 'Holds until the test opens the gate.' })
  async slow(@Ctx() ctx: McpContext): Promise<string> {
    this.slowStarted++;
    await this.gates.pass('slow', ctx.signal);
    return 'slow done';
  }

  @Tool({ description: 'Admins only.' })
  @UseGuards(AdminOnly)
  wipe(): string {
    return 'wiped';
  }

  @Prompt({ description: 'Behind a flag.' })
  gamma(@Args() { topic }: TopicDto): string {
    return `gamma ${topic}`;
  }

  @Complete({ prompt: 'gamma', argument: 'topic' })
  gammaTopics(): string[] {
    return ['launch-plan', 'pricing'];
  }

  @Resource({ uri: 'flags://doc', name: 'doc', description: 'A document behind a flag.' })
  doc(): string {
    return 'doc';
  }

  @ResourceTemplate({ uriTemplate: 'flags://items/{id}', description: 'Items behind a flag.' })
  item(@Args() { id }: IdDto): string {
    return `item ${id}`;
  }

  @Complete({ resourceTemplate: 'flags://items/{id}', argument: 'id' })
  itemIds(): string[] {
    return ['secret-item-1'];
  }
}

function togglesApp(options: { pageSize?: number; redis?: { url: string; keyPrefix: string } } = {}): DynamicModule {
  @Module({
    imports: [
      McpModule.forRoot({
        name: 'abuse-toggles',
        version: '1.0.0',
        sessions: { mode: 'stateful' },
        pageSize: options.pageSize ?? 100,
        redis: options.redis,
      }),
    ],
    providers: [AdminOnly, TaskGates, FlaggedCapabilities],
  })
  class TogglesAbuseApp {}
  return { module: TogglesAbuseApp };
}

/** The answer with `name` replaced by a placeholder, so a disabled and an unknown name compare whole. */
function shape(answer: PathAnswer, name: string): Json {
  return JSON.parse(
    JSON.stringify({ status: answer.status, error: answer.body.error ?? null, result: answer.body.result ?? null })
      .split(name)
      .join('<name>'),
  );
}

const TASKS_EXTENSION = 'io.modelcontextprotocol/tasks';

/** One probe per kind of capability: the request for the disabled one, and for one never registered. */
function probes(
  path: EntryPath,
): Array<{ what: string; method: string; params: (name: string) => Json; disabled: string; unknown: string }> {
  const task =
    path === 'modern'
      ? { _meta: { [META_KEYS.clientCapabilities]: { extensions: { [TASKS_EXTENSION]: {} } } } }
      : { task: {} };
  return [
    {
      what: 'tools/call',
      method: 'tools/call',
      params: (name) => ({ name, arguments: { topic: 'x' } }),
      disabled: 'beta',
      unknown: 'ghost',
    },
    {
      what: 'tools/call, invalid arguments',
      method: 'tools/call',
      params: (name) => ({ name, arguments: [] }),
      disabled: 'beta',
      unknown: 'ghost',
    },
    {
      what: 'tools/call as a task',
      method: 'tools/call',
      params: (name) => ({ name, arguments: { topic: 'x' }, ...task }),
      disabled: 'beta',
      unknown: 'ghost',
    },
    {
      what: 'prompts/get',
      method: 'prompts/get',
      params: (name) => ({ name, arguments: { topic: 'x' } }),
      disabled: 'gamma',
      unknown: 'ghost',
    },
    {
      what: 'completion of a prompt argument',
      method: 'completion/complete',
      params: (name) => ({ ref: { type: 'ref/prompt', name }, argument: { name: 'topic', value: '' } }),
      disabled: 'gamma',
      unknown: 'ghost',
    },
    {
      what: 'resources/read',
      method: 'resources/read',
      params: (uri) => ({ uri }),
      disabled: 'flags://doc',
      unknown: 'flags://ghost',
    },
    {
      what: 'resources/read through a template',
      method: 'resources/read',
      params: (uri) => ({ uri }),
      disabled: 'flags://items/1',
      unknown: 'flags://nothing/1',
    },
    {
      what: 'completion of a template variable',
      method: 'completion/complete',
      params: (uri) => ({ ref: { type: 'ref/resource', uri }, argument: { name: 'id', value: '' } }),
      disabled: 'flags://items/{id}',
      unknown: 'flags://nothing/{id}',
    },
    path === 'modern'
      ? {
          what: 'subscriptions/listen',
          method: 'subscriptions/listen',
          params: (uri) => ({ notifications: { resourceSubscriptions: [uri] } }),
          disabled: 'flags://doc',
          unknown: 'flags://ghost',
        }
      : {
          what: 'resources/subscribe',
          method: 'resources/subscribe',
          params: (uri) => ({ uri }),
          disabled: 'flags://doc',
          unknown: 'flags://ghost',
        },
  ];
}

/** Turns every flagged capability off, or on again. */
function flagAll(registry: McpRegistry, on: boolean): void {
  const targets: Array<[string, McpToggleOptions]> = [
    ['beta', {}],
    ['confirm', {}],
    ['gamma', { kind: 'prompt' }],
    ['flags://doc', { kind: 'resource' }],
    ['flags://items/{id}', { kind: 'resourceTemplate' }],
  ];
  for (const [name, options] of targets) on ? registry.enable(name, options) : registry.disable(name, options);
}

describe('security: runtime toggles', () => {
  let server: RunningApp;
  let registry: McpRegistry;
  let paths: PathClient;

  before(async () => {
    server = await startApp(togglesApp());
    registry = server.app.get(McpRegistry);
    paths = new PathClient(server.url);
  });
  after(() => server.close());

  for (const path of ENTRY_PATHS) {
    it(`${path}: a disabled capability answers exactly as one never registered, on every kind of request`, async () => {
      flagAll(registry, false);
      try {
        for (const probe of probes(path)) {
          const disabled = await paths.call(path, probe.method, probe.params(probe.disabled));
          const unknown = await paths.call(path, probe.method, probe.params(probe.unknown));
          assert.ok(disabled.body.error, `${probe.what}: ${JSON.stringify(disabled.body)}`);
          assert.deepEqual(shape(disabled, probe.disabled), shape(unknown, probe.unknown), probe.what);
        }
        const listed = JSON.stringify([
          (await paths.call(path, 'tools/list')).body,
          (await paths.call(path, 'prompts/list')).body,
          (await paths.call(path, 'resources/list')).body,
          (await paths.call(path, 'resources/templates/list')).body,
        ]);
        for (const name of ['"beta"', '"confirm"', '"gamma"', 'flags://doc', 'flags://items/'])
          assert.ok(!listed.includes(name), `${name} listed: ${listed}`);
      } finally {
        flagAll(registry, true);
      }
      const back = await paths.call(path, 'tools/call', { name: 'beta', arguments: { topic: 'x' } });
      assert.equal(back.body.result?.content?.[0]?.text, 'beta x', JSON.stringify(back.body));
    });
  }

  it('in process (the stdio engine): a disabled tool is an unknown tool', async () => {
    const client = await McpTestClient.create(server.app, { era: '2025-11-25' });
    registry.disable('beta');
    try {
      await assert.rejects(
        client.callTool('beta', { topic: 'x' }),
        (error: { code?: number; message: string }) => error.code === -32602 && /Unknown tool/.test(error.message),
      );
      assert.ok(!(await client.listTools()).some((tool) => tool.name === 'beta'));
    } finally {
      registry.enable('beta');
      await client.close();
    }
  });

  it('a cursor issued before a toggle expires instead of paging the old catalog', async () => {
    const small = await startApp(togglesApp({ pageSize: 2 }));
    try {
      const first = (await modernRpc(small.url, 'tools/list', { cursor: '' })).json as Json;
      const cursor = first.result.nextCursor as string;
      assert.ok(cursor);
      small.app.get(McpRegistry).disable('beta');
      const stale = (await modernRpc(small.url, 'tools/list', { cursor })).json as Json;
      assert.equal(stale.error?.code, -32602, JSON.stringify(stale));
      assert.match(stale.error.message, /Expired cursor/);
    } finally {
      await small.close();
    }
  });

  it('a multi-round-trip retry after its tool was disabled answers as an unknown tool; the requestState runs nothing', async () => {
    const caps = { [META_KEYS.clientCapabilities]: { elicitation: {} } };
    const first = (await modernRpc(server.url, 'tools/call', { name: 'confirm', arguments: {}, _meta: caps }))
      .json as Json;
    assert.equal(first.result?.resultType, 'input_required', JSON.stringify(first));
    const [key] = Object.keys(first.result.inputRequests);
    registry.disable('confirm');
    try {
      const retry = (
        await modernRpc(server.url, 'tools/call', {
          name: 'confirm',
          arguments: {},
          inputResponses: { [key!]: { action: 'accept', content: { answer: 'yes' } } },
          requestState: first.result.requestState,
          _meta: caps,
        })
      ).json as Json;
      assert.equal(retry.error?.code, -32602, JSON.stringify(retry));
      assert.match(retry.error.message, /Unknown tool/);
    } finally {
      registry.enable('confirm');
    }
  });

  it('a call already running when its tool is disabled finishes; the next one is refused', async () => {
    const gates = server.app.get(TaskGates);
    const running = modernRpc(server.url, 'tools/call', { name: 'slow', arguments: {} });
    await guard(gates.hasStarted('slow'), 'the slow call starting');
    registry.disable('slow');
    try {
      const refused = (await modernRpc(server.url, 'tools/call', { name: 'slow', arguments: {} })).json as Json;
      assert.equal(refused.error?.code, -32602);
      gates.open('slow');
      const done = (await running).json as Json;
      assert.equal(done.result?.content?.[0]?.text, 'slow done');
      assert.equal(server.app.get(FlaggedCapabilities).slowStarted, 1, 'the refused call never started');
    } finally {
      registry.enable('slow');
    }
  });

  it('update() changes what clients read, never who may call', async () => {
    registry.update('wipe', { description: 'Harmless now', annotations: { readOnlyHint: true } });
    try {
      for (const path of ENTRY_PATHS) {
        const listed = await paths.call(path, 'tools/list');
        assert.ok(!JSON.stringify(listed.body).includes('"wipe"'), `${path}: listed to a refused caller`);
        const call = await paths.call(path, 'tools/call', { name: 'wipe', arguments: {} });
        assert.ok(!JSON.stringify(call.body).includes('wiped'), `${path}: ${JSON.stringify(call.body)}`);
        const admin = await paths.call(path, 'tools/list', {}, { 'x-role': 'admin' });
        const wipe = (admin.body.result.tools as Json[]).find((tool) => tool.name === 'wipe');
        assert.equal(wipe?.description, 'Harmless now');
      }
    } finally {
      registry.update('wipe', { description: 'Admins only.', annotations: {} });
    }
  });
});

/** Collects what the app logs, so a test can wait for the log line of an outage. */
class LogTap implements LoggerService {
  readonly lines = new Watched();
  readonly errors: string[] = [];
  log(): void {}
  warn(): void {}
  debug(): void {}
  verbose(): void {}
  error(message: unknown): void {
    this.errors.push(String(message));
    this.lines.notify();
  }
}

describe('security: runtime toggles while Redis is down', () => {
  let redis: RedisChild;
  let a: RunningApp;
  let b: RunningApp;
  let tap: LogTap;
  const keyPrefix = `abuse-toggles-${randomBytes(4).toString('hex')}:`;
  const unhandled: unknown[] = [];
  const onUnhandled = (reason: unknown) => unhandled.push(reason);

  before(async () => {
    process.on('unhandledRejection', onUnhandled);
    redis = await RedisChild.start();
    tap = new LogTap();
    // Nest's logger is process-wide: the app started last decides where logs go.
    b = await startApp(togglesApp({ redis: { url: redis.url, keyPrefix } }));
    a = await startApp(togglesApp({ redis: { url: redis.url, keyPrefix } }), { logger: tap });
  });
  after(async () => {
    process.off('unhandledRejection', onUnhandled);
    await a?.close().catch(() => undefined);
    await b?.close().catch(() => undefined);
    await redis?.stop();
  });

  it('a toggle made during the outage applies on its instance at once and ends no process; the other instance keeps its state', async () => {
    await redis.kill();
    // The outage is logged once; the publishes it refuses meanwhile are counted into it, not logged one by one.
    await tap.lines.until(() => tap.errors.some((line) => /is unreachable/.test(line)), 'the outage being logged');
    a.app.get(McpRegistry).disable('beta');
    const here = (await modernRpc(a.url, 'tools/call', { name: 'beta', arguments: { topic: 'x' } })).json as Json;
    assert.equal(here.error?.code, -32602, 'the instance that toggled applies it at once');
    // Documented: a toggle is a message, states live in memory; B never heard of this one.
    const there = (await modernRpc(b.url, 'tools/call', { name: 'beta', arguments: { topic: 'x' } })).json as Json;
    assert.equal(there.result?.content?.[0]?.text, 'beta x');
    assert.deepEqual(unhandled, []);
  });
});

@Injectable()
class VaultTools {
  @Tool({ description: 'Needs vault:admin.' })
  @RequireScopes('vault:admin')
  vault(): string {
    return 'VAULT-CONTENTS';
  }
}

describe('security: a toggle flipped while a request waits for its session hook', () => {
  for (const era of ['modern', 'legacy'] as const) {
    it(`${era}: the scope decision is taken on the catalog the call runs against, not the one it entered with`, async () => {
      const gates = new TaskGates();
      @Module({
        imports: [
          McpModule.forRoot({
            name: 'abuse-toggles-scoped',
            version: '1.0.0',
            sessions: {
              mode: 'stateless',
              onSession: async ({ header }) =>
                header('x-hold') ? gates.pass('hook', new AbortController().signal) : undefined,
            },
            auth: {
              resource: 'http://127.0.0.1/mcp',
              authorizationServers: ['https://auth.example.com'],
              verifyToken: (token) => (token === 'bob-token' ? { id: 'bob', scopes: [] } : null),
            },
          }),
        ],
        providers: [VaultTools],
      })
      class ScopedToggleApp {}
      const server = await startApp(ScopedToggleApp);
      const registry = server.app.get(McpRegistry);
      registry.disable('vault');
      try {
        const headers = { Authorization: 'Bearer bob-token', 'x-hold': '1' };
        const call =
          era === 'modern'
            ? modernRpc(server.url, 'tools/call', { name: 'vault', arguments: {} }, { headers })
            : rpc(
                server.url,
                { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'vault', arguments: {} } },
                { headers: { ...headers, 'MCP-Protocol-Version': '2025-11-25' } },
              );
        await guard(gates.hasStarted('hook'), 'the call waiting in its session hook');
        registry.enable('vault');
        gates.open('hook');
        const answer = await call;
        assert.ok(
          !answer.text.includes('VAULT-CONTENTS'),
          `a principal without vault:admin ran the tool: ${answer.text}`,
        );
        assert.equal(answer.status, 403, answer.text);
        assert.match(answer.headers.get('www-authenticate') ?? '', /insufficient_scope/);
      } finally {
        await server.close();
      }
    });
  }
});
