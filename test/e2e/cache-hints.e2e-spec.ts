/**
 * ISSUE-18 item 4: cache hints per item and per list on 2026-07-28 lists, declared in the
 * decorator or computed per request; pages that guards make caller-specific stay private; the
 * legacy era carries no hints.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { CacheHintsModule, computed } from '../fixtures/cache-hints.module.js';
import { startApp, type RunningApp } from '../utils/app.js';
import { META_KEYS, connectSdkClient, modernRpc, rpc } from '../utils/clients.js';

type Json = Record<string, any>;

async function modernList(url: string, method: string, cursor?: string): Promise<Json> {
  const res = await modernRpc(url, method, cursor ? { cursor } : {});
  assert.equal(res.status, 200, res.text);
  return (res.json as Json).result;
}

async function modernListAs(url: string, method: string, clientName: string, cursor?: string): Promise<Json> {
  const params: Json = { _meta: { [META_KEYS.clientInfo]: { name: clientName, version: '1' } } };
  if (cursor) params.cursor = cursor;
  const res = await modernRpc(url, method, params);
  assert.equal(res.status, 200, res.text);
  return (res.json as Json).result;
}

describe('list cache hints per item (issue 18 item 4)', () => {
  let server: RunningApp;
  before(async () => {
    server = await startApp(CacheHintsModule.register());
  });
  after(() => server.close());

  it('a page carries the shortest TTL of the list and its items', async () => {
    const first = await modernList(server.url, 'tools/list');
    assert.deepEqual(
      first.tools.map((t: Json) => t.name),
      ['plain', 'hot'],
    );
    assert.equal(first.ttlMs, 5_000);
    assert.equal(first.cacheScope, 'public');
  });

  it('an item hint given as a function is computed per list request, for the caller', async () => {
    const first = await modernList(server.url, 'tools/list');
    const before = computed.count;
    const a = await modernListAs(server.url, 'tools/list', 'tenant-b', first.nextCursor);
    const b = await modernListAs(server.url, 'tools/list', 'tenant-a', first.nextCursor);
    assert.deepEqual(
      a.tools.map((t: Json) => t.name),
      ['per_call'],
    );
    assert.equal(computed.count, before + 2, 'the hint function runs once per request');
    assert.equal(a.ttlMs, 1_000 + before + 1);
    assert.equal(b.ttlMs, 1_000 + before + 2);
    assert.equal(a.cacheScope, 'public');
    assert.equal(b.cacheScope, 'private', 'the function made it private for tenant-a');
  });

  it('an item declaring private makes its page private; resources and prompts follow their items too', async () => {
    const prompts = await modernList(server.url, 'prompts/list');
    assert.equal(prompts.cacheScope, 'private');
    assert.equal(prompts.ttlMs, 60_000);
    const resources = await modernList(server.url, 'resources/list');
    assert.equal(resources.cacheScope, 'public');
    assert.equal(resources.ttlMs, 60_000, 'an item can only shorten the list TTL');
  });

  it('sends no cache hints on the legacy era (2025-11-25 results have no such fields)', async () => {
    const conn = await connectSdkClient(server.url);
    try {
      const res = await rpc(
        server.url,
        { jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} },
        {
          sessionId: conn.sessionId,
          headers: { 'MCP-Protocol-Version': '2025-11-25' },
        },
      );
      const result = ((res.json ?? res.events?.[0]?.data) as Json).result;
      assert.deepEqual(
        result.tools.map((t: Json) => t.name),
        ['plain', 'hot'],
      );
      assert.equal(result.ttlMs, undefined);
      assert.equal(result.cacheScope, undefined);
      // The same tools list and call there as on 2026.
      const listed = await conn.client.listTools();
      assert.deepEqual(
        listed.tools.map((t) => t.name),
        ['plain', 'hot'],
      );
    } finally {
      await conn.close();
    }
  });
});

describe('list cache hints under guards (issue 18 item 4)', () => {
  let server: RunningApp;
  before(async () => {
    server = await startApp(CacheHintsModule.register({}, { guarded: true }));
  });
  after(() => server.close());

  it('keeps private every page of a list that guards make caller-specific, even when its items say public', async () => {
    const first = await modernList(server.url, 'tools/list');
    assert.equal(first.cacheScope, 'private');
    assert.equal(first.ttlMs, 5_000, 'item TTLs still apply');
    const second = await modernList(server.url, 'tools/list', first.nextCursor);
    assert.deepEqual(
      second.tools.map((t: Json) => t.name),
      ['per_call', 'guarded'],
    );
    assert.equal(second.cacheScope, 'private');
  });
});

describe('list cache hints per list (issue 18 item 4)', () => {
  let server: RunningApp;
  const seen: string[] = [];
  before(async () => {
    server = await startApp(
      CacheHintsModule.register({
        cache: {
          lists: (list, ctx) => {
            seen.push(`${list}:${ctx.method}`);
            return list === 'prompts'
              ? { ttlMs: 1_234, cacheScope: 'public' }
              : { ttlMs: 90_000, cacheScope: 'public' };
          },
        },
      }),
    );
  });
  after(() => server.close());

  it('computes the module hint per list and per request', async () => {
    const tools = await modernList(server.url, 'tools/list');
    assert.equal(tools.ttlMs, 5_000, 'the hot tool still shortens the page');
    const prompts = await modernList(server.url, 'prompts/list');
    assert.equal(prompts.ttlMs, 1_234);
    assert.equal(prompts.cacheScope, 'private', 'the note prompt is private');
    const resources = await modernList(server.url, 'resources/list');
    assert.equal(resources.ttlMs, 90_000);
    assert.deepEqual(seen, ['tools:tools/list', 'prompts:prompts/list', 'resources:resources/list']);
  });

  it('refuses an invalid item hint at bootstrap, naming the method', async () => {
    const { ToolRuntimeFactory } = await import('../../lib/tools/tool-runtime.factory.js');
    const { of } = await import('rxjs');
    assert.throws(
      () => new ToolRuntimeFactory().build({ name: 'x', listCache: { ttlMs: -1 } }, () => of(null), 'Tools#x'),
      /^Error: Tools#x: "listCache" must be \{ ttlMs\?: a non-negative integer/,
    );
  });
});
