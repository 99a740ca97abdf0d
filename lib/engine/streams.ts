import type { McpEventStore } from '../protocol/event-store.js';
import type { JsonRpcMessage } from '../protocol/json-rpc.js';
import { changeNotificationMethod, type McpChangeEvent } from '../protocol/notification-bus.js';
import type { McpRelay } from './relay.js';
import type { McpSession } from '../protocol/session-store.js';
import { supportsPrimingEvents } from '../protocol/versions.js';
import { EventStream } from './event-stream.js';
import type { McpEventSink, McpResponseSink } from './sink.js';

export interface StreamHubOptions {
  eventStore?: McpEventStore;
  relay?: McpRelay;
  /** Interval of keep-alive comments; 0 sends none. */
  keepAliveMs: number;
  retryMs: number;
}

/** A call that may need keep-alives. */
export interface SlowCall {
  since: number;
  beat(): void;
}

/**
 * The streams of legacy sessions: GET streams (change delivery, server messages for a session),
 * resumable POST streams still running (resumption with Last-Event-ID), and the keep-alives of
 * both. Every entry belongs to one session and is dropped when the session ends.
 */
export class StreamHub {
  private readonly getStreams = new Map<string, EventStream>();
  /**
   * Resumable POST streams still running, by stream id, with the session that owns each: an event
   * id resumes a stream only for that session (so for its principal too), since a foreign GET
   * would otherwise take over the stream's response and cancel its call.
   */
  private readonly liveStreams = new Map<string, { stream: EventStream; sessionId: string }>();
  /**
   * Subscriptions of the sessions that have a GET stream here, so that a resource update finds
   * its streams without a session-store read per stream. Filled when the stream opens, kept in
   * step by `resources/subscribe` and `unsubscribe`, dropped when the session ends.
   */
  private readonly streamSubscriptions = new Map<string, Set<string>>();
  /**
   * Calls that may need keep-alives, watched by one shared ticker: a timer per request would be
   * created and cleared on every call, though nearly all answer long before the first beat.
   */
  private readonly slowCalls = new Set<SlowCall>();
  private ticker?: NodeJS.Timeout;
  /** Stored streams whose last writes may still be on their way to the event store. */
  private readonly flushing = new Set<Promise<void>>();

  constructor(private readonly options: StreamHubOptions) {}

  /** Opens a POST call's stream; a resumable one is registered for Last-Event-ID. */
  openCallStream(sink: McpEventSink, sessionId: string | undefined, resumable: boolean): EventStream {
    const streamId = resumable ? this.openStreamSync(sessionId!) : undefined;
    const stream = new EventStream(sink, {
      store: resumable ? this.options.eventStore : undefined,
      streamId,
      priming: resumable,
      retryMs: this.options.retryMs,
    });
    if (streamId !== undefined) this.liveStreams.set(streamId, { stream, sessionId: sessionId! });
    return stream;
  }

  /**
   * The call's stream finished: it can no longer be resumed live. A cancelled call's events go
   * from the store too, once its last writes landed: no response will follow them, and they
   * would otherwise hold their bytes (and count against everyone's bound) until they expire.
   */
  closeCallStream(stream: EventStream | undefined, cancelled = false): void {
    const streamId = stream?.streamId;
    if (streamId === undefined) return;
    this.liveStreams.delete(streamId);
    this.track(stream!);
    const store = this.options.eventStore;
    if (!cancelled || !store?.dropStream) return;
    // Settling never rejects (the stream's chain catches); a store that fails to drop logs it.
    void stream!
      .settled()
      .then(() => store.dropStream!(streamId))
      .catch(() => undefined);
  }

  /**
   * Shutdown: every GET stream and every resumable call stream here ends with a `retry:` hint,
   * so that its client resumes on another instance (Last-Event-ID) while the calls go on writing
   * to the event store. Streams nothing can resume stay open until their call ends.
   */
  drain(): void {
    const retryMs = this.options.retryMs;
    for (const [sessionId, stream] of [...this.getStreams]) {
      if (stream.streamId !== undefined) {
        stream.detach(retryMs);
        this.track(stream);
      } else {
        stream.end();
        this.dropSession(sessionId);
      }
    }
    for (const { stream } of this.liveStreams.values()) stream.detach(retryMs);
    this.options.relay?.endAll?.(retryMs);
  }

  /** Resolves once every stored stream's writes reached the event store. */
  async flushed(): Promise<void> {
    while (this.flushing.size > 0) await Promise.all([...this.flushing]);
  }

  /** Streams this instance holds for a session (its GET stream, its resumable call streams). */
  openStreams(sessionId: string): number {
    let count = this.getStreams.get(sessionId)?.finished === false ? 1 : 0;
    for (const live of this.liveStreams.values()) if (live.sessionId === sessionId && !live.stream.detached) count++;
    return count + (this.options.relay?.heldStreams?.(sessionId) ?? 0);
  }

  private track(stream: EventStream): void {
    const settled: Promise<void> = stream.settled().finally(() => this.flushing.delete(settled));
    this.flushing.add(settled);
  }

  /**
   * A legacy GET: resumes the session's stream after `Last-Event-ID` (a live POST stream, a
   * stored one, or its GET stream), or opens the session's GET stream, replacing the previous one.
   * Another session's event id is treated like an unknown one: a fresh stream of this session.
   */
  async serveGet(
    sink: McpResponseSink,
    session: McpSession,
    protocolVersion: string,
    lastEventId: string | undefined,
  ): Promise<void> {
    const sessionId = session.id;
    const { eventStore, relay } = this.options;
    if (lastEventId !== undefined && eventStore) {
      const live = this.liveStreams.get(lastEventId.slice(0, lastEventId.lastIndexOf('.')));
      if (live?.sessionId === sessionId) {
        const events = this.keepAlive(sink.stream());
        return live.stream.resume(events, sessionId, lastEventId);
      }
      if (relay) return this.relayStream(sink, sessionId, lastEventId, protocolVersion);
      const replay = await eventStore.replay(sessionId, lastEventId);
      if (replay) {
        const events = sink.stream();
        for (const event of replay.events) events.event(JSON.stringify(event.message), event.id);
        const standalone = this.getStreams.get(sessionId);
        if (standalone?.streamId === replay.streamId) {
          standalone.resume(this.keepAlive(events), sessionId, `${replay.streamId}.${Number.MAX_SAFE_INTEGER}`);
          return;
        }
        events.end();
        return;
      }
    }
    if (relay) return this.relayStream(sink, sessionId, undefined, protocolVersion);
    this.getStreams.get(sessionId)?.end();
    this.streamSubscriptions.set(sessionId, new Set(session.subscriptions ?? []));
    const streamId = eventStore ? await eventStore.openStream(sessionId) : undefined;
    const events = sink.stream();
    const stream = new EventStream(events, {
      store: eventStore,
      streamId,
      priming: streamId !== undefined && supportsPrimingEvents(protocolVersion),
      retryMs: this.options.retryMs,
    });
    this.getStreams.set(sessionId, stream);
    this.keepAlive(events);
    events.onClose(() => {
      if (this.getStreams.get(sessionId) !== stream || stream.detached) return;
      if (streamId !== undefined) return stream.detach();
      // Without an event store nothing can resume it: drop it rather than keep a dead entry.
      stream.end();
      this.dropSession(sessionId);
    });
  }

  /**
   * Sends a server-initiated message on a legacy session's GET stream. Returns false when the
   * session has no open stream. With a relay the message goes to the session's stream wherever it
   * is held, and true means it was handed over.
   */
  sendToSession(sessionId: string, message: JsonRpcMessage): boolean {
    const stream = this.getStreams.get(sessionId);
    if (!stream || stream.finished) {
      if (!this.options.relay) return false;
      void this.options.relay.sendToSession(sessionId, message);
      return true;
    }
    stream.send(message);
    return true;
  }

  /** List changes to every GET stream here, resource updates to those subscribed to the URI. */
  deliverChange(event: McpChangeEvent): void {
    // Every entry is a live session's stream (endSession drops the rest), so this costs one step
    // per live stream and no store round trip.
    const method = changeNotificationMethod(event);
    for (const [sessionId, stream] of this.getStreams) {
      if (stream.finished) continue;
      if (event.type === 'resource-updated') {
        if (!this.streamSubscriptions.get(sessionId)?.has(event.uri)) continue;
        stream.send({ jsonrpc: '2.0', method, params: { uri: event.uri } });
      } else {
        stream.send({ jsonrpc: '2.0', method });
      }
    }
  }

  /** Keeps the GET stream's subscription index in step with the session's. */
  subscribed(sessionId: string, uri: string, on: boolean): void {
    const set = this.streamSubscriptions.get(sessionId);
    if (on) set?.add(uri);
    else set?.delete(uri);
  }

  /** The session ended: its GET stream ends, here and wherever the relay tails it. */
  endSession(sessionId: string): void {
    this.getStreams.get(sessionId)?.end();
    this.dropSession(sessionId);
    void this.options.relay?.endSessionStream(sessionId);
  }

  /** Sends `:` comments on calls running longer than keepAliveMs (switching them to a stream). */
  watchSlowCall(call: SlowCall): void {
    const every = this.options.keepAliveMs;
    if (every <= 0) return;
    this.slowCalls.add(call);
    if (this.ticker) return;
    this.ticker = setInterval(
      () => {
        const due = Date.now() - every;
        for (const slow of this.slowCalls) {
          if (slow.since > due) continue;
          slow.since = Date.now();
          slow.beat();
        }
        if (this.slowCalls.size === 0) {
          clearInterval(this.ticker);
          this.ticker = undefined;
        }
      },
      Math.max(100, Math.floor(every / 2)),
    );
    this.ticker.unref();
  }

  unwatchSlowCall(call: SlowCall): void {
    this.slowCalls.delete(call);
  }

  close(): void {
    clearInterval(this.ticker);
    this.ticker = undefined;
    this.slowCalls.clear();
    for (const stream of this.getStreams.values()) stream.end();
    this.getStreams.clear();
    this.liveStreams.clear();
    this.streamSubscriptions.clear();
  }

  private dropSession(sessionId: string): void {
    this.getStreams.delete(sessionId);
    this.streamSubscriptions.delete(sessionId);
  }

  private keepAlive(events: McpEventSink): McpEventSink {
    const every = this.options.keepAliveMs;
    if (every <= 0) return events;
    const timer = setInterval(() => !events.ended && events.comment(), every);
    timer.unref();
    events.onClose(() => clearInterval(timer));
    return events;
  }

  /** With a relay, legacy GET streams are tails of the shared event store (see McpRelay). */
  private relayStream(
    sink: McpResponseSink,
    sessionId: string,
    lastEventId: string | undefined,
    protocolVersion: string,
  ): Promise<void> {
    return this.options.relay!.serveStream(sink, {
      sessionId,
      lastEventId,
      priming: supportsPrimingEvents(protocolVersion),
      retryMs: this.options.retryMs,
      keepAliveMs: this.options.keepAliveMs,
    });
  }

  /** Stream ids are random, so they can be minted without awaiting a shared store. */
  private openStreamSync(sessionId: string): string {
    const opened = this.options.eventStore!.openStream(sessionId);
    if (typeof opened === 'string') return opened;
    throw new Error('McpEventStore.openStream must return the stream id synchronously.');
  }
}
