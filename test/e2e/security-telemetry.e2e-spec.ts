/**
 * Spans, metrics and McpEvents from the attacker's side. Labels come from the server's names:
 * thousands of made-up tool names, methods, prompts, URIs and versions share one `_unknown`
 * value and leave room for the real series (issue 26 item 14). No argument value, elicitation
 * answer or result reaches them. A session id, which on a server without auth is all anyone needs
 * to use the session, shows only as a keyed hash unless the app asks for it. And a span processor
 * or exporter that throws breaks neither the call nor the process.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { NestFactory } from '@nestjs/core';
import type { Context } from '@opentelemetry/api';
import type { ReadableSpan, Span, SpanExporter, SpanProcessor } from '@opentelemetry/sdk-trace';
import { SimpleSpanProcessor } from '@opentelemetry/sdk-trace';
import { MCP_DISPATCHER } from '../../lib/common/mcp.constants.js';
import type { McpDispatcher } from '../../lib/protocol/dispatcher.js';
import { AuditLog, ObservabilityModule } from '../fixtures/observability.module.js';
import { startApp, type RunningApp } from '../utils/app.js';
import { connectSdkClient, modernRpc, rpc } from '../utils/clients.js';
import { legacyRequest as legacyCall, legacySession } from '../utils/legacy-session.js';
import { installOtel, type InstalledOtel } from '../utils/otel.js';
import { pool } from '../utils/wait.js';

type Json = Record<string, any>;
const LEGACY = '2025-11-25';
const SECRET = 'S3CRET-ARG-VALUE';

/** A span processor and an exporter that throw while `faults.on`, as a broken vendor SDK would. */
const faults = { on: false, thrown: 0 };
const faultyProcessor: SpanProcessor = {
  onStart: (_span: Span, _context: Context) => {
    if (faults.on) (faults.thrown++, fail('onStart'));
  },
  onEnd: (_span: ReadableSpan) => {
    if (faults.on) (faults.thrown++, fail('onEnd'));
  },
  forceFlush: async () => undefined,
  shutdown: async () => undefined,
};
const faultyExporter: SpanExporter = {
  export: (_spans, done) => {
    if (faults.on) (faults.thrown++, fail('export'));
    done({ code: 0 });
  },
  shutdown: async () => undefined,
};
function fail(where: string): never {
  throw new Error(`span processor ${where} failed`);
}

const otel: InstalledOtel = installOtel({
  spanProcessors: [faultyProcessor, new SimpleSpanProcessor({ exporter: faultyExporter })],
});
after(() => otel.shutdown());

/**
 * Everything telemetry and events hold, as text, to search for what must not be there. With
 * `labelsOnly`, the error messages are left out: they are the ones the caller got, which may
 * quote a name it sent ("Unknown tool ..."), and are no label.
 */
async function everythingRecorded(audit: AuditLog, labelsOnly = false): Promise<string> {
  const spans = otel.spans().map((s) => ({
    name: s.name,
    attributes: s.attributes,
    events: s.events,
    status: labelsOnly ? s.status.code : s.status,
  }));
  const metrics = (await otel.metrics()).map((m) => ({
    name: m.descriptor.name,
    points: m.dataPoints.map((p) => p.attributes),
  }));
  const events = labelsOnly ? audit.events.map((e) => ({ ...e, errorMessage: undefined })) : audit.events;
  return JSON.stringify({ spans, metrics, events });
}

describe('telemetry labels under a flood of made-up names (item 14)', () => {
  let server: RunningApp;
  before(async () => {
    server = await startApp(ObservabilityModule.register());
  });
  after(() => server.close());

  it('2,050 made-up tool names over both eras share one _unknown series; a real tool called after has its own', async () => {
    otel.exporter.reset();
    const audit = server.app.get(AuditLog);
    const sessionId = await legacySession(server.url, 'flood');
    await pool(1025, 16, (i) => modernRpc(server.url, 'tools/call', { name: `junk-m-${i}`, arguments: {} }));
    await pool(1025, 16, (i) =>
      legacyCall(server.url, sessionId, `j${i}`, 'tools/call', { name: `junk-l-${i}`, arguments: {} }),
    );
    // Made-up methods, prompts, URIs and initialize versions: the same.
    await pool(40, 8, (i) => legacyCall(server.url, sessionId, `m${i}`, `junk/method-${i}`));
    await pool(40, 8, (i) => modernRpc(server.url, 'prompts/get', { name: `junk-prompt-${i}` }));
    await pool(40, 8, (i) => modernRpc(server.url, 'resources/read', { uri: `junk://resource/${i}` }));
    await pool(10, 5, (i) =>
      rpc(server.url, {
        jsonrpc: '2.0',
        id: 1,
        method: 'initialize',
        params: { protocolVersion: `junk-version-${i}`, capabilities: {}, clientInfo: { name: 'x', version: '1' } },
      }),
    );

    const real = await modernRpc(server.url, 'tools/call', { name: 'echo', arguments: { text: 'after the flood' } });
    assert.equal((real.json as Json).result.content[0].text, 'after the flood');

    const metrics = await otel.metrics();
    const operation = metrics.find((m) => m.descriptor.name === 'mcp.server.operation.duration')!;
    const points = operation.dataPoints.map((p) => p.attributes);
    assert.ok(!points.some((a) => 'otel.metric.overflow' in a), 'the flood overflowed the cardinality limit');
    const tools = new Set(points.map((a) => a['gen_ai.tool.name']).filter((name) => name !== undefined));
    assert.ok(tools.has('_unknown'), 'made-up tools are counted, as _unknown');
    assert.ok(
      [...tools].every((name) => ['_unknown', 'echo'].includes(String(name))),
      `tool labels: ${[...tools].join(', ')}`,
    );
    assert.ok(
      points.some((a) => a['gen_ai.tool.name'] === 'echo' && a['mcp.protocol.version'] === '2026-07-28'),
      'the real tool has no series',
    );
    const methods = new Set(points.map((a) => String(a['mcp.method.name'])));
    assert.deepEqual([...methods].sort(), ['_unknown', 'initialize', 'prompts/get', 'resources/read', 'tools/call']);
    const versions = new Set(points.map((a) => String(a['mcp.protocol.version'])));
    assert.ok(
      [...versions].every((v) => ['2026-07-28', LEGACY, '_unknown'].includes(v)),
      `version labels: ${[...versions].join(', ')}`,
    );
    assert.ok(points.length < 40, `${points.length} series for a handful of real names`);

    const spanNames = new Set(otel.spans().map((s) => s.name));
    assert.deepEqual([...spanNames].sort(), [
      '_unknown',
      'initialize',
      'prompts/get _unknown',
      'resources/read',
      'tools/call _unknown',
      'tools/call echo',
    ]);
    assert.doesNotMatch(
      await everythingRecorded(audit, true),
      /junk/,
      'a client-sent name became a span name, attribute, metric label or event field',
    );
    await rpc(server.url, null, { httpMethod: 'DELETE', sessionId });
  });
});

describe('telemetry and events hold no argument values', () => {
  let server: RunningApp;
  before(async () => {
    server = await startApp(ObservabilityModule.register());
  });
  after(() => server.close());

  it('arguments, elicitation answers, results and resource template values stay out of spans, metrics and events (both eras)', async () => {
    otel.exporter.reset();
    const audit = server.app.get(AuditLog);
    await modernRpc(server.url, 'tools/call', { name: 'echo', arguments: { text: SECRET } });
    await modernRpc(server.url, 'tools/call', { name: 'echo', arguments: { text: 42, extra: SECRET } });
    await modernRpc(server.url, 'prompts/get', { name: 'greet', arguments: { text: SECRET } });
    const conn = await connectSdkClient(server.url, {
      onElicit: async () => ({ action: 'accept', content: { name: SECRET } }),
    });
    try {
      assert.equal(
        ((await conn.client.callTool({ name: 'echo', arguments: { text: SECRET } })) as Json).content[0].text,
        SECRET,
      );
      assert.equal(
        ((await conn.client.callTool({ name: 'ask_name', arguments: {} })) as Json).content[0].text,
        `hi ${SECRET}`,
      );
    } finally {
      await conn.close();
    }
    assert.ok(otel.spans().length >= 5);
    assert.ok(!(await everythingRecorded(audit)).includes(SECRET), 'an argument value, answer or result was recorded');
  });
});

describe('JSON-RPC ids in spans and events', () => {
  let server: RunningApp;
  before(async () => {
    server = await startApp(ObservabilityModule.register());
  });
  after(() => server.close());

  it('a 100,000-character id is recorded as its first limits.observedRequestIdLength (128) characters and a marker, on both eras; a short id as sent', async () => {
    otel.exporter.reset();
    const audit = server.app.get(AuditLog);
    const long = (tag: string) => tag + 'X'.repeat(100_000 - tag.length);
    const sessionId = await legacySession(server.url, 'long-ids');
    await modernRpc(server.url, 'tools/call', { name: 'echo', arguments: { text: 'm' } }, { id: long('modern-') });
    await legacyCall(server.url, sessionId, long('legacy-'), 'tools/call', { name: 'echo', arguments: { text: 'l' } });
    await modernRpc(server.url, 'tools/call', { name: 'echo', arguments: { text: 's' } }, { id: 'short-id' });
    const recorded = [
      ...otel
        .spans()
        .filter((span) => span.name === 'tools/call echo')
        .map((span) => String(span.attributes['jsonrpc.request.id'])),
      ...audit.events
        .filter(
          (event) =>
            (event.type === 'request.started' || event.type === 'request.finished') && event.method === 'tools/call',
        )
        .map((event) => String((event as { requestId: unknown }).requestId)),
    ];
    assert.equal(recorded.length, 9, `three spans and six events: ${recorded.length}`);
    for (const tag of ['modern-', 'legacy-']) {
      const ids = recorded.filter((id) => id.startsWith(tag));
      assert.equal(ids.length, 3, `the ${tag} call is in one span and two events`);
      for (const id of ids)
        assert.match(id, new RegExp(`^${tag}X{${128 - tag.length}}…\\[100000 chars, sha256:[0-9a-f]{16}\\]$`));
    }
    assert.equal(recorded.filter((id) => id === 'short-id').length, 3, 'a short id is recorded as sent');
    assert.ok(!(await everythingRecorded(audit)).includes('X'.repeat(129)), 'no long id is recorded whole');
    await rpc(server.url, null, { httpMethod: 'DELETE', sessionId });
  });
});

describe('session ids in spans and events', () => {
  const secret = 'a-requestState-secret-shared-by-instances';
  let one: RunningApp;
  let two: RunningApp;
  before(async () => {
    one = await startApp(ObservabilityModule.register({ requestState: { secret } }));
    two = await startApp(ObservabilityModule.register({ requestState: { secret } }));
  });
  after(async () => {
    await one?.close();
    await two?.close();
  });

  const refOn = (app: RunningApp, sessionId: string) =>
    app.app.get<symbol, McpDispatcher>(MCP_DISPATCHER, { strict: false }).observer!.sessionRef(sessionId);

  it('carry a keyed hash by default, never the id; instances sharing requestState.secret agree on it (leftover B)', async () => {
    otel.exporter.reset();
    const audit = one.app.get(AuditLog);
    const sessionId = await legacySession(one.url, 'hashed');
    await legacyCall(one.url, sessionId, 'h1', 'tools/call', { name: 'echo', arguments: { text: 'x' } });
    const recorded = await everythingRecorded(audit);
    assert.ok(!recorded.includes(sessionId), 'the raw session id is in spans, metrics or events');
    const labels = new Set(
      otel
        .spans()
        .map((s) => s.attributes['mcp.session.id'])
        .filter((v) => v !== undefined),
    );
    assert.deepEqual([...labels], [refOn(two, sessionId)], 'another instance with the same secret hashes the id alike');
    assert.ok(audit.events.some((e) => 'sessionId' in e && e.sessionId === refOn(one, sessionId)));
    await rpc(one.url, null, { httpMethod: 'DELETE', sessionId });
  });

  it("telemetry.sessionIds: 'raw' and events.sessionIds: 'raw' put the id itself; 'omitted' leaves it out of spans", async () => {
    for (const mode of ['raw', 'omitted'] as const) {
      const server = await startApp(
        ObservabilityModule.register({
          telemetry: { sessionIds: mode },
          events: { sessionIds: mode === 'raw' ? 'raw' : 'hashed' },
        }),
      );
      try {
        otel.exporter.reset();
        const audit = server.app.get(AuditLog);
        const sessionId = await legacySession(server.url, mode);
        await legacyCall(server.url, sessionId, 'r1', 'tools/call', { name: 'echo', arguments: { text: 'x' } });
        const labels = otel.spans().map((s) => s.attributes['mcp.session.id']);
        if (mode === 'raw') {
          assert.deepEqual([...new Set(labels)], [sessionId]);
          assert.ok(audit.events.some((e) => 'sessionId' in e && e.sessionId === sessionId));
        } else {
          assert.deepEqual([...new Set(labels)], [undefined]);
        }
        await rpc(server.url, null, { httpMethod: 'DELETE', sessionId });
      } finally {
        await server.close();
      }
    }
  });

  it('refuses a sessionIds option it does not know, naming it', async () => {
    const boot = (options: Json) =>
      NestFactory.createApplicationContext(ObservabilityModule.register(options), {
        logger: false,
        abortOnError: false,
      });
    await assert.rejects(
      boot({ telemetry: { sessionIds: 'plain' } }),
      /"telemetry\.sessionIds" must be one of 'hashed', 'raw', 'omitted'/,
    );
    await assert.rejects(
      boot({ events: { sessionIds: 'omitted' } }),
      /"events\.sessionIds" is "omitted"; it must be 'hashed' \(the default\) or 'raw'/,
    );
  });
});

describe('a span processor or exporter that throws', () => {
  let server: RunningApp;
  before(async () => {
    server = await startApp(ObservabilityModule.register());
  });
  after(async () => {
    faults.on = false;
    await server.close();
  });

  it('breaks neither the call nor the process, on both eras and for a failing call', async () => {
    faults.on = true;
    try {
      const modern = await modernRpc(server.url, 'tools/call', { name: 'echo', arguments: { text: 'still here' } });
      assert.equal((modern.json as Json).result.content[0].text, 'still here');
      const sessionId = await legacySession(server.url, 'faulty');
      const legacy = await legacyCall(server.url, sessionId, 'f1', 'tools/call', {
        name: 'echo',
        arguments: { text: 'legacy too' },
      });
      assert.equal((legacy.json as Json).result.content[0].text, 'legacy too');
      const unknown = await modernRpc(server.url, 'tools/call', { name: 'nope', arguments: {} });
      assert.equal((unknown.json as Json).error.code, -32602);
      await rpc(server.url, null, { httpMethod: 'DELETE', sessionId });
      assert.ok(faults.thrown > 0, 'the faulty processor never ran');
    } finally {
      faults.on = false;
    }
    const after = await modernRpc(server.url, 'tools/call', { name: 'echo', arguments: { text: 'recovered' } });
    assert.equal((after.json as Json).result.content[0].text, 'recovered');
  });
});
