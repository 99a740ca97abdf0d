import 'reflect-metadata';
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { after, before, describe, it } from 'node:test';
import { Injectable, Module, type INestApplicationContext } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { IsString } from 'class-validator';
import { filter, firstValueFrom, lastValueFrom, take, toArray } from 'rxjs';
import { Args, Ctx } from '../decorators/params.decorators.js';
import { Tool } from '../tools/tool.decorator.js';
import { McpRegistry } from '../discovery/mcp.registry.js';
import { RequireScopes } from '../auth/require-scopes.decorator.js';
import { McpModule } from '../mcp.module.js';
import type { McpContext } from '../protocol/context.js';
import type { JsonRpcMessage } from '../protocol/json-rpc.js';
import { McpInProcessTransport } from './in-process.transport.js';

type Json = Record<string, any>;

const modernMeta = (capabilities: Json = {}) => ({
  'io.modelcontextprotocol/protocolVersion': '2026-07-28',
  'io.modelcontextprotocol/clientCapabilities': capabilities,
});

class NameDto {
  @IsString()
  name!: string;
}

/** Tools that exercise each kind of message an exchange carries. */
@Injectable()
class InProcessTools {
  @Tool({ description: 'Reports progress twice, then answers.' })
  steps(@Ctx() ctx: McpContext): string {
    for (const step of [1, 2]) ctx.progress(step, 2);
    return 'stepped';
  }

  @Tool({ description: 'Says its text back.' })
  echo(@Args() echoed: NameDto): string {
    return echoed.name;
  }

  @Tool({ description: 'Asks for a name, then greets it.' })
  async greet(@Ctx() ctx: McpContext): Promise<string> {
    const answer = await ctx.elicit('Your name?', NameDto, { key: 'name' });
    if (answer.action !== 'accept') throw new Error(`no name: ${answer.action}`);
    return `Hello, ${answer.content.name}!`;
  }

  @RequireScopes('admin')
  @Tool({ description: 'Only for admins.' })
  admin(): string {
    return 'admin done';
  }

  @Tool({ description: 'Runs until the client cancels it.' })
  async wait(@Ctx() ctx: McpContext): Promise<string> {
    const aborted = once(ctx.signal, 'abort');
    this.onStarted?.();
    await aborted;
    this.cancelled += 1;
    this.onCancelled?.();
    return 'cancelled';
  }

  /** Calls `wait` stopped by a cancellation. */
  cancelled = 0;
  onStarted?: () => void;
  onCancelled?: () => void;
}

@Module({
  imports: [
    McpModule.forRoot({
      name: 'in-process-spec',
      version: '1.0.0',
      auth: {
        resource: 'https://mcp.example.com/mcp',
        authorizationServers: ['https://auth.example.com'],
        verifyToken: () => null,
      },
    }),
  ],
  providers: [InProcessTools],
})
class InProcessSpecModule {}

const all = (messages: ReturnType<McpInProcessTransport['send']>): Promise<Json[]> =>
  lastValueFrom(messages.pipe(toArray())) as Promise<Json[]>;
const alice = { id: 'alice', scopes: ['admin'] };

describe('McpInProcessTransport', () => {
  let app: INestApplicationContext;
  before(async () => {
    app = await NestFactory.createApplicationContext(InProcessSpecModule, { logger: false });
  });
  after(() => app.close());

  describe('2026-07-28 messages', () => {
    let mcp: McpInProcessTransport;
    before(() => (mcp = McpInProcessTransport.forApp(app)));
    after(() => mcp.close());

    it('calls a tool without a session, and streams its progress before the result', async () => {
      const messages = await all(
        mcp.send({
          jsonrpc: '2.0',
          id: 1,
          method: 'tools/call',
          params: { name: 'steps', arguments: {}, _meta: { ...modernMeta(), progressToken: 'p' } },
        }),
      );
      assert.deepEqual(
        messages.slice(0, 2).map((m) => m.params.progress),
        [1, 2],
      );
      assert.equal(messages[2].id, 1);
      assert.deepEqual(messages[2].result.content, [{ type: 'text', text: 'stepped' }]);
    });

    it('checks scopes against the principal of the send', async () => {
      const call = {
        jsonrpc: '2.0' as const,
        id: 2,
        method: 'tools/call',
        params: { name: 'admin', arguments: {}, _meta: modernMeta() },
      };
      const [denied] = await all(mcp.send(call, { principal: { id: 'bob', scopes: [] } }));
      assert.equal(denied.error.code, -32600);
      assert.match(denied.error.message, /scope\(s\) admin/);
      const [allowed] = await all(mcp.send({ ...call, id: 3 }, { principal: alice }));
      assert.equal(allowed.result.content[0].text, 'admin done');
    });

    it('applies the Streamable HTTP header rules when asked to', async () => {
      const [refused] = await all(
        mcp.send(
          { jsonrpc: '2.0', id: 4, method: 'tools/list', params: { _meta: modernMeta() } },
          { headers: { 'MCP-Protocol-Version': '2026-07-28' }, headerRules: true },
        ),
      );
      assert.equal(refused.error.code, -32020);
      assert.match(refused.error.message, /Mcp-Method/);
    });

    it('cancels the call when the subscriber unsubscribes before the result', async () => {
      const tools = app.get(InProcessTools);
      const before = tools.cancelled;
      const started = new Promise<void>((resolve) => (tools.onStarted = resolve));
      const subscription = mcp
        .send({
          jsonrpc: '2.0',
          id: 5,
          method: 'tools/call',
          params: { name: 'wait', arguments: {}, _meta: modernMeta() },
        })
        .subscribe();
      await started;
      const stopped = new Promise<void>((resolve) => (tools.onCancelled = resolve));
      subscription.unsubscribe();
      await stopped;
      assert.equal(tools.cancelled, before + 1);
    });
  });

  describe('legacy session', () => {
    let mcp: McpInProcessTransport;
    before(() => (mcp = McpInProcessTransport.forApp(app)));
    after(() => mcp.close());

    it('refuses requests before initialize, then negotiates the version', async () => {
      const [early] = await all(mcp.send({ jsonrpc: '2.0', id: 1, method: 'tools/list' }, { principal: alice }));
      assert.match(early.error.message, /before initialize/);
      const [init] = await all(
        mcp.send(
          {
            jsonrpc: '2.0',
            id: 2,
            method: 'initialize',
            params: {
              protocolVersion: '2025-06-18',
              capabilities: { elicitation: {} },
              clientInfo: { name: 't', version: '1' },
            },
          },
          { principal: alice },
        ),
      );
      assert.equal(init.result.protocolVersion, '2025-06-18');
      assert.deepEqual(
        await all(mcp.send({ jsonrpc: '2.0', method: 'notifications/initialized' }, { principal: alice })),
        [],
      );
      const [list] = await all(mcp.send({ jsonrpc: '2.0', id: 3, method: 'tools/list' }, { principal: alice }));
      assert.deepEqual(
        list.result.tools.map((t: Json) => t.name),
        ['steps', 'echo', 'greet', 'admin', 'wait'],
      );
    });

    it('sends elicitation/create on the call and resumes it with the answer sent back', async () => {
      const seen: Json[] = [];
      const done = new Promise<void>((resolve, reject) => {
        mcp
          .send(
            { jsonrpc: '2.0', id: 4, method: 'tools/call', params: { name: 'greet', arguments: {} } },
            { principal: alice },
          )
          .subscribe({
            next: (message: JsonRpcMessage) => {
              const m = message as Json;
              seen.push(m);
              if (m.method === 'elicitation/create') {
                mcp
                  .send(
                    { jsonrpc: '2.0', id: m.id, result: { action: 'accept', content: { name: 'Ada' } } },
                    { principal: alice },
                  )
                  .subscribe();
              }
            },
            complete: resolve,
            error: reject,
          });
      });
      await done;
      assert.equal(seen[0].params.message, 'Your name?');
      assert.deepEqual(seen.at(-1)!.result.content, [{ type: 'text', text: 'Hello, Ada!' }]);
    });

    it('tells the session when the tool list changes', async () => {
      const changed = firstValueFrom(
        mcp.notifications.pipe(
          filter((m) => (m as Json).method === 'notifications/tools/list_changed'),
          take(1),
        ),
      );
      app.get(McpRegistry).addTool({ name: 'late_tool', description: 'Added at runtime.', handler: () => 'late' });
      await changed;
      assert.equal(app.get(McpRegistry).removeTool('late_tool'), true);
    });
  });
});
