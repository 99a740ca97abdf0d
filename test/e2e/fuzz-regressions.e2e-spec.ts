/**
 * Bugs the fuzz spec (fuzz.e2e-spec.ts) found, each pinned by the smallest input that showed it,
 * on both HTTP platforms.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { FuzzModule } from '../fixtures/fuzz.module.js';
import { startApp, type RunningApp, type TestPlatform } from '../utils/app.js';

type Json = Record<string, any>;

const META = {
  'io.modelcontextprotocol/protocolVersion': '2026-07-28',
  'io.modelcontextprotocol/clientCapabilities': {},
};
/** A value whose `toString` is not a function: `String(value)` and template literals throw on it. */
const UNPRINTABLE = { toString: [] };

async function post(
  url: string,
  body: Json,
  headers: Record<string, string> = {},
): Promise<{ status: number; body: Json }> {
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream', ...headers },
    body: JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, body: JSON.parse(text) as Json };
}

function modernHeaders(method: string, name?: string): Record<string, string> {
  return {
    'MCP-Protocol-Version': '2026-07-28',
    'Mcp-Method': method,
    ...(name === undefined ? {} : { 'Mcp-Name': name }),
  };
}

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
          const res = await fetch(server.url, {
            method,
            headers: { 'Content-Type': 'application/json' },
            body: '{"jsonrpc":"2.0","id":1,"method":"ping"}',
          });
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

    // Found as a -32603 "Internal error" for completion/complete with ref.type { toString: [] }:
    // the refusal printed the unknown type with String(), which throws on such a value.
    it('refuses a completion ref whose type is not a string with -32602, not an internal error', async () => {
      const res = await post(
        stateless.url,
        {
          jsonrpc: '2.0',
          id: 7,
          method: 'completion/complete',
          params: { ref: { type: UNPRINTABLE, name: 'greet' }, argument: { name: 'name', value: 'p' }, _meta: META },
        },
        modernHeaders('completion/complete'),
      );
      assert.equal(res.status, 200, JSON.stringify(res.body));
      assert.equal(res.body.id, 7);
      assert.equal(res.body.error?.code, -32602, JSON.stringify(res.body));
      assert.match(res.body.error.message, /Unknown completion ref type/);
    });

    // The same String() on a client value, in the Mcp-Param-* check of a boolean argument: it ran
    // before any handler, so it was a 500 on HTTP.
    it('compares a boolean Mcp-Param header with a non-boolean argument as a mismatch (-32020), not a 500', async () => {
      const res = await post(
        stateless.url,
        {
          jsonrpc: '2.0',
          id: 8,
          method: 'tools/call',
          params: { name: 'flag', arguments: { dryRun: UNPRINTABLE }, _meta: META },
        },
        { ...modernHeaders('tools/call', 'flag'), 'Mcp-Param-Dry-Run': 'true' },
      );
      assert.equal(res.status, 400, JSON.stringify(res.body));
      assert.equal(res.body.id, 8);
      assert.equal(res.body.error?.code, -32020, JSON.stringify(res.body));
      assert.match(res.body.error.message, /Mcp-Param-Dry-Run/);
    });
  });
}
