import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { WireModule } from '../fixtures/wire.module.js';
import { startApp, type RunningApp } from '../utils/app.js';
import { modernHeaders, modernMeta, modernRpc, rpc } from '../utils/clients.js';

type Json = Record<string, any>;
const SERVER_INFO = 'io.modelcontextprotocol/serverInfo';

function body(id: number | string, method: string, params: Json = {}): Json {
  return { jsonrpc: '2.0', id, method, params: { ...params, _meta: modernMeta() } };
}

describe('modern era (2026-07-28) on the same endpoint', () => {
  let server: RunningApp;
  before(async () => {
    server = await startApp(WireModule.register());
  });
  after(() => server.close());

  it('answers server/discover with versions, capabilities, cache hints and serverInfo', async () => {
    const res = await modernRpc(server.url, 'server/discover', {}, { id: 'd' });
    assert.equal(res.status, 200);
    const json = res.json as Json;
    assert.equal(json.id, 'd');
    assert.deepEqual(json.result.supportedVersions, ['2026-07-28']);
    assert.ok(json.result.capabilities.tools);
    assert.equal(json.result.resultType, 'complete');
    assert.equal(typeof json.result.ttlMs, 'number');
    assert.ok(['public', 'private'].includes(json.result.cacheScope));
    assert.deepEqual(json.result._meta[SERVER_INFO], { name: 'wire', version: '1.2.3' });
    assert.equal(res.headers.get('mcp-session-id'), null);
  });

  it('puts resultType, cache hints and serverInfo on tools/list and resultType on tools/call', async () => {
    const list = (await modernRpc(server.url, 'tools/list')).json as Json;
    assert.equal(list.result.resultType, 'complete');
    assert.equal(typeof list.result.ttlMs, 'number');
    assert.ok(list.result._meta[SERVER_INFO]);
    assert.ok(list.result.tools.some((t: Json) => t.name === 'echo'));
    const call = (await modernRpc(server.url, 'tools/call', { name: 'echo', arguments: { text: 'hey', times: 2 } }))
      .json as Json;
    assert.equal(call.result.resultType, 'complete');
    assert.equal(call.result.content[0].text, 'heyhey');
  });

  it('rejects a missing or incomplete _meta with 400 / -32602, echoing the id', async () => {
    const noMeta = await rpc(
      server.url,
      { jsonrpc: '2.0', id: 11, method: 'tools/list', params: {} },
      { headers: modernHeaders('tools/list') },
    );
    assert.equal(noMeta.status, 400);
    assert.equal((noMeta.json as Json).error.code, -32602);
    assert.equal((noMeta.json as Json).id, 11);
    const noCaps = await rpc(
      server.url,
      {
        jsonrpc: '2.0',
        id: 12,
        method: 'tools/list',
        params: { _meta: { 'io.modelcontextprotocol/protocolVersion': '2026-07-28' } },
      },
      { headers: modernHeaders('tools/list') },
    );
    assert.equal(noCaps.status, 400);
    assert.equal((noCaps.json as Json).error.code, -32602);
    assert.equal((noCaps.json as Json).id, 12);
  });

  it('rejects an unsupported version with -32022 and the supported list', async () => {
    const res = await rpc(
      server.url,
      {
        jsonrpc: '2.0',
        id: 13,
        method: 'tools/list',
        params: { _meta: modernMeta({ 'io.modelcontextprotocol/protocolVersion': '2099-01-01' }) },
      },
      { headers: { ...modernHeaders('tools/list'), 'MCP-Protocol-Version': '2099-01-01' } },
    );
    assert.equal(res.status, 400);
    const error = (res.json as Json).error;
    assert.equal(error.code, -32022);
    assert.deepEqual(error.data, { supported: ['2026-07-28'], requested: '2099-01-01' });
    assert.equal((res.json as Json).id, 13);
  });

  it('rejects header/body disagreements with -32020', async () => {
    const cases: Array<[string, Record<string, string | undefined>, Json]> = [
      ['missing version header', { 'MCP-Protocol-Version': undefined }, body(21, 'tools/list')],
      ['version mismatch', { 'MCP-Protocol-Version': '2025-11-25' }, body(22, 'tools/list')],
      ['missing Mcp-Method', { 'Mcp-Method': undefined }, body(23, 'tools/list')],
      ['wrong Mcp-Method', { 'Mcp-Method': 'tools/call' }, body(24, 'tools/list')],
      ['method case differs', { 'Mcp-Method': 'Tools/List' }, body(25, 'tools/list')],
      [
        'missing Mcp-Name',
        { 'Mcp-Method': 'tools/call' },
        body(26, 'tools/call', { name: 'echo', arguments: { text: 'a' } }),
      ],
      [
        'wrong Mcp-Name',
        { 'Mcp-Method': 'tools/call', 'Mcp-Name': 'no_args' },
        body(27, 'tools/call', { name: 'echo', arguments: { text: 'a' } }),
      ],
      [
        'bad base64 Mcp-Name',
        { 'Mcp-Method': 'tools/call', 'Mcp-Name': '=?base64?ZW*obw?=' },
        body(28, 'tools/call', { name: 'echo', arguments: { text: 'a' } }),
      ],
    ];
    for (const [label, headers, payload] of cases) {
      const res = await rpc(server.url, payload, { headers: { ...modernHeaders('tools/list'), ...headers } });
      assert.equal(res.status, 400, label);
      assert.equal((res.json as Json).error.code, -32020, label);
      assert.equal((res.json as Json).id, payload.id, label);
    }
  });

  it('accepts a base64-encoded or padded Mcp-Name', async () => {
    for (const name of ['=?base64?ZWNobw==?=', '  echo  ']) {
      const res = await rpc(server.url, body(31, 'tools/call', { name: 'echo', arguments: { text: 'ok' } }), {
        headers: { ...modernHeaders('tools/call'), 'Mcp-Name': name },
      });
      assert.equal(res.status, 200, name);
      assert.equal((res.json as Json).result.content[0].text, 'ok');
    }
  });

  it('answers legacy-only and unknown methods with 404 / -32601', async () => {
    for (const method of ['initialize', 'ping', 'logging/setLevel', 'resources/subscribe', 'no/such/method']) {
      const res = await modernRpc(server.url, method, {}, { id: method });
      assert.equal(res.status, 404, method);
      assert.equal((res.json as Json).error.code, -32601, method);
      assert.equal((res.json as Json).id, method);
    }
  });

  it('ignores Mcp-Session-Id and never mints one', async () => {
    const res = await modernRpc(server.url, 'tools/list', {}, { sessionId: 'whatever' });
    assert.equal(res.status, 200);
    assert.equal(res.headers.get('mcp-session-id'), null);
  });

  it('routes a header version >= 2026-07-28 to the modern era even without _meta', async () => {
    const res = await rpc(
      server.url,
      { jsonrpc: '2.0', id: 41, method: 'tools/list' },
      { headers: modernHeaders('tools/list') },
    );
    assert.equal(res.status, 400);
    assert.equal((res.json as Json).error.code, -32602);
  });

  it('streams progress as SSE only when the request has a progressToken, and logs only with a logLevel', async () => {
    const plain = await modernRpc(server.url, 'tools/call', { name: 'with_progress', arguments: {} });
    assert.match(plain.headers.get('content-type') ?? '', /application\/json/);
    assert.equal((plain.json as Json).result.content[0].text, 'progressed');
    const streamed = await modernRpc(server.url, 'tools/call', {
      name: 'with_progress',
      arguments: {},
      _meta: { progressToken: 'p1', 'io.modelcontextprotocol/logLevel': 'info' },
    });
    assert.match(streamed.headers.get('content-type') ?? '', /text\/event-stream/);
    assert.equal(streamed.headers.get('x-accel-buffering'), 'no');
    const messages = streamed.events!.map((e) => e.data as Json);
    const progress = messages.filter((m) => m.method === 'notifications/progress').map((m) => m.params.progress);
    assert.deepEqual(progress, [0, 50, 100]);
    assert.equal(messages.filter((m) => m.method === 'notifications/message').length, 1);
    assert.equal(messages.at(-1)!.result.content[0].text, 'progressed');
  });
});
