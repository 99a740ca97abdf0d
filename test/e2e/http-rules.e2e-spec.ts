import assert from 'node:assert/strict';
import { request } from 'node:http';
import { after, before, describe, it } from 'node:test';
import { WireModule, foreverEvents, teardowns } from '../fixtures/wire.module.js';
import { startApp, type RunningApp } from '../utils/app.js';
import { modernHeaders, modernMeta, modernRpc, rpc } from '../utils/clients.js';
import { nextEvent } from '../utils/wait.js';

type Json = Record<string, any>;

/** fetch() cannot forge a Host header, so DNS-rebinding checks use node:http directly. */
function rawPost(
  url: string,
  body: unknown,
  headers: Record<string, string>,
): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const payload = JSON.stringify(body);
    const req = request(
      url,
      {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream', ...headers },
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (text += chunk));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text }));
      },
    );
    req.on('error', reject);
    req.end(payload);
  });
}

for (const platform of ['express', 'fastify'] as const)
  describe(`HTTP rules shared by both eras (${platform})`, () => {
    let server: RunningApp;
    before(async () => {
      server = await startApp(WireModule.register({ maxBodyBytes: 2048 }), { platform });
    });
    after(() => server.close());

    it('answers malformed JSON with 400 / -32700', async () => {
      const res = await rpc(server.url, '{"jsonrpc": "2.0", "id": 1, "method": ');
      assert.equal(res.status, 400);
      assert.equal((res.json as Json).error.code, -32700);
      assert.equal((res.json as Json).id, null);
    });

    it('answers a non-JSON-RPC body with 400 / -32600, echoing a readable id', async () => {
      for (const [payload, id] of [
        [{ hello: 'world' }, null],
        [{ jsonrpc: '1.0', id: 9, method: 'ping' }, 9],
        [{ jsonrpc: '2.0', id: null, method: 'ping' }, null],
        [{ jsonrpc: '2.0', id: 10, method: 'tools/list', params: [1, 2] }, 10],
        ['"just a string"', null],
      ] as const) {
        const res = await rpc(server.url, payload);
        assert.equal(res.status, 400, JSON.stringify(payload));
        assert.equal((res.json as Json).error.code, -32600);
        assert.equal((res.json as Json).id, id);
      }
    });

    it('answers a body over the limit with 413 and a JSON-RPC body', async () => {
      const res = await modernRpc(server.url, 'tools/call', { name: 'echo', arguments: { text: 'x'.repeat(5000) } });
      assert.equal(res.status, 413);
      assert.equal((res.json as Json).error.code, -32600);
      assert.match((res.json as Json).error.message, /maxBodyBytes/);
    });

    it('refuses foreign Origin and Host with 403, accepts loopback ones', async () => {
      const init = {
        jsonrpc: '2.0',
        id: 1,
        method: 'initialize',
        params: { protocolVersion: '2025-11-25', capabilities: {} },
      };
      const evilOrigin = await rpc(server.url, init, { headers: { Origin: 'http://evil.example.com' } });
      assert.equal(evilOrigin.status, 403);
      assert.equal((evilOrigin.json as Json).error.code, -32600);
      const evilHost = await rawPost(server.url, init, { Host: 'evil.example.com' });
      assert.equal(evilHost.status, 403);
      assert.equal((JSON.parse(evilHost.body) as Json).error.code, -32600);
      const local = await rpc(server.url, init, { headers: { Origin: 'http://localhost:5173' } });
      assert.equal(local.status, 200);
    });

    it('treats tool-level problems per the spec: unknown tool and bad arguments are -32602', async () => {
      const unknown = await modernRpc(server.url, 'tools/call', { name: 'nope', arguments: {} }, { id: 'u' });
      assert.equal((unknown.json as Json).error.code, -32602);
      assert.equal((unknown.json as Json).id, 'u');
      const notObject = await modernRpc(server.url, 'tools/call', { name: 'echo', arguments: ['x'] }, { id: 'n' });
      assert.equal((notObject.json as Json).error.code, -32602);
      const noArgs = await modernRpc(server.url, 'tools/call', { name: 'no_args' });
      assert.equal((noArgs.json as Json).result.content[0].text, 'no args');
    });

    it('turns thrown errors into isError results, masking unexpected ones', async () => {
      const missing = (await modernRpc(server.url, 'tools/call', { name: 'missing', arguments: {} })).json as Json;
      assert.equal(missing.result.isError, true);
      assert.equal(missing.result.content[0].text, 'Widget 42 does not exist.');
      const toolError = (await modernRpc(server.url, 'tools/call', { name: 'tool_error', arguments: {} })).json as Json;
      assert.equal(toolError.result.content[0].text, 'Try a smaller number.');
      const crash = (await modernRpc(server.url, 'tools/call', { name: 'crash', arguments: {} })).json as Json;
      assert.equal(crash.result.isError, true);
      assert.doesNotMatch(crash.result.content[0].text, /password/);
      assert.match(crash.result.content[0].text, /reference [0-9a-f-]{36}/);
    });

    it('reports validation failures as isError naming the field, without echoing the value', async () => {
      const res = (await modernRpc(server.url, 'tools/call', { name: 'echo', arguments: { text: 42, times: 99 } }))
        .json as Json;
      assert.equal(res.result.isError, true);
      const text: string = res.result.content[0].text;
      assert.match(text, /text/);
      assert.match(text, /times/);
      assert.doesNotMatch(text, /99/);
    });

    it('cancels a running call when the client disconnects', async () => {
      const before = teardowns.length;
      const started = nextEvent(foreverEvents, 'started', 'the forever tool never started');
      const controller = new AbortController();
      const pending = fetch(server.url, {
        method: 'POST',
        headers: {
          'Content-Type': 'application/json',
          Accept: 'application/json, text/event-stream',
          ...modernHeaders('tools/call', 'forever'),
        },
        body: JSON.stringify({
          jsonrpc: '2.0',
          id: 1,
          method: 'tools/call',
          params: { name: 'forever', arguments: {}, _meta: modernMeta() },
        }),
        signal: controller.signal,
      }).catch(() => undefined);
      await started;
      const tornDown = nextEvent(foreverEvents, 'teardown', 'the call was not torn down after the client disconnected');
      controller.abort();
      await pending;
      await tornDown;
      assert.equal(teardowns.length, before + 1);
    });
  });
