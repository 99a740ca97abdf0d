import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Observable, of, toArray, lastValueFrom } from 'rxjs';
import type { McpToolCatalog, ToolRuntime } from './catalog.js';
import { McpContext, type RequestEnvelope } from './context.js';
import { McpError, ToolError } from './errors.js';
import type { JsonRpcMessage } from './json-rpc.js';
import { McpDispatcher } from './dispatcher.js';
import { installTools } from '../tools/tools.js';

function tool(name: string, invoke: ToolRuntime['invoke']): ToolRuntime {
  const descriptor = { name, inputSchema: { type: 'object' } };
  return {
    name,
    descriptors: { legacy: descriptor, modern: descriptor },
    hasOutputSchema: false,
    parseArguments: (args) => ({ ok: true, value: args }),
    invoke,
  };
}

function serverWith(tools: ToolRuntime[], errors: string[] = []): McpDispatcher {
  const catalog: McpToolCatalog = { version: 1, tools: () => tools, tool: (n) => tools.find((t) => t.name === n) };
  const logger = { error: (m: string) => errors.push(m), warn: () => undefined };
  const server = new McpDispatcher(
    {
      serverInfo: { name: 's', version: '1' },
      discoverCache: { ttlMs: 1, cacheScope: 'public' },
      listCache: { ttlMs: 2, cacheScope: 'private' },
      exposeInternalErrors: false,
      logger,
    },
    catalog,
  );
  installTools(server, catalog, { exposeInternalErrors: false, logger });
  return server;
}

const legacy: RequestEnvelope = { era: 'legacy', protocolVersion: '2025-11-25', capabilities: {} };
const modern: RequestEnvelope = { era: 'modern', protocolVersion: '2026-07-28', capabilities: {}, logLevel: 'info' };

function run(
  server: McpDispatcher,
  method: string,
  params: Record<string, unknown>,
  env = legacy,
): Promise<JsonRpcMessage[]> {
  return lastValueFrom(server.handle({ jsonrpc: '2.0', id: 1, method, params }, env).pipe(toArray()));
}

describe('McpDispatcher', () => {
  it('merges extensions declared by several features under capabilities.extensions', () => {
    const server = serverWith([]);
    server.declareExtension('io.modelcontextprotocol/tasks', { a: 1 });
    server.declareExtension('io.modelcontextprotocol/ui');
    assert.deepEqual(server.capabilities().extensions, {
      'io.modelcontextprotocol/tasks': { a: 1 },
      'io.modelcontextprotocol/ui': {},
    });
    assert.deepEqual(server.capabilities().tools, { listChanged: true });
  });

  it('reads a client extension by its dotted id, and nothing from a malformed extensions value', () => {
    const declared = {
      ...modern,
      capabilities: { extensions: { 'io.modelcontextprotocol/ui': { mimeTypes: ['text/html;profile=mcp-app'] } } },
    };
    const ctx = new McpContext(1, 'tools/call', declared, {}, () => undefined);
    assert.deepEqual(ctx.clientExtension('io.modelcontextprotocol/ui'), { mimeTypes: ['text/html;profile=mcp-app'] });
    assert.equal(ctx.clientExtension('io.modelcontextprotocol/tasks'), undefined);
    const malformed = new McpContext(
      1,
      'tools/call',
      { ...modern, capabilities: { extensions: ['io.modelcontextprotocol/ui'] } },
      {},
      () => undefined,
    );
    assert.equal(malformed.clientExtension('io.modelcontextprotocol/ui'), undefined);
  });

  it('emits notifications before exactly one response, then completes', async () => {
    const server = serverWith([
      tool(
        'steps',
        (_a, _r, ctx) =>
          new Observable((sub) => {
            ctx.progress(1, 2);
            ctx.progress(1, 2);
            ctx.progress(2, 2);
            ctx.log('debug', 'hidden below info');
            ctx.log('warning', 'shown');
            sub.next('done');
            sub.complete();
          }),
      ),
    ]);
    const messages = await run(server, 'tools/call', { name: 'steps', _meta: { progressToken: 't' } }, modern);
    assert.deepEqual(
      messages.map((m) => ('method' in m ? m.method : 'response')),
      ['notifications/progress', 'notifications/progress', 'notifications/message', 'response'],
    );
    const response = messages.at(-1) as { result: Record<string, unknown> };
    assert.equal(response.result.resultType, 'complete');
  });

  it('sends no progress without a progressToken', async () => {
    const server = serverWith([tool('p', (_a, _r, ctx) => (ctx.progress(1), of('x')))]);
    const messages = await run(server, 'tools/call', { name: 'p' });
    assert.equal(messages.length, 1);
  });

  it('cancels a running tool on unsubscribe and aborts its signal', () => {
    let tornDown = false;
    let aborted = false;
    const server = serverWith([
      tool('slow', (_a, _r, ctx) => {
        ctx.signal.addEventListener('abort', () => (aborted = true));
        return new Observable(() => () => (tornDown = true));
      }),
    ]);
    const sub = server
      .handle({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'slow' } }, legacy)
      .subscribe();
    sub.unsubscribe();
    assert.equal(tornDown, true);
    assert.equal(aborted, true);
  });

  it('maps errors: ToolError and unknown errors to isError, McpError to JSON-RPC', async () => {
    const errors: string[] = [];
    const server = serverWith(
      [
        tool('te', () => new Observable((s) => s.error(new ToolError('readable')))),
        tool('boom', () => new Observable((s) => s.error(new Error('secret')))),
        tool('proto', () => new Observable((s) => s.error(new McpError(-32602, 'bad', { x: 1 })))),
      ],
      errors,
    );
    const te = (await run(server, 'tools/call', { name: 'te' }))[0] as unknown as {
      result: { isError: boolean; content: [{ text: string }] };
    };
    assert.equal(te.result.isError, true);
    assert.equal(te.result.content[0].text, 'readable');
    const boom = (await run(server, 'tools/call', { name: 'boom' }))[0] as unknown as {
      result: { content: [{ text: string }] };
    };
    assert.doesNotMatch(boom.result.content[0].text, /secret/);
    assert.equal(errors.length, 1);
    const proto = (await run(server, 'tools/call', { name: 'proto' }))[0] as unknown as {
      error: { code: number; data: unknown };
    };
    assert.equal(proto.error.code, -32602);
    assert.deepEqual(proto.error.data, { x: 1 });
  });

  it('caches list results per era and decorates modern ones', async () => {
    const server = serverWith([tool('a', () => of(1))]);
    const [l1] = (await run(server, 'tools/list', {})) as Array<{ result: unknown }>;
    const [l2] = (await run(server, 'tools/list', {})) as Array<{ result: unknown }>;
    assert.equal(l1.result, l2.result);
    const [m] = (await run(server, 'tools/list', {}, modern)) as Array<{ result: Record<string, unknown> }>;
    assert.equal(m.result.ttlMs, 2);
    assert.equal(m.result.cacheScope, 'private');
    assert.equal(m.result.resultType, 'complete');
  });

  it('returns structured content for objects on both eras, and for other values only where an output schema describing them is listed', async () => {
    const typed: ToolRuntime = {
      ...tool('typed', () => of([1, 2])),
      // As the tool factory builds it: 2025-11-25 lists object output schemas only.
      descriptors: {
        legacy: { name: 'typed', inputSchema: { type: 'object' } },
        modern: { name: 'typed', inputSchema: { type: 'object' }, outputSchema: { type: 'array' } },
      },
      hasOutputSchema: true,
      checkOutput: (value) => (Array.isArray(value) ? null : 'must be an array'),
    };
    const server = serverWith([tool('obj', () => of({ a: 1 })), tool('arr', () => of([1, 2])), typed]);
    type Call = { result: Record<string, unknown> };
    for (const era of [legacy, modern]) {
      const [obj] = (await run(server, 'tools/call', { name: 'obj' }, era)) as Call[];
      assert.deepEqual(obj.result.structuredContent, { a: 1 });
      const [arr] = (await run(server, 'tools/call', { name: 'arr' }, era)) as Call[];
      assert.equal(arr.result.structuredContent, undefined, era.era);
      assert.deepEqual(arr.result.content, [{ type: 'text', text: '[1,2]' }]);
    }
    const [typedLegacy] = (await run(server, 'tools/call', { name: 'typed' }, legacy)) as Call[];
    assert.equal(typedLegacy.result.structuredContent, undefined);
    assert.equal(typedLegacy.result.isError, undefined);
    const [typedModern] = (await run(server, 'tools/call', { name: 'typed' }, modern)) as Call[];
    assert.deepEqual(typedModern.result.structuredContent, [1, 2]);
  });
});
