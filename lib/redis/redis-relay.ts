import type { McpEventSink, McpResponseSink } from '../engine/sink.js';
import type { JsonRpcMessage, JsonRpcResponse } from '../protocol/json-rpc.js';
import type { McpRelay, McpRelayStreamRequest } from '../engine/relay.js';
import { describeError, type RedisKeys, RedisScripts, type McpRedisClient, type RedisLogger } from './redis-client.js';
import { newStreamId, parseEventId, type RedisStreamEntry } from './redis-event.store.js';
import { GET_STREAM_OPEN, SEND_TO_SESSION, STREAM_TAIL } from './redis-stream-scripts.js';

export interface RedisRelayOptions {
  instanceId: string;
  maxEventsPerStream: number;
  streamTtlMs: number;
  /** Session idle timeout: the GET-stream index lives as long as its sessions. */
  idleTtlMs: number;
  logger?: RedisLogger;
  /** Publish with SPUBLISH (sharded pub/sub) rather than PUBLISH. @default false */
  shardedPubSub?: boolean;
}

/** Entries read per round trip while a tail catches up. */
const BATCH = 256;

/** One response following a stored stream. */
interface Tail {
  streamId: string;
  sessionId: string;
  events: McpEventSink;
  /** Redis entry id of the last event written (`0` before the first). */
  after: string;
  running: boolean;
  again: boolean;
  closed: boolean;
  timer?: NodeJS.Timeout;
}

/**
 * Cross-instance routing on Redis. Legacy GET streams are tails of Redis Streams: events are
 * appended where they are produced (a change event by the instance that published it, a message
 * for a session by the instance that had it), and every instance that serves a GET for the stream
 * reads from its last written entry whenever it is poked, on every keep-alive tick, and after the
 * pub/sub connection comes back. Reading by position is what makes failover exact: a client that
 * resumes through another instance with `Last-Event-ID` gets every stored event after it, once,
 * including those appended while no instance held its stream.
 *
 * The same tail serves the resume of a POST stream whose call runs on another instance (after
 * `ctx.closeSseStream()`): it follows the call's events until the owner finishes the stream, or
 * ends when the owner's heartbeat is gone (the call died with its instance).
 *
 * @publicApi
 */
export class RedisRelay implements McpRelay {
  private readonly scripts: RedisScripts;
  private readonly tails = new Map<string, Set<Tail>>();
  private readonly responseHandlers = new Set<(response: JsonRpcResponse, sessionId: string | undefined) => boolean>();
  private closed = false;
  private lastWarning = 0;

  constructor(
    private readonly client: McpRedisClient,
    private readonly keys: RedisKeys,
    private readonly options: RedisRelayOptions,
  ) {
    this.scripts = new RedisScripts(client, options.shardedPubSub);
  }

  private get publish(): string {
    return this.options.shardedPubSub ? 'SPUBLISH' : 'PUBLISH';
  }

  async serveStream(sink: McpResponseSink, request: McpRelayStreamRequest): Promise<void> {
    const { sessionId } = request;
    let resumed: { streamId: string; position: string } | undefined;
    if (request.lastEventId !== undefined) {
      const parsed = parseEventId(sessionId, request.lastEventId);
      if (parsed) {
        const exists = (await this.client.call(
          'EXISTS',
          this.keys.stream(parsed.streamId),
          this.keys.streamMeta(parsed.streamId),
        )) as number;
        if (exists > 0) resumed = parsed;
      }
    }
    if (resumed) {
      return this.attach(sink.stream(), resumed.streamId, sessionId, resumed.position, request.keepAliveMs);
    }
    // A new GET stream (or an unknown Last-Event-ID, as with one instance): it replaces the
    // session's previous stream, which ends wherever it is tailed.
    const streamId = newStreamId(sessionId);
    await this.scripts.run(
      GET_STREAM_OPEN,
      [this.keys.getStreams, this.keys.streamMeta(streamId)],
      [sessionId, streamId, this.options.instanceId, this.options.streamTtlMs, this.options.idleTtlMs],
    );
    const events = sink.stream();
    if (request.priming) events.prime(`${streamId}.0`, request.retryMs);
    this.attach(events, streamId, sessionId, '0', request.keepAliveMs);
  }

  async sendToSession(sessionId: string, message: JsonRpcMessage): Promise<boolean> {
    try {
      const sent = await this.scripts.run(
        SEND_TO_SESSION,
        [this.keys.getStreams, this.keys.session(sessionId)],
        [sessionId, JSON.stringify(message), this.options.maxEventsPerStream, this.options.streamTtlMs],
      );
      return sent === 1;
    } catch (error) {
      this.options.logger?.error(
        `Could not send "${methodOf(message)}" to session streams through Redis: ${describeError(error)}`,
      );
      return false;
    }
  }

  async endSessionStream(sessionId: string): Promise<void> {
    for (const set of this.tails.values()) {
      for (const tail of set) if (tail.sessionId === sessionId) this.end(tail);
    }
    try {
      const streamId = (await this.client.call('HGET', this.keys.getStreams, sessionId)) as string | null;
      if (streamId === null) return;
      await this.client.call('HDEL', this.keys.getStreams, sessionId);
      await this.client.call(this.publish, this.keys.relayChannel, `s ${streamId}`);
    } catch (error) {
      this.options.logger?.warn(`Could not end the GET stream of a deleted session in Redis: ${describeError(error)}`);
    }
  }

  async publishResponse(response: JsonRpcResponse, sessionId: string | undefined): Promise<void> {
    try {
      await this.client.call(
        this.publish,
        this.keys.relayChannel,
        `r ${JSON.stringify({ response, sessionId: sessionId ?? null })}`,
      );
    } catch (error) {
      this.options.logger?.error(`Could not route a client's answer through Redis: ${describeError(error)}`);
    }
  }

  onResponse(handler: (response: JsonRpcResponse, sessionId: string | undefined) => boolean): () => void {
    this.responseHandlers.add(handler);
    return () => this.responseHandlers.delete(handler);
  }

  /** Called by the backend for each message on the relay channel. @internal */
  dispatch(raw: string): void {
    if (raw.startsWith('s ')) {
      for (const streamId of raw.slice(2).split(' ')) {
        const set = this.tails.get(streamId);
        if (set) for (const tail of set) this.pump(tail);
      }
    } else if (raw.startsWith('r ')) {
      let payload: { response?: JsonRpcResponse; sessionId?: string | null };
      try {
        payload = JSON.parse(raw.slice(2));
      } catch {
        return;
      }
      if (!payload.response) return;
      for (const handler of this.responseHandlers) {
        if (handler(payload.response, payload.sessionId ?? undefined)) break;
      }
    }
  }

  /** Re-reads every tail: pokes sent while the pub/sub connection was down are lost. @internal */
  catchUp(): void {
    for (const set of this.tails.values()) for (const tail of set) this.pump(tail);
  }

  /** Number of responses following a stream on this instance. */
  get size(): number {
    let n = 0;
    for (const set of this.tails.values()) n += set.size;
    return n;
  }

  endAll(retryMs: number): void {
    for (const set of [...this.tails.values()]) {
      for (const tail of [...set]) {
        if (!tail.events.ended) tail.events.retry?.(retryMs);
        this.end(tail);
      }
    }
  }

  heldStreams(sessionId: string): number {
    let n = 0;
    for (const set of this.tails.values()) for (const tail of set) if (tail.sessionId === sessionId) n++;
    return n;
  }

  async hasGetStreams(sessionIds: readonly string[]): Promise<boolean[]> {
    if (sessionIds.length === 0) return [];
    const streams = (await this.client.call('HMGET', this.keys.getStreams, ...sessionIds)) as Array<string | null>;
    return streams.map((streamId) => streamId !== null);
  }

  close(): void {
    this.closed = true;
    for (const set of [...this.tails.values()]) for (const tail of [...set]) this.end(tail);
    this.tails.clear();
    this.responseHandlers.clear();
  }

  private attach(events: McpEventSink, streamId: string, sessionId: string, after: string, keepAliveMs: number): void {
    const tail: Tail = { streamId, sessionId, events, after, running: false, again: false, closed: false };
    if (this.closed) return this.end(tail);
    let set = this.tails.get(streamId);
    if (!set) this.tails.set(streamId, (set = new Set()));
    set.add(tail);
    // The tick also re-reads: it bounds the delay of an event whose poke was lost, and notices a
    // POST stream whose owner died.
    tail.timer = setInterval(() => {
      if (!events.ended) events.comment();
      this.pump(tail);
    }, keepAliveMs);
    tail.timer.unref();
    events.onClose(() => this.detach(tail));
    this.pump(tail);
  }

  private pump(tail: Tail): void {
    if (tail.closed) return;
    if (tail.running) {
      tail.again = true;
      return;
    }
    tail.running = true;
    this.drain(tail)
      .catch((error) =>
        this.warnThrottled(
          `Could not read SSE stream ${tail.streamId} from Redis (retrying on the next keep-alive): ${describeError(error)}`,
        ),
      )
      .finally(() => {
        tail.running = false;
        if (tail.again) this.pump(tail);
      });
  }

  private async drain(tail: Tail): Promise<void> {
    for (;;) {
      tail.again = false;
      const keys = [
        this.keys.streamMeta(tail.streamId),
        this.keys.stream(tail.streamId),
        this.keys.getStreams,
        this.keys.session(tail.sessionId),
      ];
      const [state, entries] = (await this.scripts.run(STREAM_TAIL, keys, [
        tail.streamId,
        tail.after,
        BATCH,
        tail.sessionId,
      ])) as [string, RedisStreamEntry[]];
      if (tail.closed) return;
      for (const [id, fields] of entries) {
        const index = fields.indexOf('m');
        if (index >= 0) tail.events.event(fields[index + 1], `${tail.streamId}.${id}`);
        tail.after = id;
      }
      if (entries.length === BATCH) continue;
      if (state === 'end') this.end(tail);
      return;
    }
  }

  /** While Redis is away every tail fails on every tick; one line per interval says it. */
  private warnThrottled(message: string): void {
    const now = Date.now();
    if (now - this.lastWarning < 10_000) return;
    this.lastWarning = now;
    this.options.logger?.warn(message);
  }

  private end(tail: Tail): void {
    this.detach(tail);
    if (!tail.events.ended) tail.events.end();
  }

  private detach(tail: Tail): void {
    tail.closed = true;
    clearInterval(tail.timer);
    const set = this.tails.get(tail.streamId);
    if (!set) return;
    set.delete(tail);
    if (set.size === 0) this.tails.delete(tail.streamId);
  }
}

function methodOf(message: JsonRpcMessage): string {
  return 'method' in message && typeof message.method === 'string' ? message.method : 'a response';
}
