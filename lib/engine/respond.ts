import type { Observable, Subscription } from 'rxjs';
import type { McpEventStore } from '../protocol/event-store.js';
import { ErrorCode, failure, isResponse, type JsonRpcId, type JsonRpcMessage } from '../protocol/json-rpc.js';
import { supportsPrimingEvents } from '../protocol/versions.js';
import { storeUnavailableRetryAfter } from '../protocol/errors.js';
import type { EventStream } from './event-stream.js';
import type { McpResponseSink } from './sink.js';
import type { StreamHub } from './streams.js';
import { modernErrorStatus } from './wire-rules.js';

/** Per-call transport state, created before dispatch so the context can close the stream. */
export interface CallChannel {
  stream?: EventStream;
  /** Set by `ctx.closeSseStream()` before any event was written. */
  detachRequested: boolean;
}

/** One call's answer to write: where, what, and what it belongs to. */
export interface RespondOptions {
  sink: McpResponseSink;
  messages: Observable<JsonRpcMessage>;
  era: 'legacy' | 'modern';
  /** Whether the client takes a stream answer. */
  acceptsStream: boolean;
  /** Scope of `notifications/cancelled` (the legacy session, or the connection); none = cancel by closing. */
  cancelScope?: string;
  /** The legacy session, for a resumable stream and for messages a JSON answer cannot carry. */
  sessionId?: string;
  requestId?: JsonRpcId;
  channel?: CallChannel;
  protocolVersion?: string;
  /** Runs once when the call ends, however it ends (its in-flight slot is given back). */
  onEnd?: () => void;
}

/**
 * Writes dispatcher streams: one JSON body when the response comes first, otherwise a stream
 * that the response ends. A slow call switches to a stream to send keep-alive comments. The
 * client going away early unsubscribes (cancellation), unless the server itself closed a
 * resumable stream (the client then resumes with Last-Event-ID).
 */
export class CallWriter {
  /** Cancels an in-flight call (by scope and request id), ending its answer. */
  private readonly inflight = new Map<string, () => void>();
  /** Calls not answered yet, of every era (shutdown waits for them). */
  private running = 0;
  private readonly idleWaiters = new Set<() => void>();

  constructor(
    private readonly streams: StreamHub,
    private readonly eventStore: McpEventStore | undefined,
  ) {}

  /** True while a call of this scope and id runs. */
  isInflight(scope: string, requestId: JsonRpcId): boolean {
    return this.inflight.has(callKey(scope, requestId));
  }

  /** `notifications/cancelled`: stops the named call of this scope. */
  cancel(scope: string, requestId: unknown): void {
    if (typeof requestId === 'string' || typeof requestId === 'number')
      this.inflight.get(callKey(scope, requestId))?.();
  }

  /** Cancels every call of a scope (its session ended), or every call. */
  cancelAll(scope?: string): void {
    const prefix = scope === undefined ? '' : `${scope}\u0000`;
    for (const [key, cancel] of [...this.inflight]) if (key.startsWith(prefix)) cancel();
    if (scope === undefined) this.inflight.clear();
  }

  /** Resolves once no call runs, or after `ms`, whichever comes first; true when none runs. */
  whenIdle(ms: number): Promise<boolean> {
    if (this.running === 0) return Promise.resolve(true);
    return new Promise((resolve) => {
      const done = (idle: boolean): void => {
        clearTimeout(timer);
        this.idleWaiters.delete(wake);
        resolve(idle);
      };
      const wake = (): void => done(true);
      const timer = setTimeout(() => done(this.running === 0), ms);
      this.idleWaiters.add(wake);
    });
  }

  respond(options: RespondOptions): void {
    const { sink, era, sessionId, requestId, acceptsStream, protocolVersion } = options;
    const channel = options.channel ?? { detachRequested: false };
    const streams = this.streams;
    const resumable =
      era === 'legacy' &&
      sessionId !== undefined &&
      this.eventStore !== undefined &&
      protocolVersion !== undefined &&
      supportsPrimingEvents(protocolVersion);
    let finished = false;
    let subscription: Subscription | undefined;
    const key =
      options.cancelScope !== undefined && requestId !== undefined
        ? callKey(options.cancelScope, requestId)
        : undefined;
    const startStream = (): EventStream => {
      if (channel.stream) return channel.stream;
      const stream = streams.openCallStream(sink.stream(), sessionId, resumable);
      channel.stream = stream;
      if (channel.detachRequested) stream.detach();
      return stream;
    };
    const pulse = acceptsStream ? { since: Date.now(), beat: () => startStream().comment() } : undefined;
    if (pulse) streams.watchSlowCall(pulse);
    this.running++;
    /** `cancelled`: the call ends without a response (its client went away or cancelled it). */
    const finish = (cancelled = false): void => {
      finished = true;
      options.onEnd?.();
      if (--this.running === 0) for (const wake of [...this.idleWaiters]) wake();
      if (pulse) streams.unwatchSlowCall(pulse);
      if (key !== undefined) this.inflight.delete(key);
      streams.closeCallStream(channel.stream, cancelled);
    };
    sink.onClose(() => {
      if (!finished && !channel.stream?.detached && !channel.detachRequested) {
        finish(true);
        subscription?.unsubscribe();
      }
    });
    subscription = options.messages.subscribe({
      next: (message) => {
        if (finished) return;
        if (isResponse(message)) {
          const stream = channel.stream;
          finish();
          if (stream) stream.end(message);
          else if (channel.detachRequested && resumable) startStream().end(message);
          else {
            const retryAfter = storeUnavailableRetryAfter(message);
            if (retryAfter !== undefined) sink.json(503, message, { 'Retry-After': String(retryAfter) });
            else
              sink.json(era === 'modern' && 'error' in message ? modernErrorStatus(message.error.code) : 200, message);
          }
          return;
        }
        if (!acceptsStream) {
          // A plain JSON answer cannot carry a server-to-client request; the session's GET stream can.
          if (sessionId !== undefined && 'method' in message && 'id' in message)
            streams.sendToSession(sessionId, message);
          return;
        }
        startStream().send(message);
      },
      error: () => {
        if (finished) return;
        finish();
        if (channel.stream) channel.stream.end();
        else sink.json(500, failure(requestId ?? null, ErrorCode.InternalError, 'Internal error.'));
      },
    });
    if (!finished && key !== undefined) {
      this.inflight.set(key, () => {
        if (finished) return;
        finish(true);
        subscription?.unsubscribe();
        if (channel.stream) channel.stream.end();
        else if (!sink.started) sink.empty(204);
      });
    }
  }
}

function callKey(scope: string, requestId: JsonRpcId): string {
  return `${scope}\u0000${typeof requestId}:${String(requestId)}`;
}
