import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { lastValueFrom, of, toArray } from 'rxjs';
import type { McpToolCatalog, ToolRuntime } from '../protocol/catalog.js';
import type { RequestEnvelope } from '../protocol/context.js';
import { McpDispatcher } from '../protocol/dispatcher.js';
import type { JsonObject } from '../protocol/mcp-types.js';
import { McpMethods } from '../protocol/methods.js';
import { installTools } from '../tools/tools.js';
import { Bm25Index, tokenize } from './bm25.js';
import { ToolSetGate } from './tool-set.gate.js';
import { ToolSetSelector } from './tool-set.selector.js';
import { resolveToolSetsOptions, type McpToolSetsOptions } from './tool-sets.options.js';

function tool(name: string, sets: string[] | undefined, extra: Partial<ToolRuntime> = {}): ToolRuntime {
  const descriptor = { name, description: `The ${name} tool.`, inputSchema: { type: 'object' } as JsonObject };
  return {
    name,
    descriptors: { legacy: descriptor, modern: descriptor },
    hasOutputSchema: false,
    parseArguments: (args) => ({ ok: true, value: args }),
    invoke: () => of(name),
    ...(sets ? { sets } : {}),
    ...extra,
  };
}

/** A real dispatcher with the tools feature behind a tool-set gate, over a hand-built catalog. */
function gatedServer(
  tools: ToolRuntime[],
  options: Partial<McpToolSetsOptions>,
): { server: McpDispatcher; gate: ToolSetGate } {
  const catalog: McpToolCatalog = {
    version: 1,
    tools: () => tools,
    tool: (name) => tools.find((t) => t.name === name),
  };
  const logger = { error: () => undefined, warn: () => undefined };
  const server = new McpDispatcher(
    {
      serverInfo: { name: 's', version: '1' },
      discoverCache: { ttlMs: 1, cacheScope: 'public' },
      listCache: { ttlMs: 60_000, cacheScope: 'public' },
      exposeInternalErrors: false,
      logger,
    },
    catalog,
  );
  const features = { readCache: { ttlMs: 0, cacheScope: 'private' as const }, exposeInternalErrors: false, logger };
  const gate = new ToolSetGate(
    server,
    catalog,
    resolveToolSetsOptions({ sets: { a: {}, b: {}, c: {} }, ...options }),
    features,
  );
  installTools(server, catalog, features, undefined, gate);
  server.define(McpMethods.toolsCall, { prepare: gate.prepare });
  return { server, gate };
}

async function listNames(
  server: McpDispatcher,
  envelope: RequestEnvelope,
): Promise<{ names: string[]; result: JsonObject }> {
  const [response] = await lastValueFrom(
    server.handle({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} }, envelope).pipe(toArray()),
  );
  const result = (response as { result: JsonObject }).result;
  return { names: (result.tools as Array<{ name: string }>).map((t) => t.name), result };
}

describe('tool sets: lists per shape', () => {
  it('builds one list per (sets, guard outcome) shape: 10,000 principals over 5 shapes cost 5 builds', async () => {
    // Guards that refuse `guarded` to principals whose id ends in 0: a second guard outcome.
    const guarded = tool('guarded', ['a'], {
      authorize: (ctx) => (ctx.principal?.endsWith('0') ? Promise.reject(new Error('no')) : Promise.resolve()),
    });
    const tools = [tool('a1', ['a']), tool('b1', ['b']), tool('c1', ['c']), tool('free', undefined), guarded];
    const roles = [['a'], ['b'], ['c'], ['a', 'b']];
    const { server, gate } = gatedServer(tools, {
      select: ({ principal }) => roles[Number(principal!.id.slice(1)) % 4],
    });
    const seen = new Map<string, string>();
    for (let i = 0; i < 10_000; i++) {
      const auth = { id: `p${i}` };
      const envelope: RequestEnvelope = {
        era: i % 2 ? 'modern' : 'legacy',
        protocolVersion: i % 2 ? '2026-07-28' : '2025-11-25',
        capabilities: {},
        principal: auth.id,
        auth,
        transportRequest: {},
      };
      const { names, result } = await listNames(server, envelope);
      seen.set(names.join(','), names.join(','));
      if (i % 2) assert.equal(result.cacheScope, 'private', 'a list that varies by caller is never shared');
    }
    // a (guard admits), a (guard refuses), b, c, a+b (guard admits), a+b (guard refuses): i%4==3 ids end in 3 or 7 only, never 0.
    assert.deepEqual(
      [...seen.keys()].sort(),
      ['a1,free', 'a1,b1,free,guarded', 'a1,free,guarded', 'b1,free', 'c1,free'].sort(),
    );
    assert.equal(gate.builds, 5);
  });

  it('serves the catalog to everyone, publicly cached, when no set is selected and nothing differs', async () => {
    const { server, gate } = gatedServer([tool('x', ['a']), tool('y', undefined)], {});
    const modern: RequestEnvelope = {
      era: 'modern',
      protocolVersion: '2026-07-28',
      capabilities: {},
      transportRequest: { url: '/mcp' },
    };
    const { names, result } = await listNames(server, modern);
    assert.deepEqual(names, ['x', 'y']);
    assert.equal(result.cacheScope, 'public');
    await listNames(server, { ...modern, transportRequest: { url: '/mcp' } });
    assert.equal(gate.builds, 1);
  });
});

describe('tool sets: selection per caller', () => {
  const options = (extra: Partial<McpToolSetsOptions>) => resolveToolSetsOptions({ sets: { a: {}, b: {} }, ...extra });

  it('caches select per principal, bounded in count and age', async () => {
    let now = 0;
    const calls: string[] = [];
    const selector = new ToolSetSelector(
      options({
        select: ({ principal }) => (calls.push(principal!.id), ['a']),
        cache: { maxPrincipals: 2, ttlMs: 100 },
      }),
      { error: () => undefined },
      () => now,
    );
    const ask = (id: string) => selector.select({ principal: { id } });
    await ask('p1');
    await ask('p1');
    assert.deepEqual(calls, ['p1']);
    await ask('p2');
    await ask('p3');
    assert.equal(selector.cachedPrincipals, 2, 'the oldest principal is dropped at the bound');
    await ask('p1');
    assert.deepEqual(calls, ['p1', 'p2', 'p3', 'p1']);
    now = 101;
    await ask('p1');
    assert.deepEqual(calls, ['p1', 'p2', 'p3', 'p1', 'p1'], 'an expired entry asks again');
  });

  it('lets the URL narrow, never widen, what select granted; unknown names select nothing', async () => {
    const selector = new ToolSetSelector(options({ select: () => ['a'] }), { error: () => undefined });
    const sets = async (url: string) => [
      ...((await selector.select({ principal: { id: 'x' }, transportRequest: { url } })).sets ?? ['*']),
    ];
    assert.deepEqual(await sets('/mcp'), ['a']);
    assert.deepEqual(await sets('/mcp?toolsets=a,b'), ['a']);
    assert.deepEqual(await sets('/mcp?toolsets=b'), []);
    const open = new ToolSetSelector(options({ default: ['b'] }), { error: () => undefined });
    assert.deepEqual(
      [...(open.select({ transportRequest: { url: '/mcp?toolsets=a,zz' } }) as { sets: ReadonlySet<string> }).sets],
      ['a'],
    );
    assert.deepEqual(
      [...(open.select({ transportRequest: { url: '/mcp' } }) as { sets: ReadonlySet<string> }).sets],
      ['b'],
    );
    assert.equal(
      (open.select({ transportRequest: { url: '/mcp?mode=progressive' } }) as { mode: string }).mode,
      'progressive',
    );
  });

  it('answers -32603 with a reference when select throws, and caches nothing', async () => {
    const errors: string[] = [];
    const selector = new ToolSetSelector(
      options({ select: () => Promise.reject(new Error('db down: secret detail')) }),
      { error: (m) => errors.push(m) },
    );
    await assert.rejects(
      Promise.resolve(selector.select({ principal: { id: 'x' } })),
      (error: Error & { code: number }) => {
        assert.equal(error.code, -32603);
        assert.doesNotMatch(error.message, /secret detail/);
        return true;
      },
    );
    assert.equal(selector.cachedPrincipals, 0);
    assert.match(errors[0]!, /db down/);
  });

  it('fails a request whose select names an undefined set, or stalls past selectTimeoutMs, caching neither', async () => {
    const errors: string[] = [];
    const typo = new ToolSetSelector(options({ select: () => ['a', 'biling'] }), { error: (m) => errors.push(m) });
    assert.throws(
      () => typo.select({ principal: { id: 'x' } }),
      (error: Error & { code: number }) => error.code === -32603,
    );
    assert.match(errors[0]!, /returned set "biling", which "toolSets.sets" does not define/);
    const stalled = new ToolSetSelector(
      options({ select: () => new Promise<string[]>(() => undefined), selectTimeoutMs: 10 }),
      { error: (m) => errors.push(m) },
    );
    const first = Promise.resolve(stalled.select({ principal: { id: 'y' } }));
    const second = Promise.resolve(stalled.select({ principal: { id: 'y' } }));
    for (const waiting of [first, second])
      await assert.rejects(waiting, (error: Error & { code: number }) => error.code === -32603);
    assert.match(errors.at(-1)!, /did not answer within 10 ms \(the toolSets.selectTimeoutMs option\)/);
    assert.equal(stalled.cachedPrincipals, 0);
  });

  it('refuses options that name undefined sets, with what to fix', () => {
    assert.throws(
      () => resolveToolSetsOptions({ sets: { a: {} }, default: ['zz'] }),
      /"toolSets.default" names set "zz"/,
    );
    assert.throws(() => resolveToolSetsOptions({ sets: { 'bad name': {} } }), /set name "bad name"/);
    assert.throws(() => resolveToolSetsOptions({ sets: {}, cache: { maxPrincipals: 0 } }), /cache.maxPrincipals/);
  });
});

describe('tool sets: search', () => {
  it('ranks by BM25 over weighted fields, deterministically', () => {
    const docs = [
      {
        item: 'list_invoices',
        fields: [
          ['list_invoices', 3],
          ['List the invoices of a customer', 1],
        ] as const,
      },
      {
        item: 'create_invoice',
        fields: [
          ['create_invoice', 3],
          ['Create an invoice', 1],
        ] as const,
      },
      {
        item: 'find_customer',
        fields: [
          ['find_customer', 3],
          ['Find a customer by name', 1],
        ] as const,
      },
    ];
    const index = new Bm25Index(docs);
    assert.equal(index.search('customer invoices', 3)[0]!.item, 'list_invoices', 'the tool with both words first');
    assert.equal(index.search('find a customer', 3)[0]!.item, 'find_customer');
    assert.equal(index.search('customer invoices', 3).length, 3);
    assert.deepEqual(index.search('customer invoices', 3), index.search('customer invoices', 3));
    assert.deepEqual(index.search('nothing matches', 3), []);
    assert.deepEqual(tokenize('listInvoices for the_customer'), ['list', 'invoice', 'customer']);
  });
});
