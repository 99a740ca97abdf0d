import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { brotliCompressSync, deflateSync, gzipSync } from 'node:zlib';
import { SecurityWireModule, noteWrites } from '../fixtures/security-wire.module.js';
import { startApp, type RunningApp } from '../utils/app.js';
import { modernRpc, rpc } from '../utils/clients.js';

type Json = Record<string, any>;

const bearer = (token: string) => ({ Authorization: `Bearer ${token}` });

/** Opens a legacy session with raw HTTP, as an attacker's client would. */
async function openSession(
  url: string,
  headers: Record<string, string>,
  protocolVersion: string,
  capabilities: Json = {},
): Promise<string> {
  const init = await rpc(
    url,
    {
      jsonrpc: '2.0',
      id: 'init',
      method: 'initialize',
      params: { protocolVersion, capabilities, clientInfo: { name: 'probe', version: '1' } },
    },
    { headers },
  );
  assert.equal(init.status, 200, init.text);
  assert.equal((init.json as Json).result.protocolVersion, protocolVersion);
  const sessionId = init.headers.get('mcp-session-id')!;
  const initialized = await rpc(url, { jsonrpc: '2.0', method: 'notifications/initialized' }, { sessionId, headers });
  assert.equal(initialized.status, 202);
  return sessionId;
}

const call = (id: number | string, name: string, args: Json = {}) => ({
  jsonrpc: '2.0',
  id,
  method: 'tools/call',
  params: { name, arguments: args },
});

describe('security on the wire: sample 05 (passport-jwt)', () => {
  let server: RunningApp;
  let mintToken: (sub: string, roles: string[], scopes: string[]) => string;
  let admin: Record<string, string>;

  /** The invoice count, read by a principal that holds every scope. */
  async function invoiceCount(): Promise<string> {
    const res = await modernRpc(server.url, 'tools/call', { name: 'list_invoices', arguments: {} }, { headers: admin });
    return ((res.json as Json).result.content[0].text as string).split(';')[0];
  }

  before(async () => {
    // The sample's audience is its own URL; fix the port before its modules load.
    const port = await import('node:net').then(
      ({ createServer }) =>
        new Promise<number>((resolve) => {
          const s = createServer().listen(0, '127.0.0.1', () => {
            const { port: free } = s.address() as AddressInfo;
            s.close(() => resolve(free));
          });
        }),
    );
    process.env.MCP_RESOURCE = `http://127.0.0.1:${port}/mcp`;
    ({ mintToken } = await import('../../sample/05-auth-guards/mint-token.js'));
    const { AppModule } = await import('../../sample/05-auth-guards/app.module.js');
    server = await startApp(AppModule, { port });
    admin = bearer(mintToken('root', ['admin'], ['invoices:read', 'invoices:write']));
  });
  after(async () => {
    await server.close();
    delete process.env.MCP_RESOURCE;
  });

  it('item 1: refuses a batch whose item lacks a scope with 403 insufficient_scope, running no item of it', async () => {
    const before = await invoiceCount();
    for (const scopes of [[], ['invoices:read']]) {
      const headers = bearer(mintToken('mallory', ['user'], scopes));
      const sessionId = await openSession(server.url, headers, '2025-03-26');
      const alone = await rpc(server.url, call(1, 'create_invoice', { customer: 'X', amount: 1 }), {
        sessionId,
        headers,
      });
      assert.equal(alone.status, 403);
      for (const batch of [
        [call(2, 'create_invoice', { customer: 'X', amount: 1 })],
        [call(3, 'list_invoices'), call(4, 'create_invoice', { customer: 'X', amount: 1 })],
      ]) {
        const res = await rpc(server.url, batch, { sessionId, headers });
        assert.equal(res.status, 403, `${JSON.stringify(scopes)}: ${res.text}`);
        // The first item that lacks a scope is the one named: list_invoices when the token has none.
        const [refusedId, scope] =
          scopes.length === 0 && batch.length === 2 ? [3, 'invoices:read'] : [batch.at(-1)!.id, 'invoices:write'];
        assert.match(
          res.headers.get('www-authenticate')!,
          new RegExp(`^Bearer error="insufficient_scope", scope="${scope}", resource_metadata="`),
        );
        const body = res.json as Json;
        assert.equal(body.id, refusedId);
        assert.equal(body.error.code, -32600);
        assert.match(body.error.message, new RegExp(scope));
      }
    }
    assert.equal(await invoiceCount(), before, 'no create_invoice of a refused batch ran');
    // The same batch with the scope still runs.
    const writer = await openSession(server.url, admin, '2025-03-26');
    const ok = await rpc(server.url, [call(5, 'create_invoice', { customer: 'Y', amount: 2 })], {
      sessionId: writer,
      headers: admin,
    });
    assert.equal(ok.status, 200);
    assert.equal((ok.json as Json[])[0].result.content[0].text, 'root: created invoice for Y (2)');
  });

  it('item 2: a downgraded MCP-Protocol-Version does not re-enable batches on a 2025-11-25 session', async () => {
    const before = await invoiceCount();
    const reader = bearer(mintToken('dave', ['user'], ['invoices:read']));
    for (const headers of [reader, admin]) {
      const sessionId = await openSession(server.url, headers, '2025-11-25');
      const downgraded = await rpc(server.url, [call(1, 'create_invoice', { customer: 'X', amount: 1 })], {
        sessionId,
        headers: { ...headers, 'MCP-Protocol-Version': '2025-03-26' },
      });
      assert.equal(downgraded.status, 400, downgraded.text);
      assert.equal((downgraded.json as Json).error.code, -32600);
      assert.match(
        (downgraded.json as Json).error.message,
        /MCP-Protocol-Version header "2025-03-26" does not match the version this session negotiated \("2025-11-25"\)/,
      );
      const noHeader = await rpc(server.url, [{ jsonrpc: '2.0', id: 3, method: 'ping' }], { sessionId, headers });
      assert.equal(noHeader.status, 400, 'batches follow the negotiated version');
      const unsupported = await rpc(
        server.url,
        { jsonrpc: '2.0', id: 4, method: 'ping' },
        { sessionId, headers: { ...headers, 'MCP-Protocol-Version': '2024-10-07' } },
      );
      assert.equal(unsupported.status, 400);
    }
    assert.equal(await invoiceCount(), before, 'no create_invoice of a downgraded batch ran');
  });

  it('item 5: challenges a request without credentials with no error code, a bad token with invalid_token', async () => {
    const missing = await modernRpc(server.url, 'tools/list');
    assert.equal(missing.status, 401);
    const challenge = missing.headers.get('www-authenticate')!;
    assert.match(challenge, /^Bearer /);
    assert.doesNotMatch(challenge, /error=/);
    assert.match(challenge, /scope="invoices:read invoices:write"/);
    assert.match(
      challenge,
      /resource_metadata="http:\/\/127\.0\.0\.1:\d+\/\.well-known\/oauth-protected-resource\/mcp"/,
    );
    assert.equal((missing.json as Json).error.code, -32600);
    // Another scheme is no bearer credential either (RFC 6750 §3.1: an unsupported method).
    const basic = await modernRpc(
      server.url,
      'tools/list',
      {},
      { headers: { Authorization: 'Basic YWxpY2U6c2VjcmV0' } },
    );
    assert.equal(basic.status, 401);
    assert.doesNotMatch(basic.headers.get('www-authenticate')!, /error=/);
    const bad = await modernRpc(server.url, 'tools/list', {}, { headers: bearer('not-a-jwt') });
    assert.equal(bad.status, 401);
    assert.match(
      bad.headers.get('www-authenticate')!,
      /^Bearer error="invalid_token", scope="invoices:read invoices:write", resource_metadata="/,
    );
  });
});

for (const platform of ['express', 'fastify'] as const)
  describe(`security on the wire: bearer app (verifyToken) on ${platform}`, () => {
    let server: RunningApp;
    const alice = bearer('alice-token');

    before(async () => {
      server = await startApp(SecurityWireModule.register(), { platform });
    });
    after(() => server.close());

    it('item 1: checks every batch item against its scopes before any item runs', async () => {
      const before = noteWrites.count;
      const headers = bearer('reader-token');
      const sessionId = await openSession(server.url, headers, '2025-03-26');
      const res = await rpc(
        server.url,
        [call(1, 'read_notes'), call(2, 'write_note'), { jsonrpc: '2.0', id: 3, method: 'ping' }],
        { sessionId, headers },
      );
      assert.equal(res.status, 403);
      assert.match(res.headers.get('www-authenticate')!, /error="insufficient_scope", scope="notes:write"/);
      assert.equal((res.json as Json).id, 2, 'the answer names the refused item');
      assert.equal(noteWrites.count, before);
    });

    it('item 2: a request on a 2025-11-25 session whose header claims another version is refused (400) and runs nothing', async () => {
      const sessionId = await openSession(server.url, alice, '2025-11-25', { elicitation: {} });
      const writes = noteWrites.count;
      const same = await rpc(server.url, call('c0', 'read_notes'), {
        sessionId,
        headers: { ...alice, 'MCP-Protocol-Version': '2025-11-25' },
      });
      assert.equal(same.status, 200, 'the negotiated version is accepted');
      for (const claimed of ['2025-03-26', '2025-06-18']) {
        const res = await rpc(server.url, call('w', 'write_note', { text: 'downgraded' }), {
          sessionId,
          headers: { ...alice, 'MCP-Protocol-Version': claimed },
        });
        assert.equal(res.status, 400, res.text);
        assert.equal((res.json as Json).error.code, -32600);
        assert.equal((res.json as Json).id, 'w');
        assert.match(
          (res.json as Json).error.message,
          new RegExp(`"${claimed}" does not match the version this session negotiated \\("2025-11-25"\\)`),
        );
      }
      assert.equal(noteWrites.count, writes, 'no refused write_note ran');
      // A stateless-era version on a session's GET says what to do, not that it is unsupported.
      const modern = await rpc(server.url, undefined, {
        httpMethod: 'GET',
        sessionId,
        headers: { ...alice, 'MCP-Protocol-Version': '2026-07-28' },
        timeoutMs: 5000,
      });
      assert.equal(modern.status, 400, modern.text);
      assert.match(
        (modern.json as Json).error.message,
        /"2026-07-28" is a stateless revision, which this session \(negotiated at 2025-11-25\) does not speak/,
      );
      // Without the header the negotiated version governs: a priming event opens the stream (2025-11-25 only).
      const res = await rpc(server.url, call('v', 'who_answers'), {
        sessionId,
        headers: alice,
        onEvent: async (event) => {
          const message = event.data as Json;
          if (message?.method !== 'elicitation/create') return;
          await rpc(
            server.url,
            { jsonrpc: '2.0', id: message.id, result: { action: 'accept', content: { who: 'alice' } } },
            { sessionId, headers: alice },
          );
        },
      });
      assert.equal(res.status, 200);
      assert.ok(res.events![0].id, 'the stream starts with a priming event');
      assert.equal(res.events![0].rawData, '');
    });

    it('item 5: no credentials -> no error code; a bad token -> invalid_token (verifyToken path)', async () => {
      const missing = await modernRpc(server.url, 'tools/list');
      assert.equal(missing.status, 401);
      assert.doesNotMatch(missing.headers.get('www-authenticate')!, /error=/);
      assert.match(
        missing.headers.get('www-authenticate')!,
        /^Bearer scope="notes:read notes:write", resource_metadata="http:\/\/127\.0\.0\.1\/\.well-known\/oauth-protected-resource\/mcp"$/,
      );
      const basic = await modernRpc(
        server.url,
        'tools/list',
        {},
        { headers: { Authorization: 'Basic YWxpY2U6c2VjcmV0' } },
      );
      assert.equal(basic.status, 401);
      assert.doesNotMatch(basic.headers.get('www-authenticate')!, /error=/);
      const bad = await modernRpc(server.url, 'tools/list', {}, { headers: bearer('nope') });
      assert.match(bad.headers.get('www-authenticate')!, /^Bearer error="invalid_token", /);
    });

    it('item 6: caps batch length at limits.maxBatchLength (default 50)', async () => {
      const sessionId = await openSession(server.url, alice, '2025-03-26');
      const list = (n: number) =>
        Array.from({ length: n }, (_, i) => ({ jsonrpc: '2.0', id: i, method: 'tools/list' }));
      const over = await rpc(server.url, list(2000), { sessionId, headers: alice });
      assert.equal(over.status, 400);
      assert.equal((over.json as Json).error.code, -32600);
      assert.match((over.json as Json).error.message, /2000 messages.*50.*limits\.maxBatchLength/);
      const justOver = await rpc(server.url, list(51), { sessionId, headers: alice });
      assert.equal(justOver.status, 400);
      const atLimit = await rpc(server.url, list(50), { sessionId, headers: alice });
      assert.equal(atLimit.status, 200);
      assert.equal((atLimit.json as Json[]).length, 50);
    });

    it('item 13: answers an empty POST body with -32700 Parse error', async () => {
      for (const headers of [alice, { ...alice, 'MCP-Protocol-Version': '2026-07-28' }]) {
        const res = await rpc(server.url, '', { headers });
        assert.equal(res.status, 400);
        assert.equal((res.json as Json).error.code, -32700);
        assert.match((res.json as Json).error.message, /empty/);
      }
    });

    it('item 14: answers a body that does not decode with its Content-Encoding with a JSON-RPC -32700', async () => {
      for (const encoding of ['gzip', 'deflate', 'br']) {
        const res = await rpc(server.url, 'this is not compressed', {
          headers: { ...alice, 'Content-Encoding': encoding },
        });
        assert.equal(res.status, 400, `${encoding}: ${res.text}`);
        const body = res.json as Json;
        assert.equal(body.jsonrpc, '2.0', res.text);
        assert.equal(body.error.code, -32700);
        assert.match(body.error.message, new RegExp(`Content-Encoding "${encoding}"`));
      }
      const init = JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'initialize',
        params: { protocolVersion: '2025-11-25', capabilities: {} },
      });
      const compress = { gzip: gzipSync, deflate: deflateSync, br: brotliCompressSync };
      for (const [encoding, fn] of Object.entries(compress)) {
        const res = await fetch(server.url, {
          method: 'POST',
          body: fn(Buffer.from(init)),
          headers: {
            ...alice,
            'Content-Type': 'application/json',
            Accept: 'application/json, text/event-stream',
            'Content-Encoding': encoding,
          },
        });
        assert.equal(res.status, 200, encoding);
        assert.equal(((await res.json()) as Json).result.protocolVersion, '2025-11-25');
      }
    });

    it('item 15: refuses form and text bodies with 415 and never executes them', async () => {
      const init = JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'initialize',
        params: { protocolVersion: '2025-11-25', capabilities: {} },
      });
      for (const type of [
        'application/x-www-form-urlencoded',
        'text/plain',
        'multipart/form-data; boundary=x',
        undefined,
      ]) {
        const res = await rpc(server.url, init, { headers: { ...alice, 'Content-Type': type } });
        assert.equal(res.status, 415, `${type}: ${res.text}`);
        assert.equal(res.headers.get('mcp-session-id'), null, 'no session was opened');
        assert.equal((res.json as Json).error.code, -32600);
        assert.match((res.json as Json).error.message, /Content-Type: application\/json/);
      }
      const withCharset = await rpc(server.url, init, {
        headers: { ...alice, 'Content-Type': 'Application/JSON; charset=utf-8' },
      });
      assert.equal(withCharset.status, 200);
    });

    it('item 16: a 413 names the limit that refused the body and how to raise it', async (t) => {
      // Express's JSON body parser refuses bodies over 100 KiB by default; Fastify's bodyLimit is set to the same.
      const small = await startApp(SecurityWireModule.register({ maxBodyBytes: 16_384 }), {
        platform,
        fastifyOptions: { bodyLimit: 102_400 },
      });
      t.after(() => small.close());
      const big = (bytes: number) =>
        JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping', params: { pad: 'x'.repeat(bytes) } });
      const parser = await rpc(small.url, big(150 * 1024), { headers: alice });
      assert.equal(parser.status, 413);
      assert.equal((parser.json as Json).error.code, -32600);
      if (platform === 'express') {
        assert.match((parser.json as Json).error.message, /JSON body-parser limit of 102400 bytes/);
        assert.match((parser.json as Json).error.message, /app\.useBodyParser\('json', \{ limit \}\)/);
      } else {
        assert.match((parser.json as Json).error.message, /Fastify's bodyLimit of 102400 bytes/);
        assert.match((parser.json as Json).error.message, /new FastifyAdapter\(\{ bodyLimit \}\)/);
      }
      const module = await rpc(small.url, big(20 * 1024), { headers: alice });
      assert.equal(module.status, 413);
      assert.equal((module.json as Json).error.code, -32600);
      assert.match((module.json as Json).error.message, /16384 bytes/);
      assert.match((module.json as Json).error.message, /maxBodyBytes/);
    });

    it("item 21: refuses another principal's answer to a server request on a session that is not theirs", async () => {
      const sessionId = await openSession(server.url, alice, '2025-11-25', { elicitation: {} });
      const bob = bearer('bob-token');
      const answers: Array<{ status: number; body?: Json }> = [];
      const res = await rpc(server.url, call('who', 'who_answers'), {
        sessionId,
        headers: alice,
        onEvent: async (event) => {
          const message = event.data as Json;
          if (message?.method !== 'elicitation/create') return;
          // Bob holds his own valid token and alice's session id, and answers first.
          const hijack = await rpc(
            server.url,
            { jsonrpc: '2.0', id: message.id, result: { action: 'accept', content: { who: 'bob' } } },
            { sessionId, headers: bob },
          );
          answers.push({ status: hijack.status, body: hijack.json as Json });
          const own = await rpc(
            server.url,
            { jsonrpc: '2.0', id: message.id, result: { action: 'accept', content: { who: 'alice' } } },
            { sessionId, headers: alice },
          );
          answers.push({ status: own.status });
        },
      });
      assert.deepEqual(
        answers.map((a) => a.status),
        [404, 202],
      );
      assert.equal(answers[0].body?.error.code, -32600);
      assert.match(answers[0].body?.error.message, /Session not found/);
      const result = res.events!.map((e) => e.data as Json).find((m) => m?.id === 'who');
      assert.equal(result?.result.content[0].text, 'alice got the answer of alice');
    });
  });

describe('security on the wire: a cancelled call is not an error to log', () => {
  const errors: string[] = [];
  const logger = {
    log: () => undefined,
    warn: () => undefined,
    debug: () => undefined,
    verbose: () => undefined,
    error: (message: unknown, ...rest: unknown[]) => void errors.push([message, ...rest].map(String).join(' ')),
  };
  let server: RunningApp;
  before(async () => {
    server = await startApp(SecurityWireModule.register(), { logger });
  });
  after(() => server.close());

  // Any caller can disconnect at will: a stack trace per disconnect would let it flood the log.
  it('logs nothing at error level when a client disconnects from a call waiting on an elicitation', async () => {
    const alice = { Authorization: 'Bearer alice-token' };
    const sessionId = await openSession(server.url, alice, '2025-11-25', { elicitation: {} });
    for (let round = 0; round < 3; round++) {
      const controller = new AbortController();
      const res = await fetch(server.url, {
        method: 'POST',
        headers: {
          ...alice,
          'Content-Type': 'application/json',
          Accept: 'application/json, text/event-stream',
          'Mcp-Session-Id': sessionId,
          'MCP-Protocol-Version': '2025-11-25',
        },
        body: JSON.stringify(call(`c${round}`, 'who_answers')),
        signal: controller.signal,
      });
      const reader = res.body!.getReader();
      let text = '';
      while (!text.includes('elicitation/create')) {
        const { value, done } = await reader.read();
        if (done) break;
        text += new TextDecoder().decode(value);
      }
      assert.match(text, /elicitation\/create/);
      controller.abort();
    }
    // A round trip on the same server after the disconnects: their cancellation ran before it.
    const ping = await rpc(server.url, { jsonrpc: '2.0', id: 'p', method: 'ping' }, { sessionId, headers: alice });
    assert.equal(ping.status, 200);
    assert.deepEqual(
      errors.filter((line) => /Cancelled|cancelled/.test(line)),
      [],
    );
  });
});
