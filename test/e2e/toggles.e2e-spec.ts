/**
 * ISSUE-18 item 5: runtime toggles. Enabling, disabling or updating a tool (or a prompt or
 * resource) shows at once in lists and calls, on every instance sharing Redis, and clients of
 * both eras get list_changed. A disabled tool called anyway gets the unknown-tool error.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { McpRegistry } from 'nestjs-model-context';
import { TogglesModule } from '../fixtures/toggles.module.js';
import { startApp, type RunningApp } from '../utils/app.js';
import { connectModernClient, connectSdkClient, modernHeaders, modernMeta, modernRpc, rpc } from '../utils/clients.js';
import { clearRedisPrefix, redisAvailable } from '../utils/redis.js';
import { readSse, type SseEvent } from '../utils/sse.js';

type Json = Record<string, any>;

const ACCEPT = { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream' };

/**
 * A stream whose messages can be awaited: `next(method)` resolves on the next message of that
 * method (or one already received and not yet taken), so tests wait for the event itself.
 */
class Watched {
  private readonly received: Json[] = [];
  private readonly waiters: Array<{ method: string; resolve: (m: Json) => void }> = [];
  constructor(
    response: Response,
    private readonly what: string,
    /** Aborts the fetch that opened the stream: the only way to end a read in progress. */
    private readonly controller: AbortController,
  ) {
    void readSse(response.body, {
      onEvent: (event: SseEvent) => {
        if (typeof event.data !== 'object' || event.data === null) return;
        const message = event.data as Json;
        const waiter = this.waiters.findIndex((w) => w.method === message.method);
        if (waiter >= 0) this.waiters.splice(waiter, 1)[0].resolve(message);
        else this.received.push(message);
      },
      until: () => this.controller.signal.aborted,
    }).catch(() => undefined);
  }

  next(method: string, guardMs = 60_000): Promise<Json> {
    const index = this.received.findIndex((m) => m.method === method);
    if (index >= 0) return Promise.resolve(this.received.splice(index, 1)[0]);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`${this.what}: no ${method} within ${guardMs} ms`)), guardMs);
      this.waiters.push({ method, resolve: (m) => (clearTimeout(timer), resolve(m)) });
    });
  }

  close(): void {
    this.controller.abort();
  }
}

async function legacyStream(url: string): Promise<Watched> {
  const init = await rpc(url, {
    jsonrpc: '2.0',
    id: 0,
    method: 'initialize',
    params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
  });
  const sessionId = init.headers.get('mcp-session-id')!;
  await rpc(url, { jsonrpc: '2.0', method: 'notifications/initialized' }, { sessionId });
  const controller = new AbortController();
  const response = await fetch(url, {
    headers: { Accept: 'text/event-stream', 'Mcp-Session-Id': sessionId, 'MCP-Protocol-Version': '2025-11-25' },
    signal: controller.signal,
  });
  assert.equal(response.status, 200);
  return new Watched(response, 'legacy GET stream', controller);
}

async function modernListen(url: string): Promise<Watched> {
  const controller = new AbortController();
  const response = await fetch(url, {
    signal: controller.signal,
    method: 'POST',
    headers: { ...ACCEPT, ...modernHeaders('subscriptions/listen') },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 'listen',
      method: 'subscriptions/listen',
      params: {
        notifications: { toolsListChanged: true, promptsListChanged: true, resourcesListChanged: true },
        _meta: modernMeta(),
      },
    }),
  });
  const watched = new Watched(response, 'modern listen stream', controller);
  await watched.next('notifications/subscriptions/acknowledged');
  return watched;
}

/** The error of a 2026-era call, with the tool's name taken out, to compare two errors. */
async function callError(url: string, name: string): Promise<Json> {
  const res = (await modernRpc(url, 'tools/call', { name, arguments: {} })).json as Json;
  assert.ok(res.error, `${name}: ${JSON.stringify(res)}`);
  return JSON.parse(JSON.stringify(res.error).split(name).join('<name>'));
}

async function legacyCallError(url: string, name: string): Promise<Json> {
  const conn = await connectSdkClient(url);
  try {
    const error = await conn.client.callTool({ name, arguments: {} }).then(
      () => assert.fail(`${name} answered`),
      (e: { code: number; message: string }) => e,
    );
    return { code: error.code, message: error.message.split(name).join('<name>') };
  } finally {
    await conn.close();
  }
}

async function toolNames(
  url: string,
): Promise<{ legacy: string[]; modern: string[]; descriptions: Record<string, string> }> {
  const legacy = await connectSdkClient(url);
  const modern = await connectModernClient(url);
  try {
    const l = await legacy.client.listTools();
    const m = await modern.client.listTools();
    return {
      legacy: l.tools.map((t) => t.name),
      modern: m.tools.map((t) => t.name),
      descriptions: Object.fromEntries(m.tools.map((t) => [t.name, t.description ?? ''])),
    };
  } finally {
    await legacy.close();
    await modern.close();
  }
}

describe('runtime toggles on one instance (issue 18 item 5)', () => {
  let server: RunningApp;
  let registry: McpRegistry;
  before(async () => {
    server = await startApp(TogglesModule.register());
    registry = server.app.get(McpRegistry);
  });
  after(() => server.close());

  it('disable hides a tool from lists and calls at once, with list_changed on both eras', async () => {
    const legacy = await legacyStream(server.url);
    const modern = await modernListen(server.url);
    try {
      assert.equal(registry.disable('beta'), true);
      await legacy.next('notifications/tools/list_changed');
      await modern.next('notifications/tools/list_changed');
      const names = await toolNames(server.url);
      assert.deepEqual(names.legacy, ['alpha']);
      assert.deepEqual(names.modern, ['alpha']);
      assert.deepEqual(await callError(server.url, 'beta'), await callError(server.url, 'no_such_tool'));
      assert.deepEqual(await legacyCallError(server.url, 'beta'), await legacyCallError(server.url, 'no_such_tool'));
      assert.equal(registry.isEnabled('beta'), false);

      assert.equal(registry.enable('beta'), true);
      await legacy.next('notifications/tools/list_changed');
      await modern.next('notifications/tools/list_changed');
      assert.deepEqual((await toolNames(server.url)).modern, ['alpha', 'beta']);
      const called = (await modernRpc(server.url, 'tools/call', { name: 'beta', arguments: {} })).json as Json;
      assert.equal(called.result.content[0].text, 'beta');
    } finally {
      legacy.close();
      modern.close();
    }
  });

  it('update replaces the description and annotations clients list, keeping the rest', async () => {
    registry.update('beta', {
      description: 'Now generally available.',
      annotations: { readOnlyHint: false, idempotentHint: true },
    });
    const listed = ((await modernRpc(server.url, 'tools/list', {})).json as Json).result.tools.find(
      (t: Json) => t.name === 'beta',
    );
    assert.equal(listed.description, 'Now generally available.');
    assert.deepEqual(listed.annotations, { readOnlyHint: false, idempotentHint: true });
    assert.deepEqual(listed.inputSchema, { type: 'object', additionalProperties: false });
    registry.update('beta', { description: 'Behind a feature flag.', annotations: { readOnlyHint: true } });
  });

  it('toggles prompts and resources by kind, with their list_changed', async () => {
    const modern = await modernListen(server.url);
    try {
      registry.disable('gamma', { kind: 'prompt' });
      await modern.next('notifications/prompts/list_changed');
      const prompts = ((await modernRpc(server.url, 'prompts/list', {})).json as Json).result.prompts;
      assert.deepEqual(prompts, []);
      const got = ((await modernRpc(server.url, 'prompts/get', { name: 'gamma' })).json as Json).error;
      assert.equal(got.code, -32602, JSON.stringify(got));

      registry.disable('flags://doc', { kind: 'resource' });
      await modern.next('notifications/resources/list_changed');
      assert.deepEqual(((await modernRpc(server.url, 'resources/list', {})).json as Json).result.resources, []);
      const read = ((await modernRpc(server.url, 'resources/read', { uri: 'flags://doc' })).json as Json).error;
      const unknown = ((await modernRpc(server.url, 'resources/read', { uri: 'flags://none' })).json as Json).error;
      assert.equal(read.code, unknown.code);

      registry.enable('gamma', { kind: 'prompt' });
      registry.enable('flags://doc', { kind: 'resource' });
      await modern.next('notifications/prompts/list_changed');
      await modern.next('notifications/resources/list_changed');
      assert.equal(((await modernRpc(server.url, 'resources/list', {})).json as Json).result.resources.length, 1);
    } finally {
      modern.close();
    }
  });
});

const skip = (await redisAvailable()) ? false : 'no Redis at 127.0.0.1:6379';

describe('runtime toggles across instances sharing Redis (issue 18 item 5)', { skip }, () => {
  const prefix = `mcp-e2e-toggles:${randomBytes(6).toString('hex')}:`;
  let a: RunningApp;
  let b: RunningApp;
  before(async () => {
    a = await startApp(TogglesModule.register(prefix));
    b = await startApp(TogglesModule.register(prefix));
  });
  after(async () => {
    await a?.close();
    await b?.close();
    await clearRedisPrefix(prefix);
  });

  it('a tool disabled on A is gone from lists and calls on B once B streams get list_changed, on both eras', async () => {
    const legacyOnB = await legacyStream(b.url);
    const modernOnB = await modernListen(b.url);
    try {
      assert.deepEqual((await toolNames(b.url)).modern, ['alpha', 'beta']);
      a.app.get(McpRegistry).disable('beta');
      await legacyOnB.next('notifications/tools/list_changed');
      await modernOnB.next('notifications/tools/list_changed');
      const names = await toolNames(b.url);
      assert.deepEqual(names.legacy, ['alpha']);
      assert.deepEqual(names.modern, ['alpha']);
      assert.deepEqual(await callError(b.url, 'beta'), await callError(b.url, 'no_such_tool'));
      assert.equal(b.app.get(McpRegistry).isEnabled('beta'), false);

      a.app.get(McpRegistry).update('beta', { description: 'Back, renamed.' });
      await modernOnB.next('notifications/tools/list_changed');
      a.app.get(McpRegistry).enable('beta');
      await modernOnB.next('notifications/tools/list_changed');
      const back = await toolNames(b.url);
      assert.deepEqual(back.modern, ['alpha', 'beta']);
      assert.equal(back.descriptions.beta, 'Back, renamed.');
      const called = (await modernRpc(b.url, 'tools/call', { name: 'beta', arguments: {} })).json as Json;
      assert.equal(called.result.content[0].text, 'beta');
    } finally {
      legacyOnB.close();
      modernOnB.close();
    }
  });
});
