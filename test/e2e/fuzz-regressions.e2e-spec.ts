/**
 * Bugs the fuzz spec (fuzz.e2e-spec.ts) found, each pinned by the smallest input that showed it,
 * on both HTTP platforms.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { FuzzModule } from '../fixtures/fuzz.module.js';
import { startApp, type RunningApp, type TestPlatform } from '../utils/app.js';

type Json = Record<string, any>;

for (const platform of ['express', 'fastify'] as TestPlatform[]) {
  describe(`fuzz regressions on ${platform}`, () => {
    let stateful: RunningApp;
    let stateless: RunningApp;
    before(async () => {
      stateful = await startApp(FuzzModule.register({ sessions: { mode: 'stateful' } }), { platform });
      stateless = await startApp(FuzzModule.register({ sessions: { mode: 'stateless' } }), { platform });
    });
    after(async () => {
      await stateful?.close();
      await stateless?.close();
    });

    // Found as `PATCH /mcp` answered by the framework's 404 "Cannot PATCH /mcp": the endpoint
    // exists, so the method is what is wrong (405 + Allow), said in JSON-RPC like every refusal.
    it('answers an HTTP method the endpoint does not serve with 405, Allow and a JSON-RPC error', async () => {
      for (const [server, allow] of [
        [stateful, 'GET, POST, DELETE'],
        [stateless, 'POST'],
      ] as const) {
        for (const method of ['PUT', 'PATCH']) {
          const res = await fetch(server.url, { method, headers: { 'Content-Type': 'application/json' }, body: '{"jsonrpc":"2.0","id":1,"method":"ping"}' });
          const text = await res.text();
          assert.equal(res.status, 405, `${method}: ${text}`);
          assert.equal(res.headers.get('allow'), allow, method);
          const body = JSON.parse(text) as Json;
          assert.equal(body.jsonrpc, '2.0', text);
          assert.equal(body.error.code, -32600, text);
          assert.match(body.error.message, new RegExp(`Method ${method} is not allowed`));
        }
      }
    });
  });
}
