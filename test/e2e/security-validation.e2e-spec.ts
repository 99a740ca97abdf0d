/**
 * ISSUE-15 items 17, 22 and 23: names checked against maps, arguments checked against the listed
 * input schema, and sampling/roots answers checked before a handler sees them. Each case sends
 * what an attacker (or a broken client) would send, over the real HTTP endpoint.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { AppModule as BasicApp } from '../../sample/01-basic/app.module.js';
import { AppModule as InteractiveApp } from '../../sample/03-interactive/app.module.js';
import { InteractiveModule } from '../fixtures/interactive.module.js';
import { WireModule } from '../fixtures/wire.module.js';
import { startApp, type RunningApp } from '../utils/app.js';
import { META_KEYS, connectSdkClient, modernRpc, rpc } from '../utils/clients.js';
import type { SseEvent } from '../utils/sse.js';

type Json = Record<string, any>;

const VALID_LEVELS = 'debug, info, notice, warning, error, critical, alert, emergency';
const PROTOTYPE_NAMES = ['hasOwnProperty', '__proto__', 'toString', 'constructor', 'valueOf'];

async function legacySession(url: string, capabilities: Json = {}): Promise<string> {
  const init = await rpc(url, {
    jsonrpc: '2.0',
    id: 0,
    method: 'initialize',
    params: { protocolVersion: '2025-11-25', capabilities, clientInfo: { name: 'raw', version: '1' } },
  });
  assert.equal(init.status, 200, init.text);
  const sessionId = init.headers.get('mcp-session-id')!;
  await rpc(url, { jsonrpc: '2.0', method: 'notifications/initialized' }, { sessionId });
  return sessionId;
}

/**
 * Calls a tool on a legacy session and answers every server-to-client request of `method` with
 * the next answer of `answers` (a plain POST of the JSON-RPC response, as a client would).
 * Returns the tool's response and how many requests the server sent.
 */
async function callAnswering(
  url: string,
  sessionId: string,
  call: Json,
  method: string,
  answers: unknown[],
): Promise<{ response: Json; asked: number }> {
  let asked = 0;
  const res = await rpc(url, { jsonrpc: '2.0', id: 'call', method: 'tools/call', params: call }, {
    sessionId,
    headers: { 'MCP-Protocol-Version': '2025-11-25' },
    onEvent: async (event: SseEvent) => {
      const data = event.data as Json;
      if (data?.method !== method) return;
      const result = answers[Math.min(asked, answers.length - 1)];
      asked += 1;
      const posted = await rpc(url, { jsonrpc: '2.0', id: data.id, result }, { sessionId, headers: { 'MCP-Protocol-Version': '2025-11-25' } });
      assert.equal(posted.status, 202, posted.text);
    },
  });
  const response = res.events?.map((e) => e.data as Json).find((d) => d?.id === 'call');
  assert.ok(response, `no response to the call: ${res.text}`);
  return { response, asked };
}

describe('security: log levels are the eight RFC 5424 names, nothing inherited (item 17)', () => {
  let server: RunningApp;
  before(async () => {
    server = await startApp(WireModule.register());
  });
  after(() => server.close());

  it('refuses logging/setLevel with a prototype name as -32602 naming the valid levels (legacy era)', async () => {
    const sessionId = await legacySession(server.url);
    for (const level of PROTOTYPE_NAMES) {
      const res = await rpc(server.url, { jsonrpc: '2.0', id: level, method: 'logging/setLevel', params: { level } }, { sessionId });
      const body = res.json as Json;
      assert.equal(body.error?.code, -32602, `${level}: ${res.text}`);
      assert.equal(body.id, level);
      assert.ok(body.error.message.includes(VALID_LEVELS), body.error.message);
    }
    const ok = await rpc(server.url, { jsonrpc: '2.0', id: 'ok', method: 'logging/setLevel', params: { level: 'warning' } }, { sessionId });
    assert.deepEqual((ok.json as Json).result, {});
  });

  it('refuses a 2026-era _meta log level that is a prototype name as -32602 naming the valid levels', async () => {
    for (const level of PROTOTYPE_NAMES) {
      const res = await modernRpc(server.url, 'tools/list', { _meta: { [META_KEYS.logLevel]: level } });
      const body = res.json as Json;
      assert.equal(res.status, 400, `${level}: ${res.text}`);
      assert.equal(body.error?.code, -32602, `${level}: ${res.text}`);
      assert.ok(body.error.message.includes(VALID_LEVELS), body.error.message);
    }
    const ok = await modernRpc(server.url, 'tools/list', { _meta: { [META_KEYS.logLevel]: 'debug' } });
    assert.equal(ok.status, 200, ok.text);
    assert.ok(Array.isArray((ok.json as Json).result.tools));
  });
});

describe('security: arguments must match the listed input schema (item 22)', () => {
  let server: RunningApp;
  before(async () => {
    server = await startApp(BasicApp);
  });
  after(() => server.close());

  const assignees: Array<[string, unknown]> = [
    ['an empty array', []],
    ['an array of two assignees', [{ name: 'Ada', email: 'ada@example.com' }, { name: 'Bob', email: 'bob@example.com' }]],
  ];

  for (const era of ['legacy', 'modern'] as const) {
    for (const [label, assignee] of assignees) {
      it(`refuses "assignee" given as ${label} before the handler runs (${era} era)`, async () => {
        const call = async (method: string, params: Json): Promise<Json> => {
          if (era === 'modern') return (await modernRpc(server.url, method, params)).json as Json;
          const sessionId = await legacySession(server.url);
          const res = await rpc(server.url, { jsonrpc: '2.0', id: 1, method, params }, { sessionId, headers: { 'MCP-Protocol-Version': '2025-11-25' } });
          return (res.json ?? res.events?.map((e) => e.data as Json).find((d) => d?.id === 1)) as Json;
        };
        const title = `confused ${era} ${label}`;
        const listed = await call('tools/list', {});
        const schema = listed.result.tools.find((t: Json) => t.name === 'create_task').inputSchema;
        assert.equal([schema.properties.assignee.type].flat().includes('array'), false, 'the listed schema does not allow an array');

        const created = await call('tools/call', { name: 'create_task', arguments: { title, assignee } });
        assert.equal(created.result?.isError, true, JSON.stringify(created));
        const text: string = created.result.content[0].text;
        assert.match(text, /^Invalid arguments for tool "create_task":/);
        assert.match(text, /- assignee: must be an object/);

        const tasks = await call('tools/call', { name: 'list_tasks', arguments: {} });
        const stored = (tasks.result.structuredContent.tasks as Json[]).filter((t) => t.title === title);
        assert.deepEqual(stored, [], 'the handler never ran');
      });
    }
  }

  it('still accepts an assignee object and an omitted one', async () => {
    const ok = (await modernRpc(server.url, 'tools/call', {
      name: 'create_task',
      arguments: { title: 'fine', assignee: { name: 'Ada', email: 'ada@example.com' } },
    })).json as Json;
    assert.notEqual(ok.result.isError, true, JSON.stringify(ok));
    assert.deepEqual(ok.result.structuredContent.assignee, { name: 'Ada', email: 'ada@example.com' });
    const none = (await modernRpc(server.url, 'tools/call', { name: 'create_task', arguments: { title: 'alone' } })).json as Json;
    assert.notEqual(none.result.isError, true, JSON.stringify(none));
  });

  it('refuses an object given where the listed schema says array', async () => {
    const res = (await modernRpc(server.url, 'tools/call', { name: 'create_task', arguments: { title: 't', tags: { 0: 'a' } } })).json as Json;
    assert.equal(res.result.isError, true);
    assert.match(res.result.content[0].text, /- tags: /);
  });
});

describe('security: sampling and roots answers are checked before the handler sees them (item 23)', () => {
  const malformedSamples: unknown[] = [
    { role: 'robot', model: 'm', content: null },
    { role: 'assistant', model: 'm', content: null },
    { role: 'robot', model: 'm', content: { type: 'text', text: 'hi' } },
    { role: 'assistant', model: 7, content: { type: 'text', text: 'hi' } },
    { role: 'assistant', model: 'm', content: { text: 'no type' } },
    { role: 'assistant', model: 'm', content: { type: 'text', text: 5 } },
    { role: 'assistant', model: 'm', content: [{ type: 'text', text: 'ok' }, 'junk'] },
    { role: 'assistant', model: 'm', content: [] },
    [],
    null,
  ];
  const goodSample = { role: 'assistant', model: 'm', content: { type: 'text', text: 'Short.' } };

  describe('sample 03, 2026-07-28 retries', () => {
    let server: RunningApp;
    before(async () => {
      server = await startApp(InteractiveApp);
    });
    after(() => server.close());

    const caps = { [META_KEYS.clientCapabilities]: { sampling: {} } };

    it('asks again instead of running the handler on a malformed sampling answer', async () => {
      for (const answer of malformedSamples) {
        const first = (await modernRpc(server.url, 'tools/call', { name: 'summarize', arguments: { text: 'A long text.' }, _meta: caps })).json as Json;
        assert.equal(first.result?.resultType, 'input_required', JSON.stringify(first));
        const [key] = Object.keys(first.result.inputRequests);
        const retry = await modernRpc(server.url, 'tools/call', {
          name: 'summarize',
          arguments: { text: 'A long text.' },
          inputResponses: { [key!]: answer },
          requestState: first.result.requestState,
          _meta: caps,
        });
        const body = retry.json as Json;
        assert.equal(retry.status, 200, `${JSON.stringify(answer)}: ${retry.text}`);
        assert.equal(body.result?.resultType, 'input_required', `${JSON.stringify(answer)}: ${retry.text}`);
        assert.equal(body.result.inputRequests[key!].method, 'sampling/createMessage');
      }
    });

    it('accepts a well-formed answer, also with content as an array of blocks (2025-11-25 shape)', async () => {
      for (const answer of [goodSample, { ...goodSample, content: [{ type: 'text', text: 'Short.' }] }]) {
        const first = (await modernRpc(server.url, 'tools/call', { name: 'summarize', arguments: { text: 'x' }, _meta: caps })).json as Json;
        const [key] = Object.keys(first.result.inputRequests);
        const done = (await modernRpc(server.url, 'tools/call', {
          name: 'summarize',
          arguments: { text: 'x' },
          inputResponses: { [key!]: answer },
          requestState: first.result.requestState,
          _meta: caps,
        })).json as Json;
        assert.equal(done.result?.resultType, 'complete', JSON.stringify(done));
        assert.notEqual(done.result.isError, true, JSON.stringify(done));
      }
    });
  });

  describe('sample 03, legacy session answering by POST', () => {
    let server: RunningApp;
    before(async () => {
      server = await startApp(InteractiveApp);
    });
    after(() => server.close());

    it('asks again after a malformed sampling answer and uses the next good one', async () => {
      const sessionId = await legacySession(server.url, { sampling: {} });
      const { response, asked } = await callAnswering(
        server.url,
        sessionId,
        { name: 'summarize', arguments: { text: 'A long text.' } },
        'sampling/createMessage',
        [{ role: 'robot', model: 'm', content: null }, goodSample],
      );
      assert.equal(asked, 2);
      assert.notEqual(response.result?.isError, true, JSON.stringify(response));
      assert.equal(response.result.content[0].text, 'Short.');
    });

    it('asks the legacy SDK client (1.12.3, which sends whatever its handler returns) again after junk', async () => {
      const answers: unknown[] = [{ role: 'robot', model: 'm', content: null }, goodSample];
      let asked = 0;
      const conn = await connectSdkClient(server.url, {
        version: 'legacy',
        onSample: async () => answers[Math.min(asked++, answers.length - 1)] as never,
      });
      try {
        const result = (await conn.client.callTool({ name: 'summarize', arguments: { text: 'A long text.' } })) as Json;
        assert.equal(asked, 2);
        assert.notEqual(result.isError, true, JSON.stringify(result));
        assert.equal(result.content[0].text, 'Short.');
      } finally {
        await conn.close();
      }
    });

    it('ends the call with a readable tool error after three malformed answers, never reaching the handler', async () => {
      const sessionId = await legacySession(server.url, { sampling: {} });
      const { response, asked } = await callAnswering(
        server.url,
        sessionId,
        { name: 'summarize', arguments: { text: 'A long text.' } },
        'sampling/createMessage',
        [{ role: 'robot', model: 'm', content: null }],
      );
      assert.equal(asked, 3);
      assert.equal(response.result?.isError, true, JSON.stringify(response));
      assert.match(response.result.content[0].text, /sampling\/createMessage.*malformed/);
      assert.match(response.result.content[0].text, /role/);
    });
  });

  describe('roots answers (fixture with a list_roots tool)', () => {
    let server: RunningApp;
    before(async () => {
      server = await startApp(InteractiveModule.register());
    });
    after(() => server.close());

    const malformedRoots: unknown[] = [
      { roots: [{ uri: 'file:///r', name: 7 }] },
      { roots: [{ uri: 42 }] },
      { roots: [null] },
      { roots: {} },
      { roots: [{ uri: 'file:///r', _meta: 'x' }] },
      { roots: [{ uri: 'https://example.com/not-a-file-root' }] },
    ];

    it('re-asks on a malformed roots answer on the 2026-07-28 era', async () => {
      const caps = { [META_KEYS.clientCapabilities]: { roots: {} } };
      for (const answer of malformedRoots) {
        const first = (await modernRpc(server.url, 'tools/call', { name: 'list_roots', arguments: {}, _meta: caps })).json as Json;
        assert.equal(first.result?.resultType, 'input_required', JSON.stringify(first));
        const [key] = Object.keys(first.result.inputRequests);
        const retry = (await modernRpc(server.url, 'tools/call', {
          name: 'list_roots',
          arguments: {},
          inputResponses: { [key!]: answer },
          requestState: first.result.requestState,
          _meta: caps,
        })).json as Json;
        assert.equal(retry.result?.resultType, 'input_required', `${JSON.stringify(answer)}: ${JSON.stringify(retry)}`);
      }
    });

    it('re-asks on a malformed roots answer on a legacy session', async () => {
      const sessionId = await legacySession(server.url, { roots: {} });
      const { response, asked } = await callAnswering(server.url, sessionId, { name: 'list_roots', arguments: {} }, 'roots/list', [
        malformedRoots[0],
        { roots: [{ uri: 'file:///r', name: 'r' }] },
      ]);
      assert.equal(asked, 2);
      assert.equal(response.result.content[0].text, 'file:///r');
    });
  });
});
