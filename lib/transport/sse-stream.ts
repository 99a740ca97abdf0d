import type { ServerResponse } from 'node:http';
import type { McpEventStore } from '../protocol/event-store.js';
import type { JsonRpcMessage } from '../protocol/json-rpc.js';
import { serializeMessage } from '../protocol/serialize.js';
import { SSE_HEADERS, writeFlushed } from './sse.js';

export interface SseStreamOptions {
  /** Resumable streams store every event and number it. */
  store?: McpEventStore;
  streamId?: string;
  /** Send a priming event first (2025-11-25+ clients only: older ones choke on empty data). */
  priming: boolean;
  /** The `retry:` hint sent with the priming event. */
  retryMs: number;
  headers?: Record<string, string>;
}

/**
 * One SSE response stream. Writes are chained so that ids stay in order even with an async event
 * store. A resumable stream can be detached from its HTTP response (the server closes it; the call
 * goes on) and later attached to a GET that resumes with Last-Event-ID.
 */
export class SseStream {
  private res: ServerResponse | undefined;
  private tail: Promise<void> = Promise.resolve();
  private ended = false;

  constructor(
    res: ServerResponse,
    private readonly options: SseStreamOptions,
  ) {
    this.res = res;
    res.writeHead(200, { ...SSE_HEADERS, ...options.headers });
    if (options.priming && options.streamId !== undefined) {
      writeFlushed(res, `id: ${options.streamId}.0\nretry: ${options.retryMs}\ndata: \n\n`);
    } else {
      res.flushHeaders();
    }
  }

  get streamId(): string | undefined {
    return this.options.streamId;
  }

  get detached(): boolean {
    return this.res === undefined && !this.ended;
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
    else this.tail = this.tail.then(() => this.closeResponse());
    this.tail = this.tail.then(() => this.options.store?.finish?.(this.options.streamId ?? ''));
  }

  comment(): void {
    if (this.res && !this.ended) writeFlushed(this.res, ':\n\n');
  }

  /** Ends the HTTP response but keeps the stream alive for a later resume. */
  detach(): void {
    if (!this.options.store || this.ended) return;
    this.tail = this.tail.then(() => {
      const res = this.res;
      this.res = undefined;
      res?.end();
    });
  }

  /**
   * Continues a detached stream on a resuming GET response (headers already written): replays
   * what the client missed, then forwards live events. Done in the write chain, so no event
   * falls between the replay and the live tail.
   */
  resume(res: ServerResponse, sessionId: string, lastEventId: string): void {
    this.tail = this.tail.then(async () => {
      const replay = await this.options.store?.replay(sessionId, lastEventId);
      for (const event of replay?.events ?? []) {
        writeFlushed(res, `id: ${event.id}\nevent: message\ndata: ${JSON.stringify(event.message)}\n\n`);
      }
      this.res?.end();
      this.res = res;
      if (this.ended) this.closeResponse();
    });
  }

  private enqueue(message: JsonRpcMessage, last: boolean): void {
    const data = serializeMessage(message);
    this.tail = this.tail
      .then(async () => {
        const id = this.options.store && this.options.streamId !== undefined ? await this.options.store.append(this.options.streamId, message) : undefined;
        const res = this.res;
        if (res && !res.writableEnded) {
          writeFlushed(res, id === undefined ? `event: message\ndata: ${data}\n\n` : `id: ${id}\nevent: message\ndata: ${data}\n\n`);
        }
        if (last) this.closeResponse();
      })
      .catch(() => this.closeResponse());
  }

  private closeResponse(): void {
    const res = this.res;
    this.res = undefined;
    if (res && !res.writableEnded) res.end();
  }
}
