import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { WireModule } from '../fixtures/wire.module.js';
import { startApp, type RunningApp } from '../utils/app.js';
import { modernHeaders, modernMeta, modernRpc, rpc } from '../utils/clients.js';

type Json = Record<string, any>;

/** A small deterministic generator, so a failing case can be replayed. */
function* garbage(seed: number): Generator<unknown> {
  let state = seed;
  const next = () => (state = (state * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
  const values: unknown[] = [
    null,
    true,
    0,
    -1,
    1.5,
    2 ** 60,
    '',
    'x'.repeat(300),
    [],
    {},
    [1, { a: 1 }],
    { __proto__: { polluted: 1 } },
  ];
  const pick = () => values[Math.floor(next() * values.length)];
  for (let i = 0; i < 300; i++) {
    const message: Json = { jsonrpc: next() < 0.9 ? '2.0' : pick() };
    if (next() < 0.9) message.id = next() < 0.7 ? i : pick();
    if (next() < 0.95)
      message.method =
        next() < 0.7
          ? [
              'tools/call',
              'tools/list',
              'initialize',
              'server/discover',
              'ping',
              'resources/read',
              'prompts/get',
              'logging/setLevel',
              'subscriptions/listen',
            ][i % 9]
          : pick();
    if (next() < 0.8) {
      const params: Json = {};
      if (next() < 0.6) params.name = next() < 0.5 ? 'echo' : pick();
      if (next() < 0.6) params.arguments = next() < 0.5 ? { text: pick() } : pick();
      if (next() < 0.6)
        params._meta =
          next() < 0.5 ? modernMeta({ progressToken: pick(), 'io.modelcontextprotocol/logLevel': pick() }) : pick();
      if (next() < 0.2) params.cursor = pick();
      if (next() < 0.2) params.requestState = pick();
      if (next() < 0.2) params.inputResponses = pick();
      if (next() < 0.2) params.uri = pick();
      message.params = next() < 0.9 ? params : pick();
    }
    yield message;
  }
}

for (const platform of ['express', 'fastify'] as const)
  describe(`bad input never gets a 500, a crash or a hung response (${platform})`, () => {
    let server: RunningApp;
    before(async () => {
      server = await startApp(WireModule.register(), { platform });
    });
    after(() => server.close());

    it('answers 300 generated malformed messages on both eras with 2xx/4xx and JSON-RPC bodies', async () => {
      let i = 0;
      for (const message of garbage(42)) {
        const modern = i++ % 2 === 0;
        const method = typeof (message as Json).method === 'string' ? (message as Json).method : 'x';
        const res = await rpc(server.url, message, {
          headers: modern
            ? modernHeaders(
                method,
                typeof (message as Json).params?.name === 'string' ? (message as Json).params.name : undefined,
              )
            : {},
          timeoutMs: 5000,
          stopAtResponse: true,
        });
        assert.ok(res.status < 500, `status ${res.status} for ${JSON.stringify(message)}`);
        assert.ok(!res.timedOut, `hung on ${JSON.stringify(message)}`);
        if (res.status >= 400)
          assert.equal(
            (res.json as Json)?.jsonrpc,
            '2.0',
            `no JSON-RPC body for ${JSON.stringify(message)}: ${res.text}`,
          );
      }
      const alive = await modernRpc(server.url, 'tools/list');
      assert.equal(alive.status, 200);
    });

    it('refuses odd HTTP shapes cleanly', async () => {
      const cases: Array<[string, RequestInit]> = [
        ['empty body', { method: 'POST', body: '' }],
        ['not JSON', { method: 'POST', body: 'hello' }],
        [
          'form body',
          { method: 'POST', body: 'a=1', headers: { 'Content-Type': 'application/x-www-form-urlencoded' } },
        ],
        [
          'text body',
          {
            method: 'POST',
            body: '{"jsonrpc":"2.0","id":1,"method":"ping"}',
            headers: { 'Content-Type': 'text/plain' },
          },
        ],
        ['empty batch', { method: 'POST', body: '[]' }],
        ['deep nesting', { method: 'POST', body: `${'['.repeat(5000)}${']'.repeat(5000)}` }],
        ['PUT', { method: 'PUT', body: '{}' }],
      ];
      for (const [label, init] of cases) {
        const res = await fetch(server.url, {
          ...init,
          headers: {
            'Content-Type': 'application/json',
            Accept: 'application/json, text/event-stream',
            ...(init.headers as Record<string, string>),
          },
        });
        assert.ok(res.status < 500, `${label}: ${res.status}`);
        await res.text();
      }
    });

    it('keeps serving after a burst of unknown cancels and reconnects', async () => {
      const init = await rpc(server.url, {
        jsonrpc: '2.0',
        id: 1,
        method: 'initialize',
        params: { protocolVersion: '2025-11-25', capabilities: {} },
      });
      const sessionId = init.headers.get('mcp-session-id')!;
      await Promise.all(
        Array.from({ length: 100 }, (_, i) =>
          rpc(
            server.url,
            { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: `nope-${i}` } },
            { sessionId },
          ),
        ),
      );
      // Each GET stream stays open: read its head, then hang up (no fixed read window).
      const resumes = await Promise.all(
        Array.from({ length: 20 }, async (_, i) => {
          const res = await fetch(server.url, {
            headers: {
              Accept: 'text/event-stream',
              'Mcp-Session-Id': sessionId,
              'Last-Event-ID': `unknown.${i}`,
              'MCP-Protocol-Version': '2025-11-25',
            },
          });
          await res.body?.cancel();
          return res;
        }),
      );
      assert.deepEqual(
        resumes.map((r) => r.status),
        Array(20).fill(200),
      );
      const ping = await rpc(server.url, { jsonrpc: '2.0', id: 2, method: 'ping' }, { sessionId });
      assert.deepEqual((ping.json as Json).result, {});
    });
  });
