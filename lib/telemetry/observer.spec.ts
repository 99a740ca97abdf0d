import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  McpObservers,
  UNKNOWN_LABEL,
  requestTarget,
  type McpObservedRequest,
  type McpObserverSink,
  type McpServerNames,
  type McpSessionEndFacts,
} from './observer.js';

/** A server with one tool, `search`, one prompt, one resource and one template. */
const names: McpServerNames = {
  method: (_era, method) => ['tools/call', 'prompts/get', 'resources/read'].includes(method),
  tool: (name) => (name === 'search' ? name : undefined),
  prompt: (name) => (name === 'greet' ? name : name.startsWith('notes/') ? 'notes/*' : undefined),
  resource: (uri) => (uri === 'docs://readme' ? uri : uri.startsWith('users://') ? 'users://{id}' : undefined),
};
import { resolveTelemetry } from './options.js';

const request = { jsonrpc: '2.0' as const, id: 1, method: 'tools/call', params: { name: 'search' } };

describe('McpObservers', () => {
  it('gives no probe when no sink wants the request, one probe when one does, and nests runs in sink order', () => {
    const none: McpObserverSink = { request: () => undefined };
    assert.equal(
      new McpObservers([none, none], 10, names).request({ request, era: 'modern', protocolVersion: '2026-07-28' }),
      undefined,
    );
    const order: string[] = [];
    const sink = (name: string): McpObserverSink => ({
      request: () => ({
        run: (fn) => {
          order.push(`enter ${name}`);
          try {
            return fn();
          } finally {
            order.push(`leave ${name}`);
          }
        },
        end: () => order.push(`end ${name}`),
      }),
    });
    const probe = new McpObservers([sink('a'), none, sink('b')], 10, names).request({
      request,
      era: 'modern',
      protocolVersion: '2026-07-28',
    })!;
    assert.equal(
      probe.run!(() => 42),
      42,
    );
    probe.end(undefined);
    assert.deepEqual(order, ['enter a', 'enter b', 'leave b', 'leave a', 'end a', 'end b']);
  });

  it('reports a session duration only for sessions it saw open, and remembers at most maxTracked', () => {
    const closed: McpSessionEndFacts[] = [];
    const observers = new McpObservers([{ sessionClosed: (facts) => closed.push(facts) }], 2, names);
    for (const id of ['s1', 's2', 's3']) observers.sessionOpened({ sessionId: id, protocolVersion: '2025-11-25' });
    for (const id of ['s1', 's3', 'elsewhere']) observers.sessionClosed(id, 'deleted');
    assert.deepEqual(
      closed.map((c) => [c.sessionId, c.protocolVersion, typeof c.durationMs]),
      [
        ['s1', '', 'undefined'],
        ['s3', '2025-11-25', 'number'],
        ['elsewhere', '', 'undefined'],
      ],
    );
  });

  it("gives sinks the server's names only: made-up methods, tools, prompts, URIs and versions are _unknown", () => {
    const seen: McpObservedRequest[] = [];
    const observers = new McpObservers([{ request: (facts) => void seen.push(facts) }], 10, names);
    const ask = (method: string, params: Record<string, unknown>, protocolVersion = '2026-07-28') =>
      observers.request({ request: { jsonrpc: '2.0', id: 1, method, params }, era: 'modern', protocolVersion });
    ask('tools/call', { name: 'search' });
    ask('tools/call', { name: 'junk-1234' });
    ask('prompts/get', { name: 'notes/2024-01-01' });
    ask('resources/read', { uri: 'users://42' });
    ask('resources/read', { uri: 'file:///etc/passwd' });
    ask('made/up', { name: 'search' });
    ask('tools/call', { name: 'search' }, 'v-junk');
    assert.deepEqual(
      seen.map((f) => [f.method, f.target, f.protocolVersion]),
      [
        ['tools/call', { tool: 'search' }, '2026-07-28'],
        ['tools/call', { tool: UNKNOWN_LABEL }, '2026-07-28'],
        ['prompts/get', { prompt: 'notes/*' }, '2026-07-28'],
        ['resources/read', { resource: 'users://{id}' }, '2026-07-28'],
        ['resources/read', { resource: UNKNOWN_LABEL }, '2026-07-28'],
        [UNKNOWN_LABEL, {}, '2026-07-28'],
        ['tools/call', { tool: 'search' }, UNKNOWN_LABEL],
      ],
    );
  });

  it('hashes session ids with its key: stable for one secret, another for another, never the id', () => {
    const secret = Buffer.alloc(32, 7);
    const one = new McpObservers([], 10, names, { secret });
    const two = new McpObservers([], 10, names, { secret });
    const other = new McpObservers([], 10, names, { secret: Buffer.alloc(32, 8) });
    const id = 'a3f0c2d1e4b5a6978877665544332211';
    assert.equal(one.sessionRef(id), two.sessionRef(id));
    assert.notEqual(one.sessionRef(id), other.sessionRef(id));
    assert.match(one.sessionRef(id), /^[A-Za-z0-9_-]{22}$/);
    assert.ok(!one.sessionRef(id).includes(id.slice(0, 8)));
  });

  it('caps client-sent names before they are looked up', () => {
    assert.equal(requestTarget({ ...request, params: { name: 'x'.repeat(500) } }).tool?.length, 128);
    assert.deepEqual(requestTarget({ jsonrpc: '2.0', id: 2, method: 'resources/read', params: { uri: 'a://b' } }), {
      resource: 'a://b',
    });
    assert.deepEqual(requestTarget({ jsonrpc: '2.0', id: 3, method: 'tools/list' }), {});
  });
});

describe('resolveTelemetry', () => {
  it('is on when the api loads unless told otherwise, and names a malformed option', () => {
    assert.deepEqual(resolveTelemetry(undefined), {
      enabled: 'auto',
      tracerName: 'nestjs-model-context',
      sessionIds: 'hashed',
    });
    assert.equal(resolveTelemetry(false).enabled, false);
    assert.deepEqual(resolveTelemetry({ tracerName: 'svc' }), {
      enabled: 'auto',
      tracerName: 'svc',
      tracerVersion: undefined,
      sessionIds: 'hashed',
    });
    assert.equal(resolveTelemetry({ sessionIds: 'raw' }).sessionIds, 'raw');
    assert.throws(
      () => resolveTelemetry({ sessionIds: 'plain' as never }),
      /"telemetry\.sessionIds" must be one of 'hashed', 'raw', 'omitted'/,
    );
    assert.throws(() => resolveTelemetry({ enabled: 'yes' as never }), /"telemetry\.enabled" must be a boolean/);
  });
});
