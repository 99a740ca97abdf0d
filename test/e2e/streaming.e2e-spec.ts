import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, it } from 'node:test';
import {
  LoggingMessageNotificationSchema,
  ToolListChangedNotificationSchema,
} from '@modelcontextprotocol/sdk/types.js';
import type { LoggerService } from '@nestjs/common';
import { Emit, McpRegistry } from 'nestjs-model-context';
import { Observable } from 'rxjs';
import { InteractiveModule, events, fixtureEvents } from '../fixtures/interactive.module.js';
import { startApp, type RunningApp } from '../utils/app.js';
import { connectModernClient, connectSdkClient, modernHeaders, modernMeta, modernRpc, rpc } from '../utils/clients.js';
import { readSse, type SseEvent } from '../utils/sse.js';
import { Watched, nextEvent, watchGetStreams } from '../utils/wait.js';

type Json = Record<string, any>;

const ACCEPT = { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream' };

async function legacySession(url: string, capabilities: Json = {}): Promise<string> {
  const init = await rpc(url, {
    jsonrpc: '2.0',
    id: 0,
    method: 'initialize',
    params: { protocolVersion: '2025-11-25', capabilities, clientInfo: { name: 'raw', version: '1' } },
  });
  const sessionId = init.headers.get('mcp-session-id')!;
  await rpc(url, { jsonrpc: '2.0', method: 'notifications/initialized' }, { sessionId });
  return sessionId;
}

function legacyHeaders(sessionId: string): Record<string, string> {
  return { ...ACCEPT, 'Mcp-Session-Id': sessionId, 'MCP-Protocol-Version': '2025-11-25' };
}

/** The next teardown of the `slow` tool (listen before starting the call). */
const nextTeardown = (): Promise<unknown> =>
  nextEvent(fixtureEvents, 'slow:teardown', 'the slow tool was never torn down');

describe('streaming and interactivity', () => {
  let server: RunningApp;
  before(async () => {
    server = await startApp(InteractiveModule.register());
  });
  after(() => server.close());

  describe('progress from an Observable handler', () => {
    it('arrives in order before the result (SDK 1.32, legacy era)', async () => {
      const conn = await connectSdkClient(server.url);
      try {
        const seen: number[] = [];
        const result = await conn.client.callTool({ name: 'count', arguments: { n: 5 } }, undefined, {
          onprogress: (p) => seen.push(p.progress),
        });
        assert.deepEqual(seen, [1, 2, 3, 4, 5]);
        assert.equal((result.content as Json[])[0].text, 'counted to 5');
      } finally {
        await conn.close();
      }
    });

    it('arrives in order before the result (client 2.4, modern era)', async () => {
      const conn = await connectModernClient(server.url);
      try {
        const seen: number[] = [];
        const result = await conn.client.callTool(
          { name: 'count', arguments: { n: 4 } },
          { onprogress: (p: { progress: number }) => seen.push(p.progress) },
        );
        assert.deepEqual(seen, [1, 2, 3, 4]);
        assert.equal((result.content as Json[])[0].text, 'counted to 4');
      } finally {
        await conn.close();
      }
    });
  });

  describe('logging', () => {
    it('honours logging/setLevel on the legacy era', async () => {
      const conn = await connectSdkClient(server.url);
      try {
        const levels: string[] = [];
        conn.client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => void levels.push(n.params.level));
        await conn.client.setLoggingLevel('warning');
        await conn.client.callTool({ name: 'log_levels', arguments: {} });
        assert.deepEqual(levels, ['warning', 'error']);
      } finally {
        await conn.close();
      }
    });

    it('logs on the modern era only at or above the request logLevel, and never without one', async () => {
      const withLevel = await modernRpc(server.url, 'tools/call', {
        name: 'log_levels',
        arguments: {},
        _meta: { 'io.modelcontextprotocol/logLevel': 'info' },
      });
      const levels = withLevel
        .events!.map((e) => e.data as Json)
        .filter((m) => m.method === 'notifications/message')
        .map((m) => m.params.level);
      assert.deepEqual(levels, ['info', 'warning', 'error']);
      const without = await modernRpc(server.url, 'tools/call', { name: 'log_levels', arguments: {} });
      assert.equal(without.events, undefined);
      assert.equal((without.json as Json).result.content[0].text, 'logged');
    });

    it('refuses an unknown modern logLevel with -32602', async () => {
      const res = await modernRpc(server.url, 'tools/call', {
        name: 'log_levels',
        arguments: {},
        _meta: { 'io.modelcontextprotocol/logLevel': 'loud' },
      });
      assert.equal(res.status, 400);
      assert.equal((res.json as Json).error.code, -32602);
    });
  });

  describe('cancellation', () => {
    it('tears down a running Observable on notifications/cancelled and sends nothing more', async () => {
      const sessionId = await legacySession(server.url);
      const before = events.filter((e) => e === 'slow:teardown').length;
      const tornDown = nextTeardown();
      const response = await fetch(server.url, {
        method: 'POST',
        headers: legacyHeaders(sessionId),
        body: JSON.stringify({
          jsonrpc: '2.0',
          id: 'slow-1',
          method: 'tools/call',
          params: { name: 'slow', arguments: {}, _meta: { progressToken: 'p' } },
        }),
      });
      const collected: SseEvent[] = [];
      const reading = readSse(response.body, {
        timeoutMs: 60_000,
        onEvent: (event) => {
          collected.push(event);
          if ((event.data as Json)?.method === 'notifications/progress') {
            void rpc(
              server.url,
              { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 'slow-1', reason: 'test' } },
              { sessionId },
            );
          }
        },
      });
      const result = await reading;
      assert.equal(result.timedOut, false, 'the stream must end after cancellation');
      await tornDown;
      assert.equal(events.filter((e) => e === 'slow:teardown').length, before + 1);
      assert.ok(!collected.some((e) => (e.data as Json)?.id === 'slow-1'), 'no response may follow a cancellation');
      // A late or unknown cancel changes nothing.
      const late = await rpc(
        server.url,
        { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 'slow-1' } },
        { sessionId },
      );
      assert.equal(late.status, 202);
    });

    it('tears down on client disconnect mid-stream (legacy era)', async () => {
      const sessionId = await legacySession(server.url);
      const tornDown = nextTeardown();
      const controller = new AbortController();
      const response = await fetch(server.url, {
        method: 'POST',
        headers: legacyHeaders(sessionId),
        body: JSON.stringify({
          jsonrpc: '2.0',
          id: 9,
          method: 'tools/call',
          params: { name: 'slow', arguments: {}, _meta: { progressToken: 'q' } },
        }),
        signal: controller.signal,
      });
      const reader = response.body!.getReader();
      await reader.read();
      controller.abort();
      await tornDown;
    });

    it('cancels through the SDK client AbortSignal', async () => {
      const conn = await connectSdkClient(server.url);
      try {
        const tornDown = nextTeardown();
        const controller = new AbortController();
        const call = conn.client.callTool({ name: 'slow', arguments: {} }, undefined, {
          signal: controller.signal,
          onprogress: () => controller.abort(),
        });
        await assert.rejects(call);
        await tornDown;
      } finally {
        await conn.close();
      }
    });
  });

  for (const platform of ['express', 'fastify'] as const) {
    describe(`a cancelled call ends silently (${platform})`, () => {
      // Regression: a dropped stream completed the handler's Observable empty, Nest took its last
      // value and logged "[ExceptionsHandler] no elements in sequence" (rxjs EmptyError) per abort.
      const errors: string[] = [];
      const logger: LoggerService = {
        log: () => undefined,
        warn: () => undefined,
        error: (message: unknown, ...rest: unknown[]) => void errors.push([message, ...rest].map(String).join(' ')),
      };
      let quiet: RunningApp;
      before(async () => {
        quiet = await startApp(InteractiveModule.register(), { logger, platform });
      });
      after(() => quiet.close());
      beforeEach(() => void errors.splice(0));

      /** The call is torn down (the event), then a full round trip on the same app: the error line, if any, is logged within the abort's own turn. */
      async function assertSilent(tornDown: Promise<unknown>, sessionId?: string): Promise<void> {
        await tornDown;
        const ping = sessionId
          ? await rpc(quiet.url, { jsonrpc: '2.0', id: 'after', method: 'tools/list' }, { sessionId })
          : await modernRpc(quiet.url, 'tools/list');
        assert.equal(ping.status, 200);
        assert.deepEqual(errors.splice(0), [], 'a cancelled call must log nothing as an error');
      }

      async function startSlow(
        headers: Record<string, string>,
        body: Json,
        controller: AbortController,
      ): Promise<void> {
        const response = await fetch(quiet.url, {
          method: 'POST',
          headers: { ...ACCEPT, ...headers },
          body: JSON.stringify(body),
          signal: controller.signal,
        });
        assert.equal(response.status, 200);
        await response.body!.getReader().read();
      }

      it('when a 2026-07-28 client aborts the HTTP request mid-call', async () => {
        const tornDown = nextTeardown();
        const controller = new AbortController();
        await startSlow(
          modernHeaders('tools/call', 'slow'),
          {
            jsonrpc: '2.0',
            id: 'm-abort',
            method: 'tools/call',
            params: { name: 'slow', arguments: {}, _meta: modernMeta({ progressToken: 'm' }) },
          },
          controller,
        );
        controller.abort();
        await assertSilent(tornDown);
      });

      it('when a legacy client aborts the HTTP request mid-call', async () => {
        const sessionId = await legacySession(quiet.url);
        const tornDown = nextTeardown();
        const controller = new AbortController();
        await startSlow(
          legacyHeaders(sessionId),
          {
            jsonrpc: '2.0',
            id: 'l-abort',
            method: 'tools/call',
            params: { name: 'slow', arguments: {}, _meta: { progressToken: 'l' } },
          },
          controller,
        );
        controller.abort();
        await assertSilent(tornDown, sessionId);
      });

      it('an Observable handler that emits only progress is an empty result, not a logged EmptyError', async () => {
        quiet.app.get(McpRegistry).addTool({
          name: 'progress_only',
          description: 'Reports progress and produces no value.',
          handler: () =>
            new Observable((subscriber) => (subscriber.next(Emit.progress(1, 1, 'done')), subscriber.complete())),
        });
        const answer = await modernRpc(quiet.url, 'tools/call', {
          name: 'progress_only',
          arguments: {},
          _meta: { progressToken: 'e' },
        });
        const response = answer.events!.map((e) => e.data as Json).find((m) => m.id !== undefined)!;
        assert.equal(response.error, undefined, JSON.stringify(response));
        assert.notEqual(response.result.isError, true, JSON.stringify(response.result));
        assert.deepEqual(response.result.content, []);
        assert.deepEqual(errors.splice(0), [], 'an empty handler must log nothing as an error');
      });

      it('when a legacy client sends notifications/cancelled', async () => {
        const sessionId = await legacySession(quiet.url);
        const tornDown = nextTeardown();
        const response = await fetch(quiet.url, {
          method: 'POST',
          headers: legacyHeaders(sessionId),
          body: JSON.stringify({
            jsonrpc: '2.0',
            id: 'l-cancel',
            method: 'tools/call',
            params: { name: 'slow', arguments: {}, _meta: { progressToken: 'c' } },
          }),
        });
        await response.body!.getReader().read();
        const cancel = await rpc(
          quiet.url,
          { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 'l-cancel', reason: 'test' } },
          { sessionId },
        );
        assert.equal(cancel.status, 202);
        await assertSilent(tornDown, sessionId);
      });
    });
  }

  describe('elicitation, sampling and roots on the legacy era (real server-to-client requests)', () => {
    it('round-trips elicitation into a validated DTO', async () => {
      const conn = await connectSdkClient(server.url, {
        onElicit: async (params) => {
          assert.equal(params.message, 'Really do it?');
          assert.deepEqual(Object.keys((params as Json).requestedSchema.properties).sort(), ['confirm', 'reason']);
          return { action: 'accept', content: { confirm: true, reason: 'tests' } };
        },
      });
      try {
        const result = await conn.client.callTool({ name: 'confirm', arguments: {} });
        assert.equal((result.content as Json[])[0].text, 'confirmed=true (dto) reason=tests');
      } finally {
        await conn.close();
      }
    });

    it('passes decline through', async () => {
      const conn = await connectSdkClient(server.url, { onElicit: async () => ({ action: 'decline' }) });
      try {
        const result = await conn.client.callTool({ name: 'confirm', arguments: {} });
        assert.equal((result.content as Json[])[0].text, 'user chose decline');
      } finally {
        await conn.close();
      }
    });

    it('round-trips sampling and roots', async () => {
      const conn = await connectSdkClient(server.url, {
        onSample: async () => ({
          role: 'assistant',
          content: { type: 'text', text: '42' },
          model: 'test-model',
          stopReason: 'endTurn',
        }),
        onRoots: async () => ({ roots: [{ uri: 'file:///a', name: 'A' }, { uri: 'file:///b' }] }),
      });
      try {
        const sampled = await conn.client.callTool({ name: 'ask_model', arguments: { prompt: 'meaning?' } });
        assert.equal((sampled.content as Json[])[0].text, 'model test-model said: 42');
        const roots = await conn.client.callTool({ name: 'list_roots', arguments: {} });
        assert.equal((roots.content as Json[])[0].text, 'file:///a,file:///b');
      } finally {
        await conn.close();
      }
    });

    it('fails with a readable tool error when the client lacks the capability', async () => {
      const conn = await connectSdkClient(server.url);
      try {
        const result = await conn.client.callTool({ name: 'ask_model', arguments: { prompt: 'x' } });
        assert.equal(result.isError, true);
        assert.match((result.content as Json[])[0].text, /sampling/);
      } finally {
        await conn.close();
      }
    });

    it('times out cleanly when the client never answers', async () => {
      const sessionId = await legacySession(server.url, { elicitation: {} });
      const res = await rpc(
        server.url,
        { jsonrpc: '2.0', id: 't', method: 'tools/call', params: { name: 'confirm', arguments: {} } },
        {
          headers: legacyHeaders(sessionId),
          timeoutMs: 15_000, // a guard: the server's own 2 s clientRequestTimeoutMs ends the call
        },
      );
      assert.equal(res.timedOut, false, 'the server ended the call itself');
      const messages = res.events!.filter((e) => e.data !== '').map((e) => e.data as Json);
      assert.equal(messages[0].method, 'elicitation/create');
      const final = messages.at(-1)!;
      assert.equal(final.id, 't');
      assert.equal(final.result.isError, true);
      assert.match(final.result.content[0].text, /did not answer/);
    });
  });

  describe('elicitation, sampling and roots on the modern era (input_required)', () => {
    it('round-trips through the official client', async () => {
      const conn = await connectModernClient(server.url, {
        onElicit: async () => ({ action: 'accept', content: { confirm: false } }),
        onSample: async () => ({ role: 'assistant', content: { type: 'text', text: 'hi' }, model: 'm' }),
        onRoots: async () => ({ roots: [{ uri: 'file:///r' }] }),
      });
      try {
        const elicited = await conn.client.callTool({ name: 'confirm', arguments: {} });
        assert.equal((elicited.content as Json[])[0].text, 'confirmed=false (dto) reason=-');
        const sampled = await conn.client.callTool({ name: 'ask_model', arguments: { prompt: 'p' } });
        assert.equal((sampled.content as Json[])[0].text, 'model m said: hi');
        const roots = await conn.client.callTool({ name: 'list_roots', arguments: {} });
        assert.equal((roots.content as Json[])[0].text, 'file:///r');
      } finally {
        await conn.close();
      }
    });

    it('runs several rounds with a rotating requestState, and rejects a tampered or replayed one', async () => {
      const caps = { 'io.modelcontextprotocol/clientCapabilities': { elicitation: {} } };
      const r1 = (await modernRpc(server.url, 'tools/call', { name: 'two_questions', arguments: {}, _meta: caps }))
        .json as Json;
      assert.equal(r1.result.resultType, 'input_required');
      assert.deepEqual(Object.keys(r1.result.inputRequests), ['name']);
      assert.equal(r1.result.inputRequests.name.method, 'elicitation/create');
      const state1: string = r1.result.requestState;
      const r2 = (
        await modernRpc(server.url, 'tools/call', {
          name: 'two_questions',
          arguments: {},
          inputResponses: { name: { action: 'accept', content: { name: 'Ada' } } },
          requestState: state1,
          _meta: caps,
        })
      ).json as Json;
      assert.equal(r2.result.resultType, 'input_required');
      assert.deepEqual(Object.keys(r2.result.inputRequests), ['color']);
      assert.notEqual(r2.result.requestState, state1);
      const r3 = (
        await modernRpc(server.url, 'tools/call', {
          name: 'two_questions',
          arguments: {},
          inputResponses: { color: { action: 'accept', content: { color: 'blue' } } },
          requestState: r2.result.requestState,
          _meta: caps,
        })
      ).json as Json;
      assert.equal(r3.result.resultType, 'complete');
      assert.equal(r3.result.content[0].text, 'Ada likes blue');

      const replayed = (
        await modernRpc(server.url, 'tools/call', {
          name: 'two_questions',
          arguments: {},
          inputResponses: { color: { action: 'accept', content: { color: 'red' } } },
          requestState: r2.result.requestState,
          _meta: caps,
        })
      ).json as Json;
      assert.equal(replayed.error.code, -32602);
      assert.match(replayed.error.message, /already used/);

      const fresh = (await modernRpc(server.url, 'tools/call', { name: 'two_questions', arguments: {}, _meta: caps }))
        .json as Json;
      const tampered = (
        await modernRpc(server.url, 'tools/call', {
          name: 'two_questions',
          arguments: {},
          inputResponses: { name: { action: 'accept', content: { name: 'Eve' } } },
          requestState: `${fresh.result.requestState}x`,
          _meta: caps,
        })
      ).json as Json;
      assert.equal(tampered.error.code, -32602);
    });

    it('re-asks instead of failing on a malformed answer', async () => {
      const caps = { 'io.modelcontextprotocol/clientCapabilities': { elicitation: {} } };
      for (const answer of [12345, null, { action: 'accept', content: { confirm: 'not a boolean' } }]) {
        const res = (
          await modernRpc(server.url, 'tools/call', {
            name: 'confirm',
            arguments: {},
            inputResponses: { 'elicitation-1': answer },
            _meta: caps,
          })
        ).json as Json;
        assert.equal(res.result.resultType, 'input_required', JSON.stringify(answer));
      }
    });

    it('answers -32021 (HTTP 400) when the request lacks the needed capability', async () => {
      const res = await modernRpc(server.url, 'tools/call', { name: 'ask_model', arguments: { prompt: 'x' } });
      assert.equal(res.status, 400);
      assert.equal((res.json as Json).error.code, -32021);
      assert.deepEqual((res.json as Json).error.data, { requiredCapabilities: { sampling: {} } });
    });
  });

  describe('resumable legacy streams', () => {
    it('replays exactly the missed events after Last-Event-ID', async () => {
      const sessionId = await legacySession(server.url);
      const response = await fetch(server.url, {
        method: 'POST',
        headers: legacyHeaders(sessionId),
        body: JSON.stringify({
          jsonrpc: '2.0',
          id: 'r',
          method: 'tools/call',
          params: { name: 'resumable', arguments: {}, _meta: { progressToken: 'rt' } },
        }),
      });
      const first = await readSse(response.body, { timeoutMs: 60_000 });
      assert.equal(first.timedOut, false, 'the server closes the stream itself');
      const [priming, ...rest] = first.events;
      assert.ok(priming.id, 'priming event carries an id');
      assert.equal(priming.data, '');
      assert.ok(priming.retry !== undefined);
      const seenBefore = rest.map((e) => (e.data as Json).params.progress);
      assert.deepEqual(seenBefore, [1]);
      const lastId = rest.at(-1)!.id!;
      // Resumed at once, as a client does: what was stored replays, the rest follows live.
      const resumed = await fetch(server.url, {
        method: 'GET',
        headers: { ...legacyHeaders(sessionId), 'Last-Event-ID': lastId },
      });
      const second = await readSse(resumed.body, { timeoutMs: 60_000 });
      assert.equal(second.timedOut, false, 'the resumed stream ends with the result');
      const messages = second.events.map((e) => e.data as Json);
      assert.deepEqual(
        messages.filter((m) => m.method).map((m) => m.params.progress),
        [2, 3, 4],
      );
      assert.equal(messages.filter((m) => m.id === 'r').length, 1);
      assert.equal(messages.at(-1)!.result.content[0].text, 'resumed');
      const ids = second.events.map((e) => e.id);
      assert.equal(new Set(ids).size, ids.length, 'no event twice');
    });

    it('sends no priming event to clients older than 2025-11-25', async () => {
      const init = await rpc(server.url, {
        jsonrpc: '2.0',
        id: 0,
        method: 'initialize',
        params: { protocolVersion: '2025-06-18', capabilities: {} },
      });
      const sessionId = init.headers.get('mcp-session-id')!;
      const res = await rpc(
        server.url,
        {
          jsonrpc: '2.0',
          id: 1,
          method: 'tools/call',
          params: { name: 'count', arguments: { n: 2 }, _meta: { progressToken: 'x' } },
        },
        {
          headers: { 'Mcp-Session-Id': sessionId, 'MCP-Protocol-Version': '2025-06-18' },
        },
      );
      assert.ok(
        res.events!.every((e) => e.data !== ''),
        'no empty-data event',
      );
    });
  });

  describe('change notifications', () => {
    it('streams list_changed to a modern subscriptions/listen stream, tagged and filtered', async () => {
      const listen = (filter: Json, id: string) =>
        fetch(server.url, {
          method: 'POST',
          headers: { ...ACCEPT, ...modernHeaders('subscriptions/listen') },
          body: JSON.stringify({
            jsonrpc: '2.0',
            id,
            method: 'subscriptions/listen',
            params: { notifications: filter, _meta: modernMeta() },
          }),
        });
      const tools = await listen({ toolsListChanged: true }, 'L1');
      const prompts = await listen({ promptsListChanged: true }, 'L2');
      const toolFrames: SseEvent[] = [];
      const promptFrames: SseEvent[] = [];
      const frames = new Watched();
      const toolReading = readSse(tools.body, {
        timeoutMs: 60_000,
        onEvent: (e) => (toolFrames.push(e), frames.notify()),
        until: (_e, all) => all.length >= 2,
      });
      // Read until a prompt change that comes after the tool change: a tool change leaking into
      // this stream would arrive before it.
      const promptReading = readSse(prompts.body, {
        timeoutMs: 60_000,
        onEvent: (e) => (promptFrames.push(e), frames.notify()),
        until: (_e, all) => all.length >= 2,
      });
      await frames.until(() => toolFrames.length >= 1 && promptFrames.length >= 1, 'both listen streams acknowledged');
      await modernRpc(server.url, 'tools/call', { name: 'add_tool', arguments: { prompt: `dyn_${Date.now()}` } });
      assert.equal((await toolReading).timedOut, false, 'list_changed reached the tools listener');
      server.app
        .get(McpRegistry)
        .addPrompt({ name: `marker_${Date.now()}`, description: 'Marker.', handler: () => 'marker' });
      assert.equal((await promptReading).timedOut, false, 'list_changed reached the prompts listener');
      const [ack, change] = toolFrames.map((e) => e.data as Json);
      assert.equal(ack.method, 'notifications/subscriptions/acknowledged');
      assert.deepEqual(ack.params.notifications, { toolsListChanged: true });
      assert.equal(ack.params._meta['io.modelcontextprotocol/subscriptionId'], 'L1');
      assert.equal(change.method, 'notifications/tools/list_changed');
      assert.equal(change.params._meta['io.modelcontextprotocol/subscriptionId'], 'L1');
      assert.deepEqual(
        promptFrames.map((e) => (e.data as Json).method),
        ['notifications/subscriptions/acknowledged', 'notifications/prompts/list_changed'],
      );
    });

    it('sends list_changed to legacy sessions on their GET stream', async () => {
      const streams = watchGetStreams();
      const conn = await connectSdkClient(server.url, { fetch: streams.fetch });
      try {
        let changed = 0;
        const changes = new Watched();
        conn.client.setNotificationHandler(ToolListChangedNotificationSchema, () => (changed++, changes.notify()));
        await streams.opened();
        await conn.client.callTool({ name: 'add_tool', arguments: { prompt: `dyn_legacy_${Date.now()}` } });
        await changes.until(() => changed >= 1, 'list_changed on the GET stream');
        assert.equal(changed, 1);
      } finally {
        await conn.close();
      }
    });
  });
});
