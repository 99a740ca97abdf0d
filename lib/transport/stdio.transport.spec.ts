import 'reflect-metadata';
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { EventEmitter, once } from 'node:events';
import { PassThrough } from 'node:stream';
import { Injectable, Module, type INestApplicationContext } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { IsString } from 'class-validator';
import { Args, Ctx } from '../decorators/params.decorators.js';
import { Tool } from '../tools/tool.decorator.js';
import { McpRegistry } from '../discovery/mcp.registry.js';
import { RequireScopes } from '../auth/require-scopes.decorator.js';
import { MCP_DISPATCHER } from '../common/mcp.constants.js';
import { McpModule } from '../mcp.module.js';
import type { McpDispatcher } from '../protocol/dispatcher.js';
import type { McpContext } from '../protocol/context.js';
import { McpStdio, McpStdioServer } from './stdio.transport.js';

type Json = Record<string, any>;

const MODERN = '2026-07-28';
const modernMeta = (capabilities: Json = {}) => ({
  'io.modelcontextprotocol/protocolVersion': MODERN,
  'io.modelcontextprotocol/clientCapabilities': capabilities,
});

class NameDto {
  @IsString()
  name!: string;
}

class EchoDto {
  @IsString()
  text!: string;
}

@Injectable()
class StdioTools {
  cancelled = 0;
  /** Events of the `wait` tool, so tests wait for them instead of for time. */
  readonly waits = new EventEmitter();

  @Tool({ description: 'Echoes its text.' })
  echo(@Args() { text }: EchoDto): string {
    return text;
  }

  @Tool({ description: 'Logs twice, then answers.' })
  chatty(@Ctx() ctx: McpContext): string {
    ctx.log('debug', 'debug line');
    ctx.log('info', 'info line');
    return 'done';
  }

  @Tool({ description: 'Asks for a name.' })
  async greet(@Ctx() ctx: McpContext): Promise<string> {
    const outcome = await ctx.elicit('Your name?', NameDto, { key: 'name' });
    return outcome.action === 'accept' ? `Hello, ${outcome.content.name}!` : outcome.action;
  }

  @RequireScopes('admin')
  @Tool({ description: 'Needs the admin scope.' })
  admin(): string {
    return 'admin done';
  }

  @Tool({ description: 'Waits until cancelled.' })
  wait(@Ctx() ctx: McpContext): Promise<string> {
    return new Promise((resolve) => {
      ctx.signal.addEventListener('abort', () => {
        this.cancelled++;
        this.waits.emit('cancelled');
        resolve('cancelled');
      });
      this.waits.emit('started');
    });
  }
}

@Module({
  imports: [McpModule.forRoot({ name: 'stdio-spec', version: '1.0.0' })],
  providers: [StdioTools],
})
class StdioSpecModule {}

/** Both ends of a fake stdio pair, with a reader that waits for matching messages. */
class Wire {
  readonly input = new PassThrough();
  readonly output = new PassThrough();
  readonly received: Json[] = [];
  readonly raw: string[] = [];
  private buffer = '';
  private waiters: Array<{ match: (m: Json) => boolean; resolve: (m: Json) => void }> = [];

  constructor() {
    this.output.setEncoding('utf8');
    this.output.on('data', (chunk: string) => {
      this.buffer += chunk;
      let newline: number;
      while ((newline = this.buffer.indexOf('\n')) >= 0) {
        const line = this.buffer.slice(0, newline);
        this.buffer = this.buffer.slice(newline + 1);
        this.raw.push(line);
        const message = JSON.parse(line) as Json;
        this.received.push(message);
        this.waiters = this.waiters.filter((w) => (w.match(message) ? (w.resolve(message), false) : true));
      }
    });
  }

  send(message: unknown): void {
    this.input.write(`${typeof message === 'string' ? message : JSON.stringify(message)}\n`);
  }

  next(match: (m: Json) => boolean, timeoutMs = 3000): Promise<Json> {
    const seen = this.received.find(match);
    if (seen) return Promise.resolve(seen);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new Error(`no matching message within ${timeoutMs} ms; got ${JSON.stringify(this.received)}`)),
        timeoutMs,
      );
      this.waiters.push({ match, resolve: (m) => (clearTimeout(timer), resolve(m)) });
    });
  }

  response(id: number | string): Promise<Json> {
    return this.next((m) => m.id === id && ('result' in m || 'error' in m));
  }

  async request(id: number, method: string, params?: Json): Promise<Json> {
    this.send({ jsonrpc: '2.0', id, method, ...(params ? { params } : {}) });
    return this.response(id);
  }
}

/** Fails with `message` if `promise` has not settled in 10 s (a guard, not a wait). */
async function guard<T>(promise: Promise<T>, message: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(message)), 10_000)));
  try {
    return await Promise.race([promise, expired]);
  } finally {
    clearTimeout(timer);
  }
}

async function open(): Promise<{ app: INestApplicationContext; wire: Wire; stdio: McpStdioServer }> {
  const app = await NestFactory.createApplicationContext(StdioSpecModule, { logger: false });
  const wire = new Wire();
  const stdio = await McpStdio.serve(app, { input: wire.input, output: wire.output });
  return { app, wire, stdio };
}

describe('McpStdioServer, 2026-07-28 messages', () => {
  let wire: Wire;
  let app: INestApplicationContext;
  before(async () => ({ app, wire } = await open()));
  after(() => app.close());

  it('answers server/discover without any earlier message', async () => {
    const { result } = await wire.request(1, 'server/discover', { _meta: modernMeta() });
    assert.deepEqual(result.supportedVersions, [MODERN]);
    assert.equal(result.resultType, 'complete');
    assert.equal(result._meta['io.modelcontextprotocol/serverInfo'].name, 'stdio-spec');
  });

  it('calls a tool with resultType on the result', async () => {
    const { result } = await wire.request(2, 'tools/call', {
      name: 'echo',
      arguments: { text: 'hi' },
      _meta: modernMeta(),
    });
    assert.deepEqual(result.content, [{ type: 'text', text: 'hi' }]);
    assert.equal(result.resultType, 'complete');
  });

  it('refuses a _meta without clientCapabilities with -32602', async () => {
    const { error } = await wire.request(3, 'tools/list', {
      _meta: { 'io.modelcontextprotocol/protocolVersion': MODERN },
    });
    assert.equal(error.code, -32602);
    assert.match(error.message, /clientCapabilities/);
  });

  it('refuses an unsupported version with -32022 and the supported list', async () => {
    const { error } = await wire.request(4, 'tools/list', {
      _meta: { ...modernMeta(), 'io.modelcontextprotocol/protocolVersion': 'v999.0.0' },
    });
    assert.equal(error.code, -32022);
    assert.deepEqual(error.data, { supported: [MODERN], requested: 'v999.0.0' });
  });

  it('answers legacy-only methods with -32601', async () => {
    const { error } = await wire.request(5, 'ping', { _meta: modernMeta() });
    assert.equal(error.code, -32601);
  });

  it('returns input_required instead of sending a request to the client', async () => {
    const { result } = await wire.request(6, 'tools/call', {
      name: 'greet',
      arguments: {},
      _meta: modernMeta({ elicitation: {} }),
    });
    assert.equal(result.resultType, 'input_required');
    assert.equal(result.inputRequests.name.method, 'elicitation/create');
    assert.equal(
      wire.received.some((m) => 'method' in m && 'id' in m),
      false,
    );
  });

  it('sends logs only at the level the request asked for', async () => {
    const before = wire.received.length;
    await wire.request(7, 'tools/call', {
      name: 'chatty',
      arguments: {},
      _meta: { ...modernMeta(), 'io.modelcontextprotocol/logLevel': 'info' },
    });
    const logs = wire.received.slice(before).filter((m) => m.method === 'notifications/message');
    assert.deepEqual(
      logs.map((m) => m.params.level),
      ['info'],
    );
  });

  it('stops an in-flight call on notifications/cancelled and never answers it', async () => {
    const tools = app.get(StdioTools);
    const cancelledBefore = tools.cancelled;
    const started = guard(once(tools.waits, 'started'), 'the wait tool never started');
    wire.send({
      jsonrpc: '2.0',
      id: 8,
      method: 'tools/call',
      params: { name: 'wait', arguments: {}, _meta: modernMeta() },
    });
    await started;
    const cancelled = guard(once(tools.waits, 'cancelled'), 'notifications/cancelled never aborted the call');
    wire.send({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 8, _meta: modernMeta() } });
    await cancelled;
    assert.equal(tools.cancelled, cancelledBefore + 1);
    // A marker call sent after the abort goes through the same pipeline: once it is answered, an
    // answer to the cancelled call would have been written before it.
    const marker = await wire.request(80, 'tools/call', {
      name: 'echo',
      arguments: { text: 'after' },
      _meta: modernMeta(),
    });
    assert.equal(marker.result.content[0].text, 'after');
    assert.equal(
      wire.received.some((m) => m.id === 8),
      false,
    );
  });

  it('answers malformed lines with -32700 and invalid messages with -32600', async () => {
    wire.send('{not json');
    const parse = await wire.next((m) => m.error?.code === -32700);
    assert.equal(parse.id, null);
    wire.send({ jsonrpc: '1.0', id: 'x', method: 'tools/list' });
    const invalid = await wire.next((m) => m.error?.code === -32600 && m.id === 'x');
    assert.match(invalid.error.message, /jsonrpc/);
  });
});

describe('McpStdioServer, legacy session', () => {
  let wire: Wire;
  let app: INestApplicationContext;
  before(async () => ({ app, wire } = await open()));
  after(() => app.close());

  it('refuses requests before initialize, except ping', async () => {
    const { error } = await wire.request(1, 'tools/list');
    assert.equal(error.code, -32600);
    assert.match(error.message, /initialize/);
    assert.deepEqual((await wire.request(2, 'ping')).result, {});
  });

  it('negotiates the version in initialize', async () => {
    const { result } = await wire.request(3, 'initialize', {
      protocolVersion: '2025-06-18',
      capabilities: { elicitation: {} },
      clientInfo: { name: 'spec-client', version: '1.0.0' },
    });
    assert.equal(result.protocolVersion, '2025-06-18');
    assert.equal(result.serverInfo.name, 'stdio-spec');
    assert.equal(result.resultType, undefined);
    wire.send({ jsonrpc: '2.0', method: 'notifications/initialized' });
    const tools = (await wire.request(4, 'tools/list')).result.tools.map((t: Json) => t.name);
    assert.deepEqual(tools, ['echo', 'chatty', 'greet', 'admin', 'wait']);
  });

  it('keeps the log level logging/setLevel chose for the process', async () => {
    let before = wire.received.length;
    await wire.request(5, 'tools/call', { name: 'chatty', arguments: {} });
    assert.deepEqual(
      wire.received
        .slice(before)
        .filter((m) => m.method === 'notifications/message')
        .map((m) => m.params.level),
      ['info'],
    );
    assert.deepEqual((await wire.request(6, 'logging/setLevel', { level: 'debug' })).result, {});
    before = wire.received.length;
    await wire.request(7, 'tools/call', { name: 'chatty', arguments: {} });
    assert.deepEqual(
      wire.received
        .slice(before)
        .filter((m) => m.method === 'notifications/message')
        .map((m) => m.params.level),
      ['debug', 'info'],
    );
  });

  it('sends elicitation/create on stdout and resumes the call with the answer from stdin', async () => {
    wire.send({ jsonrpc: '2.0', id: 8, method: 'tools/call', params: { name: 'greet', arguments: {} } });
    const ask = await wire.next((m) => m.method === 'elicitation/create');
    assert.equal(ask.params.message, 'Your name?');
    assert.deepEqual(ask.params.requestedSchema.required, ['name']);
    wire.send({ jsonrpc: '2.0', id: ask.id, result: { action: 'accept', content: { name: 'Ada' } } });
    const { result } = await wire.response(8);
    assert.deepEqual(result.content, [{ type: 'text', text: 'Hello, Ada!' }]);
  });

  it('tells the session when the tool list changes', async () => {
    app.get(McpRegistry).addTool({ name: 'late_tool', description: 'Added at runtime.', handler: () => 'late' });
    await wire.next((m) => m.method === 'notifications/tools/list_changed');
    assert.equal(app.get(McpRegistry).removeTool('late_tool'), true);
  });

  it('refuses a batch on a session negotiated after 2025-03-26, as over HTTP', async () => {
    wire.send([{ jsonrpc: '2.0', id: 'n1', method: 'ping' }]);
    const refused = await wire.next(
      (m) => m.error?.code === -32600 && m.id === null && /batches/.test(m.error.message),
    );
    assert.match(refused.error.message, /2025-03-26/);
    assert.equal(
      wire.received.some((m) => m.id === 'n1'),
      false,
    );
  });

  it('answers a batch with one array', async () => {
    const { result } = await wire.request(30, 'initialize', {
      protocolVersion: '2025-03-26',
      capabilities: {},
      clientInfo: { name: 'old-client', version: '1' },
    });
    assert.equal(result.protocolVersion, '2025-03-26');
    wire.send([
      { jsonrpc: '2.0', id: 'b1', method: 'ping' },
      { jsonrpc: '2.0', method: 'notifications/progress', params: {} },
      { jsonrpc: '2.0', id: 'b2', method: 'tools/call', params: { name: 'echo', arguments: { text: 'batched' } } },
    ]);
    const batch = await wire.next((m) => Array.isArray(m));
    const line = wire.raw.find((l) => l.startsWith('['));
    assert.ok(line, 'a batch response line');
    const responses = JSON.parse(line) as Json[];
    assert.deepEqual(responses, batch);
    assert.deepEqual(responses.map((r) => r.id).sort(), ['b1', 'b2']);
  });
});

describe('McpStdio.serve lifecycle', () => {
  it('closes the application when stdin ends', async () => {
    const { app, wire, stdio } = await open();
    const close = app.close.bind(app);
    const closing = new Promise<void>((resolve) => {
      app.close = async () => {
        resolve();
        await close();
      };
    });
    wire.input.end();
    await stdio.closed;
    await guard(closing, 'the application was not closed after stdin ended');
  });

  it('refuses calls that need scopes when told to (stdio carries no token)', async () => {
    const app = await NestFactory.createApplicationContext(StdioSpecModule, { logger: false });
    const wire = new Wire();
    const stdio = new McpStdioServer(app.get<symbol, McpDispatcher>(MCP_DISPATCHER), {
      input: wire.input,
      output: wire.output,
      refuseScopedCalls: true,
    }).listen();
    try {
      const denied = await wire.request(1, 'tools/call', { name: 'admin', arguments: {}, _meta: modernMeta() });
      assert.equal(denied.error.code, -32600);
      assert.match(denied.error.message, /scopes/);
      const allowed = await wire.request(2, 'tools/call', {
        name: 'echo',
        arguments: { text: 'ok' },
        _meta: modernMeta(),
      });
      assert.equal(allowed.result.content[0].text, 'ok');
    } finally {
      stdio.close();
      await app.close();
    }
  });

  it('explains how to fix an application without McpModule', async () => {
    @Module({})
    class Empty {}
    const app = await NestFactory.createApplicationContext(Empty, { logger: false });
    try {
      await assert.rejects(
        McpStdio.serve(app, { input: new PassThrough(), output: new PassThrough() }),
        /import McpModule\.forRoot/,
      );
    } finally {
      await app.close();
    }
  });
});
