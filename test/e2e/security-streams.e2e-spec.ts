import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { InMemoryEventStore } from 'nestjs-model-context';
import { SecurityStreamsModule, gates, nextFloodOutcome } from '../fixtures/security-streams.module.js';
import { startApp, type RunningApp } from '../utils/app.js';
import { META_KEYS, modernHeaders, modernMeta, rpc } from '../utils/clients.js';
import { SseParser, type SseEvent } from '../utils/sse.js';

type Json = Record<string, any>;

const ALICE = 'Bearer alice-token';
const BOB = 'Bearer bob-token';

async function initialize(url: string, token: string, protocolVersion = '2025-11-25'): Promise<string> {
  const res = await rpc(url, {
    jsonrpc: '2.0',
    id: 'init',
    method: 'initialize',
    params: { protocolVersion, capabilities: {}, clientInfo: { name: 'security-streams', version: '0.0.1' } },
  }, { headers: { Authorization: token } });
  assert.equal(res.status, 200, res.text);
  const sessionId = res.headers.get('mcp-session-id');
  assert.ok(sessionId);
  return sessionId;
}

/** An SSE response read as it arrives, so a test can act while the stream is still open. */
class LiveSse {
  readonly events: SseEvent[] = [];
  status = 0;
  ended = false;
  private readonly waiters = new Set<() => void>();
  private readonly controller = new AbortController();
  readonly done: Promise<void>;

  constructor(url: string, init: RequestInit) {
    this.done = this.run(url, init);
  }

  private async run(url: string, init: RequestInit): Promise<void> {
    const parser = new SseParser();
    const decoder = new TextDecoder();
    try {
      const response = await fetch(url, { ...init, signal: this.controller.signal });
      this.status = response.status;
      const reader = response.body!.getReader();
      for (;;) {
        const step = await reader.read();
        if (step.done) break;
        this.events.push(...parser.push(decoder.decode(step.value, { stream: true })));
        this.poke();
      }
      this.events.push(...parser.end());
    } catch {
      // Aborted by the test, or reset by the server: `ended` says the stream is over either way.
    }
    this.ended = true;
    this.poke();
  }

  private poke(): void {
    for (const waiter of [...this.waiters]) waiter();
  }

  /** Resolves once `predicate` holds for the events so far; rejects if the stream ends first. */
  waitFor(predicate: (events: SseEvent[]) => boolean, what: string): Promise<void> {
    return new Promise((resolve, reject) => {
      const check = (): void => {
        if (predicate(this.events)) {
          this.waiters.delete(check);
          resolve();
        } else if (this.ended) {
          this.waiters.delete(check);
          reject(new Error(`The stream ended before ${what}; it carried ${JSON.stringify(this.events.map((e) => e.data))}`));
        }
      };
      this.waiters.add(check);
      check();
    });
  }

  abort(): void {
    this.controller.abort();
  }
}

function legacyHeaders(token: string, sessionId: string, extra: Record<string, string> = {}): Record<string, string> {
  return {
    Authorization: token,
    'Mcp-Session-Id': sessionId,
    'MCP-Protocol-Version': '2025-11-25',
    Accept: 'application/json, text/event-stream',
    ...extra,
  };
}

function callTool(url: string, token: string, sessionId: string, id: number, name: string, args: Json = {}): LiveSse {
  return new LiveSse(url, {
    method: 'POST',
    headers: { ...legacyHeaders(token, sessionId), 'Content-Type': 'application/json' },
    body: JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/call', params: { name, arguments: args } }),
  });
}

function openGet(url: string, token: string, sessionId: string, lastEventId?: string): LiveSse {
  return new LiveSse(url, {
    method: 'GET',
    headers: legacyHeaders(token, sessionId, lastEventId === undefined ? {} : { 'Last-Event-ID': lastEventId }),
  });
}

const hasResult = (id: number) => (events: SseEvent[]) => events.some((e) => (e.data as Json)?.id === id && 'result' in (e.data as Json));
const streamOf = (eventId: string) => eventId.slice(0, eventId.lastIndexOf('.'));

describe('security: resumable streams belong to their session (ISSUE-15 item 3)', () => {
  let server: RunningApp;
  before(async () => {
    server = await startApp(SecurityStreamsModule.register());
  });
  after(() => server.close());

  for (const [label, otherToken] of [
    ['another principal', BOB],
    ['another session of the same principal', ALICE],
  ] as const) {
    it(`a Last-Event-ID of a live stream from ${label} resumes nothing and leaves that stream alone`, { timeout: 20_000 }, async () => {
      const aliceSession = await initialize(server.url, ALICE);
      const otherSession = await initialize(server.url, otherToken);
      gates.length = 0;
      const alice = callTool(server.url, ALICE, aliceSession, 7, 'hold');
      await alice.waitFor((events) => events.some((e) => (e.data as Json)?.method === 'notifications/message'), 'the log message of the held call');
      const aliceEventId = alice.events.find((e) => e.id !== undefined)?.id;
      assert.ok(aliceEventId, 'the resumable POST stream carries event ids');

      const intruder = openGet(server.url, otherToken, otherSession, aliceEventId);
      await intruder.waitFor((events) => events.length > 0, 'the first event of the GET stream');
      assert.equal(intruder.status, 200);
      assert.notEqual(streamOf(intruder.events[0]!.id ?? ''), streamOf(aliceEventId), 'a fresh stream of its own session, not the foreign one');

      gates[0]!.open();
      await alice.waitFor(hasResult(7), "alice's result on her own stream");
      const result = alice.events.find((e) => (e.data as Json)?.id === 7)!.data as Json;
      assert.deepEqual(result.result.content, [{ type: 'text', text: 'result for alice' }]);

      // Ending the intruder's session ends its GET stream: everything it carried is then known.
      const deleted = await rpc(server.url, undefined, { httpMethod: 'DELETE', headers: { Authorization: otherToken }, sessionId: otherSession });
      assert.equal(deleted.status, 200);
      await intruder.done;
      const leaked = intruder.events.filter((e) => e.rawData.includes('holding for') || e.rawData.includes('result for'));
      assert.deepEqual(leaked, [], 'nothing of the foreign stream reached the intruder');
    });
  }
});
