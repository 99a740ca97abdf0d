import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Injectable } from '@nestjs/common';
import { EventEmitter2, EventEmitterModule, OnEvent } from '@nestjs/event-emitter';
import { McpRegistry } from 'nestjs-model-context';
import type { McpEvent, McpRequestFinishedEvent } from 'nestjs-model-context/telemetry';
import { McpInProcessTransport } from 'nestjs-model-context/transports';
import { lastValueFrom, toArray } from 'rxjs';
import { MCP_DISPATCHER } from '../../lib/common/mcp.constants.js';
import type { McpDispatcher } from '../../lib/protocol/dispatcher.js';
import { AuditLog, ObservabilityModule, hangEvents } from '../fixtures/observability.module.js';
import { nextEvent } from '../utils/wait.js';
import { startApp, type RunningApp } from '../utils/app.js';
import { connectSdkClient, modernRpc, rpc } from '../utils/clients.js';

type Json = Record<string, any>;
const LEGACY = '2025-11-25';

async function openSession(url: string, id: string): Promise<string> {
  const res = await rpc(url, {
    jsonrpc: '2.0',
    id,
    method: 'initialize',
    params: { protocolVersion: LEGACY, capabilities: {}, clientInfo: { name: 'audit-test', version: '3' } },
  });
  assert.equal(res.status, 200);
  const sessionId = res.headers.get('mcp-session-id')!;
  await rpc(
    url,
    { jsonrpc: '2.0', method: 'notifications/initialized' },
    { sessionId, headers: { 'MCP-Protocol-Version': LEGACY } },
  );
  return sessionId;
}

const legacyCall = (url: string, sessionId: string, id: string, method: string, params: Json = {}) =>
  rpc(url, { jsonrpc: '2.0', id, method, params }, { sessionId, headers: { 'MCP-Protocol-Version': LEGACY } });

/** Collects what EventEmitter2 delivers, as an app's @OnEvent listener would. */
@Injectable()
class EmitterListener {
  readonly finished: McpRequestFinishedEvent[] = [];
  @OnEvent('mcp.request.finished')
  onFinished(event: McpRequestFinishedEvent): void {
    this.finished.push(event);
  }
}

describe('McpEvents: audit and integration events', () => {
  let server: RunningApp;
  let audit: AuditLog;
  let listener: EmitterListener;
  before(async () => {
    server = await startApp(
      ObservabilityModule.register({}, { imports: [EventEmitterModule.forRoot()], providers: [EmitterListener] }),
    );
    audit = server.app.get(AuditLog);
    listener = server.app.get(EmitterListener);
  });
  after(() => server.close());
  /** What events carry for a session: its keyed hash (events.sessionIds defaults to 'hashed'). */
  const shown = (sessionId: string | undefined): string =>
    server.app.get<symbol, McpDispatcher>(MCP_DISPATCHER, { strict: false }).observer!.sessionRef(sessionId!);

  it('an audit subscriber sees every call of a mixed run exactly once, with the right outcome', async () => {
    const sessionId = await openSession(server.url, 'mix-init');
    const expected: string[] = ['legacy mix-init initialize - ok'];
    const calls: Array<Promise<unknown>> = [];
    for (let i = 0; i < 8; i++) {
      calls.push(
        modernRpc(server.url, 'tools/call', { name: 'echo', arguments: { text: `m${i}` } }, { id: `mix-m-ok-${i}` }),
      );
      expected.push(`modern mix-m-ok-${i} tools/call echo ok`);
      calls.push(
        legacyCall(server.url, sessionId, `mix-l-ok-${i}`, 'tools/call', {
          name: 'echo',
          arguments: { text: `l${i}` },
        }),
      );
      expected.push(`legacy mix-l-ok-${i} tools/call echo ok`);
    }
    for (let i = 0; i < 3; i++) {
      calls.push(modernRpc(server.url, 'tools/call', { name: 'refuse', arguments: {} }, { id: `mix-m-te-${i}` }));
      expected.push(`modern mix-m-te-${i} tools/call refuse tool-error`);
      calls.push(legacyCall(server.url, sessionId, `mix-l-te-${i}`, 'tools/call', { name: 'refuse', arguments: {} }));
      expected.push(`legacy mix-l-te-${i} tools/call refuse tool-error`);
    }
    calls.push(modernRpc(server.url, 'tools/call', { name: 'echo', arguments: { text: 42 } }, { id: 'mix-m-bad' }));
    calls.push(legacyCall(server.url, sessionId, 'mix-l-bad', 'tools/call', { name: 'nope', arguments: {} }));
    calls.push(legacyCall(server.url, sessionId, 'mix-l-nf', 'no/such/method'));
    calls.push(
      modernRpc(server.url, 'prompts/get', { name: 'greet', arguments: { text: 'Ada' } }, { id: 'mix-m-prompt' }),
    );
    calls.push(legacyCall(server.url, sessionId, 'mix-l-read', 'resources/read', { uri: 'obs://readme' }));
    const answers = (await Promise.all(calls)) as Array<{ json?: Json }>;
    const codeOf = (id: string) => answers.find((a) => a.json?.id === id)!.json!.error.code as number;
    expected.push(
      // Invalid arguments are a tool result with isError (SEP-1303), so the model can correct them.
      'modern mix-m-bad tools/call echo tool-error',
      // Names the server does not have are reported as `_unknown`, never as sent.
      `legacy mix-l-bad tools/call _unknown error ${codeOf('mix-l-bad')}`,
      'legacy mix-l-nf _unknown - error -32601',
      'modern mix-m-prompt prompts/get greet ok',
      'legacy mix-l-read resources/read obs://readme ok',
    );
    assert.equal(codeOf('mix-l-nf'), -32601);
    const seen = audit.lines.filter((line) => line.split(' ')[1]!.startsWith('mix-'));
    assert.deepEqual([...seen].sort(), [...expected].sort());
    assert.equal(new Set(seen).size, seen.length, 'no call reported twice');
    // Nest's EventEmitter2 got the same events.
    const forwarded = listener.finished
      .filter((e) => String(e.requestId).startsWith('mix-'))
      .map((e) => String(e.requestId));
    assert.deepEqual(forwarded.sort(), seen.map((line) => line.split(' ')[1]!).sort());
    await rpc(server.url, null, { httpMethod: 'DELETE', sessionId });
  });

  it('a listener that throws does not break the call it hears of', async () => {
    // A plain synchronous EventEmitter2 listener (Nest's @OnEvent wrappers catch their own errors).
    server.app.get(EventEmitter2).on('mcp.request.started', (event: { requestId: unknown }) => {
      if (event.requestId === 'throws') throw new Error('listener bug');
    });
    const res = await modernRpc(
      server.url,
      'tools/call',
      { name: 'echo', arguments: { text: 'still' } },
      { id: 'throws' },
    );
    assert.equal((res.json as Json).result.content[0].text, 'still');
    assert.ok(audit.lines.some((line) => line.startsWith('modern throws tools/call echo ok')));
  });

  it('request events carry method, tool, era, duration and no argument values by default', async () => {
    await modernRpc(server.url, 'tools/call', { name: 'echo', arguments: { text: 'secret-value' } }, { id: 'shape-1' });
    const started = audit.events.find((e) => e.type === 'request.started' && e.requestId === 'shape-1');
    const finished = audit.events.find(
      (e): e is McpRequestFinishedEvent => e.type === 'request.finished' && e.requestId === 'shape-1',
    )!;
    assert.ok(started);
    assert.equal(finished.method, 'tools/call');
    assert.equal(finished.tool, 'echo');
    assert.equal(finished.era, 'modern');
    assert.equal(finished.protocolVersion, '2026-07-28');
    assert.equal(typeof finished.durationMs, 'number');
    assert.ok(finished.durationMs >= 0);
    assert.equal('arguments' in finished, false);
    assert.equal(JSON.stringify(audit.events).includes('secret-value'), false);
  });

  it('in process: the principal id is on the events, and a call cancelled before its response is "cancelled"', async () => {
    const mcp = McpInProcessTransport.forApp(server.app);
    const _meta = {
      'io.modelcontextprotocol/protocolVersion': '2026-07-28',
      'io.modelcontextprotocol/clientCapabilities': {},
    };
    try {
      await lastValueFrom(
        mcp
          .send(
            {
              jsonrpc: '2.0',
              id: 'ip-1',
              method: 'tools/call',
              params: { name: 'echo', arguments: { text: 'p' }, _meta },
            },
            { principal: { id: 'alice' } },
          )
          .pipe(toArray()),
      );
      const ok = audit.events.find(
        (e) => e.type === 'request.finished' && e.requestId === 'ip-1',
      ) as McpRequestFinishedEvent;
      assert.equal(ok.principal, 'alice');
      assert.equal(ok.outcome, 'ok');
      const started = nextEvent(hangEvents, 'started', 'the hang tool to start');
      const subscription = mcp
        .send(
          { jsonrpc: '2.0', id: 'ip-2', method: 'tools/call', params: { name: 'hang', arguments: {}, _meta } },
          { principal: { id: 'alice' } },
        )
        .subscribe();
      await started;
      subscription.unsubscribe();
      const cancelled = audit.events.filter(
        (e) => e.type === 'request.finished' && e.requestId === 'ip-2',
      ) as McpRequestFinishedEvent[];
      assert.deepEqual(
        cancelled.map((e) => [e.outcome, e.principal, e.tool]),
        [['cancelled', 'alice', 'hang']],
      );
    } finally {
      mcp.close();
    }
  });

  it('session.opened and session.closed (DELETE) with protocol version, client and duration', async () => {
    const sessionId = await openSession(server.url, 'sess-init');
    const opened = audit.events.find((e) => e.type === 'session.opened' && e.sessionId === shown(sessionId));
    assert.deepEqual(
      { ...opened, at: 0 },
      {
        type: 'session.opened',
        at: 0,
        sessionId: shown(sessionId),
        protocolVersion: LEGACY,
        clientInfo: { name: 'audit-test', version: '3' },
      },
    );
    assert.equal(JSON.stringify(audit.events).includes(sessionId), false, 'an event carries the raw session id');
    const del = await rpc(server.url, null, { httpMethod: 'DELETE', sessionId });
    assert.equal(del.status, 200);
    const closed = audit.events.find((e) => e.type === 'session.closed' && e.sessionId === shown(sessionId)) as Extract<
      McpEvent,
      { type: 'session.closed' }
    >;
    assert.equal(closed.reason, 'deleted');
    assert.equal(closed.protocolVersion, LEGACY);
    assert.equal(typeof closed.durationMs, 'number');
  });

  it('list changes are events', async () => {
    const before = audit.events.filter((e) => e.type === 'list.changed').length;
    const registry = server.app.get(McpRegistry);
    assert.equal(registry.disable('echo'), true);
    assert.equal(registry.enable('echo'), true);
    const changes = audit.events.filter((e) => e.type === 'list.changed').slice(before);
    assert.deepEqual(
      changes.map((e) => (e as Extract<McpEvent, { type: 'list.changed' }>).kind),
      ['tools', 'tools'],
    );
  });

  it('an elicitation round trip is reported as requested, then answered with its action (never its content)', async () => {
    const conn = await connectSdkClient(server.url, {
      onElicit: async () => ({ action: 'accept', content: { name: 'Grace-private' } }),
    });
    try {
      const result = (await conn.client.callTool({ name: 'ask_name', arguments: {} })) as Json;
      assert.equal(result.content[0].text, 'hi Grace-private');
      const round = audit.events.filter(
        (e) =>
          (e.type === 'interaction.requested' || e.type === 'interaction.answered') &&
          e.sessionId === shown(conn.sessionId),
      );
      assert.deepEqual(
        round.map((e) => [e.type, (e as Json).interaction, (e as Json).action, (e as Json).tool]),
        [
          ['interaction.requested', 'elicitation/create', undefined, 'ask_name'],
          ['interaction.answered', 'elicitation/create', 'accept', 'ask_name'],
        ],
      );
      assert.equal(JSON.stringify(audit.events).includes('Grace-private'), false);
    } finally {
      await conn.close();
    }
  });
});

describe('events.includeArguments', () => {
  it('puts the call arguments on request events only when the option says so', async () => {
    const server = await startApp(ObservabilityModule.register({ events: { includeArguments: true } }));
    try {
      await modernRpc(server.url, 'tools/call', { name: 'echo', arguments: { text: 'kept' } }, { id: 'args-1' });
      const finished = server.app
        .get(AuditLog)
        .events.find((e) => e.type === 'request.finished' && e.requestId === 'args-1') as McpRequestFinishedEvent;
      assert.deepEqual(finished.arguments, { text: 'kept' });
    } finally {
      await server.close();
    }
  });
});
