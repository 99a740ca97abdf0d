import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { WireModule } from '../fixtures/wire.module.js';
import { startApp, type RunningApp } from '../utils/app.js';
import { rpc } from '../utils/clients.js';

type Json = Record<string, any>;

async function initialize(
  url: string,
  protocolVersion = '2025-11-25',
): Promise<{ sessionId: string; result: Json; status: number }> {
  const res = await rpc(url, {
    jsonrpc: '2.0',
    id: 'init',
    method: 'initialize',
    params: { protocolVersion, capabilities: {}, clientInfo: { name: 'wire-test', version: '0.0.1' } },
  });
  const sessionId = res.headers.get('mcp-session-id') ?? '';
  return { sessionId, result: (res.json as Json).result, status: res.status };
}

describe('legacy era (2025-03-26 … 2025-11-25), stateful sessions', () => {
  let server: RunningApp;
  before(async () => {
    server = await startApp(WireModule.register());
  });
  after(() => server.close());

  it('negotiates versions: echoes a supported one, offers 2025-11-25 otherwise', async () => {
    for (const [requested, expected] of [
      ['2025-11-25', '2025-11-25'],
      ['2025-06-18', '2025-06-18'],
      ['2025-03-26', '2025-03-26'],
      ['2024-11-05', '2024-11-05'],
      ['2024-10-07', '2025-11-25'],
      ['2026-07-28', '2025-11-25'],
      ['nonsense', '2025-11-25'],
    ]) {
      const { result, status } = await initialize(server.url, requested);
      assert.equal(status, 200);
      assert.equal(result.protocolVersion, expected, `requested ${requested}`);
      assert.deepEqual(result.serverInfo, { name: 'wire', version: '1.2.3' });
      assert.equal(result.instructions, 'Wire tests.');
      assert.ok(result.capabilities.tools);
    }
  });

  it('mints a visible-ASCII session id and serves the session', async () => {
    const { sessionId } = await initialize(server.url);
    assert.match(sessionId, /^[\x21-\x7e]{16,}$/);
    const initialized = await rpc(server.url, { jsonrpc: '2.0', method: 'notifications/initialized' }, { sessionId });
    assert.equal(initialized.status, 202);
    assert.equal(initialized.text, '');
    const ping = await rpc(server.url, { jsonrpc: '2.0', id: 7, method: 'ping' }, { sessionId });
    assert.equal(ping.status, 200);
    assert.deepEqual(ping.json, { jsonrpc: '2.0', id: 7, result: {} });
  });

  it('answers 400 without a session id and 404 for an unknown one, echoing the id', async () => {
    const missing = await rpc(server.url, { jsonrpc: '2.0', id: 'a1', method: 'tools/list' });
    assert.equal(missing.status, 400);
    assert.equal((missing.json as Json).id, 'a1');
    assert.equal((missing.json as Json).error.code, -32600);
    const unknown = await rpc(
      server.url,
      { jsonrpc: '2.0', id: 'a2', method: 'tools/list' },
      { sessionId: 'no-such-session' },
    );
    assert.equal(unknown.status, 404);
    assert.equal((unknown.json as Json).id, 'a2');
    assert.match((unknown.json as Json).error.message, /initialize/);
  });

  it('ends a session on DELETE; later requests get 404', async () => {
    const { sessionId } = await initialize(server.url);
    const del = await rpc(server.url, undefined, { sessionId, httpMethod: 'DELETE' });
    assert.equal(del.status, 200);
    const after = await rpc(server.url, { jsonrpc: '2.0', id: 3, method: 'ping' }, { sessionId });
    assert.equal(after.status, 404);
    assert.equal((after.json as Json).id, 3);
    const again = await rpc(server.url, undefined, { sessionId, httpMethod: 'DELETE' });
    assert.equal(again.status, 404);
    const noHeader = await rpc(server.url, undefined, { httpMethod: 'DELETE' });
    assert.equal(noHeader.status, 400);
  });

  it('applies MCP-Protocol-Version rules', async () => {
    const { sessionId } = await initialize(server.url, '2025-06-18');
    const bad = await rpc(
      server.url,
      { jsonrpc: '2.0', id: 4, method: 'ping' },
      { sessionId, headers: { 'MCP-Protocol-Version': 'garbage' } },
    );
    assert.equal(bad.status, 400);
    assert.equal((bad.json as Json).id, 4);
    const old = await rpc(
      server.url,
      { jsonrpc: '2.0', id: 5, method: 'ping' },
      { sessionId, headers: { 'MCP-Protocol-Version': '2024-10-07' } },
    );
    assert.equal(old.status, 400);
    assert.match((old.json as Json).error.message, /2024-10-07/);
    const good = await rpc(
      server.url,
      { jsonrpc: '2.0', id: 6, method: 'ping' },
      { sessionId, headers: { 'MCP-Protocol-Version': '2025-06-18' } },
    );
    assert.equal(good.status, 200);
  });

  it('accepts batches from 2025-03-26 sessions only', async () => {
    const old = await initialize(server.url, '2025-03-26');
    const batch = [
      { jsonrpc: '2.0', id: 1, method: 'ping' },
      { jsonrpc: '2.0', method: 'notifications/initialized' },
      { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'echo', arguments: { text: 'hi' } } },
    ];
    const ok = await rpc(server.url, batch, { sessionId: old.sessionId });
    assert.equal(ok.status, 200);
    const responses = ok.json as Json[];
    assert.equal(responses.length, 2);
    assert.deepEqual(responses.find((r) => r.id === 1)?.result, {});
    assert.equal(responses.find((r) => r.id === 2)?.result.content[0].text, 'hi');
    const modern = await initialize(server.url, '2025-11-25');
    const refused = await rpc(server.url, batch, { sessionId: modern.sessionId });
    assert.equal(refused.status, 400);
    assert.equal((refused.json as Json).error.code, -32600);
  });

  it('validates logging/setLevel', async () => {
    const { sessionId } = await initialize(server.url);
    const ok = await rpc(
      server.url,
      { jsonrpc: '2.0', id: 1, method: 'logging/setLevel', params: { level: 'debug' } },
      { sessionId },
    );
    assert.deepEqual((ok.json as Json).result, {});
    const bad = await rpc(
      server.url,
      { jsonrpc: '2.0', id: 2, method: 'logging/setLevel', params: { level: 'loud' } },
      { sessionId },
    );
    assert.equal((bad.json as Json).error.code, -32602);
    assert.equal((bad.json as Json).id, 2);
  });

  it('reports unknown methods with -32601 and the id', async () => {
    const { sessionId } = await initialize(server.url);
    const res = await rpc(server.url, { jsonrpc: '2.0', id: 'm', method: 'server/discover' }, { sessionId });
    assert.equal((res.json as Json).error.code, -32601);
    assert.equal((res.json as Json).id, 'm');
  });
});

describe('legacy era, stateless mode', () => {
  let server: RunningApp;
  before(async () => {
    server = await startApp(WireModule.register({ sessions: { mode: 'stateless' } }));
  });
  after(() => server.close());

  it('mints no session id and serves requests without one', async () => {
    const { sessionId, status } = await initialize(server.url);
    assert.equal(status, 200);
    assert.equal(sessionId, '');
    const call = await rpc(server.url, {
      jsonrpc: '2.0',
      id: 1,
      method: 'tools/call',
      params: { name: 'echo', arguments: { text: 'x' } },
    });
    assert.equal((call.json as Json).result.content[0].text, 'x');
  });

  it('answers GET and DELETE with 405 and a JSON-RPC body', async () => {
    for (const httpMethod of ['GET', 'DELETE'] as const) {
      const res = await rpc(server.url, undefined, { httpMethod });
      assert.equal(res.status, 405);
      assert.equal((res.json as Json).error.code, -32600);
    }
  });
});
