import type { McpEventStore } from '../protocol/event-store.js';
import type { JsonRpcMessage } from '../protocol/json-rpc.js';
import { serializeMessage } from '../protocol/serialize.js';
import type { McpEventSink } from './sink.js';

export interface EventStreamOptions {
  /** Resumable streams store every event and number it. */
  store?: McpEventStore;
  streamId?: string;
  /** Send a priming event first (2025-11-25+ clients only: older ones choke on empty data). */
  priming: boolean;
  /** The `retry:` hint sent with the priming event. */
  retryMs: number;
}

/**
 * One stream of events. Writes are chained so that ids stay in order even with an async event
 * store. A resumable stream can be detached from its sink (the server closes it; the call goes
 * on) and later attached to a GET that resumes with Last-Event-ID.
 */
export class EventStream {
  private sink: McpEventSink | undefined;
  private tail: Promise<void> = Promise.resolve();
  private ended = false;
  /** Bytes of events waiting in the chain, not yet handed to the sink. */
  private queued = 0;

  constructor(
    sink: McpEventSink,
    private readonly options: EventStreamOptions,
  ) {
    this.sink = sink;
    if (options.priming && options.streamId !== undefined) sink.prime(`${options.streamId}.0`, options.retryMs);
  }

  get streamId(): string | undefined {
    return this.options.streamId;
  }

  get detached(): boolean {
    return this.sink === undefined && !this.ended;
  }

  get finished(): boolean {
    return this.ended;
  }

  send(message: JsonRpcMessage): void {
    this.enqueue(message, false);
  }

  /** Sends the final message and ends the stream. */
  end(message?: JsonRpcMessage): void {
    if (this.ended) return;
    this.ended = true;
    if (message) this.enqueue(message, true);
    else this.tail = this.tail.then(() => this.closeSink());
    // A store that fails here (Redis gone) only loses the early "finished" mark: the stream
    // expires on its own. Nothing awaits the chain, so a rejection must not escape it.
    this.tail = this.tail.then(() => this.options.store?.finish?.(this.options.streamId ?? '')).catch(() => undefined);
  }

  comment(): void {
    if (this.sink && !this.ended) this.sink.comment();
  }

  /**
   * Ends the current sink but keeps the stream alive for a later resume; with `retryMs`, tells
   * the client how soon to reconnect first (shutdown: it resumes on another instance).
   */
  detach(retryMs?: number): void {
    if (!this.options.store || this.ended) return;
    this.tail = this.tail.then(() => {
      const sink = this.sink;
      this.sink = undefined;
      if (retryMs !== undefined && sink && !sink.ended) sink.retry?.(retryMs);
      sink?.end();
    });
  }

  /** Resolves once every write queued so far, and any queued while waiting, reached the store and the sink. */
  async settled(): Promise<void> {
    let tail: Promise<void>;
    do {
      tail = this.tail;
      await tail;
    } while (tail !== this.tail);
  }

  /**
   * Continues a detached stream on a resuming sink: replays what the client missed, then forwards
   * live events. Done in the write chain, so no event falls between the replay and the live tail.
   */
  resume(sink: McpEventSink, sessionId: string, lastEventId: string): void {
    this.tail = this.tail
      .then(async () => {
        const replay = await this.options.store?.replay(sessionId, lastEventId);
        for (const event of replay?.events ?? []) sink.event(JSON.stringify(event.message), event.id);
        this.sink?.end();
        this.sink = sink;
        if (this.ended) this.closeSink();
      })
      .catch(() => {
        // The store could not replay (Redis gone): end the resuming sink, and the client resumes
        // again later; the stream stays detached and its events stored.
        if (!sink.ended) sink.end();
      });
  }

  private enqueue(message: JsonRpcMessage, last: boolean): void {
    const data = serializeMessage(message);
    // Events wait in the chain while earlier appends are in flight (a Redis round trip each), so
    // they count against the sink's buffer cap as if written: past it the sink closes, and its
    // close cancels the call.
    const size = data.length;
    if (!last && this.sink?.hold && !this.sink.hold(this.queued + size)) return;
    this.queued += size;
    this.tail = this.tail
      .then(async () => {
        const id =
          this.options.store && this.options.streamId !== undefined
            ? await this.options.store.append(this.options.streamId, message)
            : undefined;
        this.queued -= size;
        const sink = this.sink;
        if (sink && !sink.ended) sink.event(data, id);
        if (last) this.closeSink();
      })
      .catch(() => {
        this.queued -= size;
        this.closeSink();
      });
  }

  private closeSink(): void {
    const sink = this.sink;
    this.sink = undefined;
    if (sink && !sink.ended) sink.end();
  }
}
