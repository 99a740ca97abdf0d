import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, it } from 'node:test';
import { SpanKind, SpanStatusCode } from '@opentelemetry/api';
import type { ReadableSpan } from '@opentelemetry/sdk-trace';
import { McpInProcessTransport } from 'nestjs-model-context/transports';
import { ObservabilityModule, hangEvents } from '../fixtures/observability.module.js';
import { nextEvent } from '../utils/wait.js';
import { startApp, type RunningApp } from '../utils/app.js';
import { modernRpc, rpc } from '../utils/clients.js';
import { installOtel, type InstalledOtel } from '../utils/otel.js';

type Json = Record<string, any>;
const LEGACY = '2025-11-25';
const TRACE_ID = '4bf92f3577b34da6a3ce929d0e0e4736';
const PARENT_SPAN = '00f067aa0ba902b7';
const TRACEPARENT = `00-${TRACE_ID}-${PARENT_SPAN}-01`;
const BUCKETS = [0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 30, 60, 120, 300];

const otel: InstalledOtel = installOtel();
after(() => otel.shutdown());

function only(name: string): ReadableSpan {
  const found = otel.spans().filter((span) => span.name === name);
  assert.equal(
    found.length,
    1,
    `one span named "${name}", got: ${otel
      .spans()
      .map((s) => s.name)
      .join(', ')}`,
  );
  return found[0]!;
}

async function openLegacySession(url: string, meta?: Json): Promise<string> {
  const res = await rpc(url, {
    jsonrpc: '2.0',
    id: 'init',
    method: 'initialize',
    params: {
      protocolVersion: LEGACY,
      capabilities: {},
      clientInfo: { name: 'otel-test', version: '1' },
      ...(meta ? { _meta: meta } : {}),
    },
  });
  assert.equal(res.status, 200);
  const sessionId = res.headers.get('mcp-session-id');
  assert.ok(sessionId);
  await rpc(
    url,
    { jsonrpc: '2.0', method: 'notifications/initialized' },
    { sessionId, headers: { 'MCP-Protocol-Version': LEGACY } },
  );
  return sessionId;
}

function legacyCall(url: string, sessionId: string, id: string | number, method: string, params: Json = {}) {
  return rpc(url, { jsonrpc: '2.0', id, method, params }, { sessionId, headers: { 'MCP-Protocol-Version': LEGACY } });
}

describe('OpenTelemetry per the semantic conventions for MCP', () => {
  let server: RunningApp;
  before(async () => {
    server = await startApp(ObservabilityModule.register());
  });
  after(() => server.close());
  beforeEach(() => otel.exporter.reset());

  it('tools/call (2026-07-28): one SERVER span "tools/call echo" with the conventions\' attributes', async () => {
    const res = await modernRpc(
      server.url,
      'tools/call',
      { name: 'echo', arguments: { text: 'hi' } },
      { id: 'call-1' },
    );
    assert.equal((res.json as Json).result.content[0].text, 'hi');
    const span = only('tools/call echo');
    assert.equal(span.kind, SpanKind.SERVER);
    assert.deepEqual(span.attributes, {
      'mcp.method.name': 'tools/call',
      'jsonrpc.request.id': 'call-1',
      'mcp.protocol.version': '2026-07-28',
      'gen_ai.operation.name': 'execute_tool',
      'gen_ai.tool.name': 'echo',
    });
    assert.equal(span.status.code, SpanStatusCode.UNSET);
    assert.equal(span.instrumentationScope.name, 'nestjs-model-context');
  });

  it('initialize and a legacy tools/call carry mcp.protocol.version and mcp.session.id (a keyed hash of the id)', async () => {
    const sessionId = await openLegacySession(server.url);
    const init = only('initialize');
    assert.equal(init.kind, SpanKind.SERVER);
    const label = init.attributes['mcp.session.id'] as string;
    assert.match(label, /^[A-Za-z0-9_-]{22}$/);
    assert.notEqual(label, sessionId);
    assert.deepEqual(init.attributes, {
      'mcp.method.name': 'initialize',
      'jsonrpc.request.id': 'init',
      'mcp.protocol.version': LEGACY,
      'mcp.session.id': label,
    });
    const res = await legacyCall(server.url, sessionId, 7, 'tools/call', { name: 'echo', arguments: { text: 'yo' } });
    assert.equal((res.json as Json).result.content[0].text, 'yo');
    assert.deepEqual(only('tools/call echo').attributes, {
      'mcp.method.name': 'tools/call',
      'jsonrpc.request.id': '7',
      'mcp.protocol.version': LEGACY,
      'mcp.session.id': label,
      'gen_ai.operation.name': 'execute_tool',
      'gen_ai.tool.name': 'echo',
    });
    await rpc(server.url, null, { httpMethod: 'DELETE', sessionId });
  });

  it('resources/read names the span by method only and records mcp.resource.uri', async () => {
    await modernRpc(server.url, 'resources/read', { uri: 'obs://readme' }, { id: 'r1' });
    const span = only('resources/read');
    assert.equal(span.attributes['mcp.resource.uri'], 'obs://readme');
    assert.equal(span.attributes['mcp.method.name'], 'resources/read');
    assert.equal(span.attributes['gen_ai.operation.name'], undefined);
  });

  it('prompts/get is named after the prompt and records gen_ai.prompt.name', async () => {
    await modernRpc(server.url, 'prompts/get', { name: 'greet', arguments: { text: 'Ada' } }, { id: 'p1' });
    const span = only('prompts/get greet');
    assert.equal(span.attributes['gen_ai.prompt.name'], 'greet');
    assert.equal(span.attributes['error.type'], undefined);
  });

  it('errors: a JSON-RPC error sets error.type and rpc.response.status_code; an isError result is a tool_error', async () => {
    const unknown = await modernRpc(server.url, 'tools/call', { name: 'nope', arguments: {} }, { id: 'e1' });
    const code = (unknown.json as Json).error.code as number;
    // The span is named after no client-sent name: the server has no tool "nope".
    const failed = only('tools/call _unknown');
    assert.equal(failed.attributes['error.type'], String(code));
    assert.equal(failed.attributes['rpc.response.status_code'], String(code));
    assert.equal(failed.status.code, SpanStatusCode.ERROR);
    assert.equal(failed.status.message, (unknown.json as Json).error.message);

    const refused = await modernRpc(server.url, 'tools/call', { name: 'refuse', arguments: {} }, { id: 'e2' });
    assert.equal((refused.json as Json).result.isError, true);
    const toolError = only('tools/call refuse');
    assert.equal(toolError.attributes['error.type'], 'tool_error');
    assert.equal(toolError.attributes['rpc.response.status_code'], undefined);
    assert.equal(toolError.status.code, SpanStatusCode.ERROR);

    const sessionId = await openLegacySession(server.url);
    await legacyCall(server.url, sessionId, 'e3', 'no/such/method');
    const notFound = only('_unknown');
    assert.equal(notFound.attributes['mcp.method.name'], '_unknown');
    assert.equal(notFound.attributes['error.type'], '-32601');
    assert.match(String(notFound.attributes['mcp.session.id']), /^[A-Za-z0-9_-]{22}$/);
    await rpc(server.url, null, { httpMethod: 'DELETE', sessionId });
  });

  for (const era of ['modern', 'legacy'] as const) {
    it(`${era}: a traceparent in params._meta becomes the span's parent`, async () => {
      const _meta = { traceparent: TRACEPARENT, tracestate: 'rojo=00f067aa0ba902b7' };
      if (era === 'modern') {
        await modernRpc(server.url, 'tools/call', { name: 'echo', arguments: { text: 'x' }, _meta }, { id: 'tp' });
      } else {
        const sessionId = await openLegacySession(server.url);
        await legacyCall(server.url, sessionId, 'tp', 'tools/call', { name: 'echo', arguments: { text: 'x' }, _meta });
        await rpc(server.url, null, { httpMethod: 'DELETE', sessionId });
      }
      const span = only('tools/call echo');
      assert.equal(span.spanContext().traceId, TRACE_ID);
      assert.equal(span.parentSpanContext?.spanId, PARENT_SPAN);
      assert.equal(span.parentSpanContext?.isRemote, true);
      assert.equal(span.spanContext().traceState?.get('rojo'), '00f067aa0ba902b7');
    });

    it(`${era}: a span started inside the tool is a child of the call's span`, async () => {
      let text: string;
      if (era === 'modern') {
        text = (
          (await modernRpc(server.url, 'tools/call', { name: 'traced', arguments: {} }, { id: 'child' })).json as Json
        ).result.content[0].text;
      } else {
        const sessionId = await openLegacySession(server.url);
        text = (
          (await legacyCall(server.url, sessionId, 'child', 'tools/call', { name: 'traced', arguments: {} }))
            .json as Json
        ).result.content[0].text;
        await rpc(server.url, null, { httpMethod: 'DELETE', sessionId });
      }
      const call = only('tools/call traced');
      const child = only('db.query');
      assert.equal(text, `${child.spanContext().traceId}/${child.spanContext().spanId}`);
      assert.equal(child.spanContext().traceId, call.spanContext().traceId);
      assert.equal(child.parentSpanContext?.spanId, call.spanContext().spanId);
    });
  }

  it('without _meta context, the parent comes from the HTTP traceparent header', async () => {
    await modernRpc(
      server.url,
      'tools/call',
      { name: 'echo', arguments: { text: 'h' } },
      { id: 'hdr', headers: { traceparent: TRACEPARENT } },
    );
    const span = only('tools/call echo');
    assert.equal(span.spanContext().traceId, TRACE_ID);
    assert.equal(span.parentSpanContext?.spanId, PARENT_SPAN);
  });

  it('progress and log notifications appear as span events, without their data', async () => {
    const res = await modernRpc(
      server.url,
      'tools/call',
      { name: 'steps', arguments: {}, _meta: { progressToken: 'pt' } },
      { id: 'steps' },
    );
    assert.equal(res.status, 200);
    const span = only('tools/call steps');
    const events = span.events.map((e) => ({ name: e.name, attributes: e.attributes }));
    assert.deepEqual(
      events.filter((e) => e.name === 'notifications/progress'),
      [
        { name: 'notifications/progress', attributes: { 'mcp.progress': 1, 'mcp.progress.total': 2 } },
        { name: 'notifications/progress', attributes: { 'mcp.progress': 2, 'mcp.progress.total': 2 } },
      ],
    );
  });

  it('in process: a call in flight is counted, and one cancelled before its response ends with error.type cancelled', async () => {
    const mcp = McpInProcessTransport.forApp(server.app);
    try {
      const inflight = async () =>
        (await otel.metrics()).find((m) => m.descriptor.name === 'mcp.server.operation.active')?.dataPoints[0]?.value ??
        0;
      const idle = await inflight();
      const started = nextEvent(hangEvents, 'started', 'the hang tool to start');
      const _meta = {
        'io.modelcontextprotocol/protocolVersion': '2026-07-28',
        'io.modelcontextprotocol/clientCapabilities': {},
      };
      const call = mcp
        .send({ jsonrpc: '2.0', id: 'hang-1', method: 'tools/call', params: { name: 'hang', arguments: {}, _meta } })
        .subscribe();
      await started;
      assert.equal(await inflight(), (idle as number) + 1);
      assert.deepEqual(
        otel.spans().map((s) => s.name),
        [],
        'the span is still open',
      );
      call.unsubscribe();
      const span = only('tools/call hang');
      assert.equal(span.attributes['error.type'], 'cancelled');
      assert.equal(span.status.code, SpanStatusCode.ERROR);
      assert.equal(await inflight(), idle);
    } finally {
      mcp.close();
    }
  });

  it("metrics: mcp.server.operation.duration and mcp.server.session.duration histograms with the conventions' units, buckets and attributes", async () => {
    const sessionId = await openLegacySession(server.url);
    await legacyCall(server.url, sessionId, 'm1', 'tools/call', { name: 'echo', arguments: { text: 'm' } });
    await legacyCall(server.url, sessionId, 'm2', 'tools/call', { name: 'refuse', arguments: {} });
    const during = await otel.metrics();
    const activeSessions = during.find((m) => m.descriptor.name === 'mcp.server.session.active')!;
    assert.ok(activeSessions, 'mcp.server.session.active is reported');
    const open = activeSessions.dataPoints.find((p) => p.attributes['mcp.protocol.version'] === LEGACY);
    assert.ok(open && (open.value as number) >= 1);
    const delResponse = await rpc(server.url, null, { httpMethod: 'DELETE', sessionId });
    assert.equal(delResponse.status, 200);

    const collected = await otel.metrics();
    const operation = collected.find((m) => m.descriptor.name === 'mcp.server.operation.duration')!;
    assert.ok(operation, 'mcp.server.operation.duration is reported');
    assert.equal(operation.descriptor.unit, 's');
    const echo = operation.dataPoints.find(
      (p) => p.attributes['gen_ai.tool.name'] === 'echo' && p.attributes['mcp.protocol.version'] === LEGACY,
    )!;
    assert.ok(echo);
    assert.deepEqual(echo.attributes, {
      'mcp.method.name': 'tools/call',
      'mcp.protocol.version': LEGACY,
      'gen_ai.tool.name': 'echo',
      'gen_ai.operation.name': 'execute_tool',
    });
    assert.deepEqual((echo.value as any).buckets.boundaries, BUCKETS);
    const refused = operation.dataPoints.find(
      (p) => p.attributes['gen_ai.tool.name'] === 'refuse' && p.attributes['mcp.protocol.version'] === LEGACY,
    )!;
    assert.equal(refused.attributes['error.type'], 'tool_error');

    const session = collected.find((m) => m.descriptor.name === 'mcp.server.session.duration')!;
    assert.ok(session, 'mcp.server.session.duration is reported');
    assert.equal(session.descriptor.unit, 's');
    const ended = session.dataPoints.find((p) => p.attributes['mcp.protocol.version'] === LEGACY)!;
    assert.ok((ended.value as any).count >= 1);
    assert.deepEqual((ended.value as any).buckets.boundaries, BUCKETS);

    const inflight = collected.find((m) => m.descriptor.name === 'mcp.server.operation.active')!;
    assert.deepEqual(
      inflight.dataPoints.map((p) => p.value),
      [0],
      'no request in flight',
    );
    const afterDelete = collected.find((m) => m.descriptor.name === 'mcp.server.session.active')!;
    assert.equal(
      afterDelete.dataPoints.find((p) => p.attributes['mcp.protocol.version'] === LEGACY)!.value,
      (open.value as number) - 1,
    );
  });
});

describe('telemetry: false', () => {
  it('creates no span even with an SDK registered', async () => {
    const server = await startApp(ObservabilityModule.register({ telemetry: false }));
    try {
      otel.exporter.reset();
      const res = await modernRpc(
        server.url,
        'tools/call',
        { name: 'echo', arguments: { text: 'off' } },
        { id: 'off' },
      );
      assert.equal((res.json as Json).result.content[0].text, 'off');
      assert.deepEqual(
        otel.spans().map((s) => s.name),
        [],
      );
    } finally {
      await server.close();
    }
  });
});
