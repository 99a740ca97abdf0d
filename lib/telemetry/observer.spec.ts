import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { McpObservers, requestTarget, type McpObserverSink, type McpSessionEndFacts } from './observer.js';
import { resolveTelemetry } from './options.js';

const request = { jsonrpc: '2.0' as const, id: 1, method: 'tools/call', params: { name: 'search' } };

describe('McpObservers', () => {
  it('gives no probe when no sink wants the request, one probe when one does, and nests runs in sink order', () => {
    const none: McpObserverSink = { request: () => undefined };
    assert.equal(new McpObservers([none, none], 10).request({ request, era: 'modern', protocolVersion: '2026-07-28' }), undefined);
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
    const probe = new McpObservers([sink('a'), none, sink('b')], 10).request({ request, era: 'modern', protocolVersion: '2026-07-28' })!;
    assert.equal(probe.run!(() => 42), 42);
    probe.end(undefined);
    assert.deepEqual(order, ['enter a', 'enter b', 'leave b', 'leave a', 'end a', 'end b']);
  });

  it('reports a session duration only for sessions it saw open, and remembers at most maxTracked', () => {
    const closed: McpSessionEndFacts[] = [];
    const observers = new McpObservers([{ sessionClosed: (facts) => closed.push(facts) }], 2);
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

  it('caps client-sent names used as span names and labels', () => {
    assert.equal(requestTarget({ ...request, params: { name: 'x'.repeat(500) } }).tool?.length, 128);
    assert.deepEqual(requestTarget({ jsonrpc: '2.0', id: 2, method: 'resources/read', params: { uri: 'a://b' } }), { resource: 'a://b' });
    assert.deepEqual(requestTarget({ jsonrpc: '2.0', id: 3, method: 'tools/list' }), {});
  });
});

describe('resolveTelemetry', () => {
  it('is on when the api loads unless told otherwise, and names a malformed option', () => {
    assert.deepEqual(resolveTelemetry(undefined), { enabled: 'auto', tracerName: 'nestjs-model-context' });
    assert.equal(resolveTelemetry(false).enabled, false);
    assert.deepEqual(resolveTelemetry({ tracerName: 'svc' }), { enabled: 'auto', tracerName: 'svc', tracerVersion: undefined });
    assert.throws(() => resolveTelemetry({ enabled: 'yes' as never }), /"telemetry\.enabled" must be a boolean/);
  });
});
