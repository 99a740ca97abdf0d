import type { Observable, Subscription } from 'rxjs';
import type { McpEventStore } from '../protocol/event-store.js';
import { ErrorCode, failure, isResponse, type JsonRpcId, type JsonRpcMessage } from '../protocol/json-rpc.js';
import { supportsPrimingEvents } from '../protocol/versions.js';
import { storeUnavailableRetryAfter } from '../protocol/errors.js';
import type { EventStream } from './event-stream.js';
import type { McpResponseSink } from './sink.js';
import type { SlowCall, StreamHub } from './streams.js';
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
  private readonly inflight = new Map<string, { cancel(): void }>();
  /** Calls not answered yet, of every era (shutdown waits for them). */
  private running = 0;
  private readonly idleWaiters = new Set<() => void>();

  constructor(
    /** @internal */
    readonly streams: StreamHub,
    private readonly eventStore: McpEventStore | undefined,
  ) {}

  /** True while a call of this scope and id runs. */
  isInflight(scope: string, requestId: JsonRpcId): boolean {
    return this.inflight.has(callKey(scope, requestId));
  }

  /** `notifications/cancelled`: stops the named call of this scope. */
  cancel(scope: string, requestId: unknown): void {
    if (typeof requestId === 'string' || typeof requestId === 'number')
      this.inflight.get(callKey(scope, requestId))?.cancel();
  }

  /** Cancels every call of a scope (its session ended), or every call. */
  cancelAll(scope?: string): void {
    const prefix = scope === undefined ? '' : `${scope}\u0000`;
    for (const [key, call] of [...this.inflight]) if (key.startsWith(prefix)) call.cancel();
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
    const resumable =
      options.era === 'legacy' &&
      options.sessionId !== undefined &&
      this.eventStore !== undefined &&
      options.protocolVersion !== undefined &&
      supportsPrimingEvents(options.protocolVersion);
    const key =
      options.cancelScope !== undefined && options.requestId !== undefined
        ? callKey(options.cancelScope, options.requestId)
        : undefined;
    this.running++;
    const answer = new CallAnswer(this, options, resumable, key);
    if (options.acceptsStream) {
      answer.since = Date.now();
      this.streams.watchSlowCall(answer);
    }
    options.sink.onClose(() => answer.closed());
    answer.subscription = options.messages.subscribe(answer);
    if (!answer.finished && key !== undefined) this.inflight.set(key, answer);
  }

  /** @internal One call ended (answered, cancelled or gone): its place in the writer's counts is given back. */
  ended(key: string | undefined): void {
    if (--this.running === 0) for (const wake of [...this.idleWaiters]) wake();
    if (key !== undefined) this.inflight.delete(key);
  }
}

/**
 * One call's answer being written: the observer of its messages, its slow-call pulse and its
 * cancellation, as one object (this runs on every call, so no closure per role).
 */
class CallAnswer implements SlowCall {
  since = 0;
  finished = false;
  subscription?: Subscription = undefined;
  private readonly channel: CallChannel;
  private readonly streams: StreamHub;

  constructor(
    private readonly writer: CallWriter,
    private readonly options: RespondOptions,
    private readonly resumable: boolean,
    private readonly key: string | undefined,
  ) {
    this.channel = options.channel ?? { detachRequested: false };
    this.streams = writer.streams;
  }

  /** The slow-call pulse: a keep-alive comment, switching the answer to a stream. */
  beat(): void {
    this.startStream().comment();
  }

  next(message: JsonRpcMessage): void {
    if (this.finished) return;
    const { sink, era, sessionId } = this.options;
    const channel = this.channel;
    if (isResponse(message)) {
      const stream = channel.stream;
      this.finish();
      if (stream) stream.end(message);
      else if (channel.detachRequested && this.resumable) this.startStream().end(message);
      else {
        const retryAfter = storeUnavailableRetryAfter(message);
        if (retryAfter !== undefined) sink.json(503, message, { 'Retry-After': String(retryAfter) });
        else sink.json(era === 'modern' && 'error' in message ? modernErrorStatus(message.error.code) : 200, message);
      }
      return;
    }
    if (!this.options.acceptsStream) {
      // A plain JSON answer cannot carry a server-to-client request; the session's GET stream can.
      if (sessionId !== undefined && 'method' in message && 'id' in message)
        this.streams.sendToSession(sessionId, message);
      return;
    }
    this.startStream().send(message);
  }

  error(): void {
    if (this.finished) return;
    this.finish();
    if (this.channel.stream) this.channel.stream.end();
    else
      this.options.sink.json(500, failure(this.options.requestId ?? null, ErrorCode.InternalError, 'Internal error.'));
  }

  /** The client went away: the call is cancelled, unless the server itself closed a resumable stream. */
  closed(): void {
    const channel = this.channel;
    if (!this.finished && !channel.stream?.detached && !channel.detachRequested) {
      this.finish(true);
      this.subscription?.unsubscribe();
    }
  }

  /** `notifications/cancelled` (or the end of its session): the call ends without a response. */
  cancel(): void {
    if (this.finished) return;
    this.finish(true);
    this.subscription?.unsubscribe();
    if (this.channel.stream) this.channel.stream.end();
    else if (!this.options.sink.started) this.options.sink.empty(204);
  }

  /** `cancelled`: the call ends without a response (its client went away or cancelled it). */
  private finish(cancelled = false): void {
    this.finished = true;
    this.options.onEnd?.();
    this.writer.ended(this.key);
    if (this.options.acceptsStream) this.streams.unwatchSlowCall(this);
    this.streams.closeCallStream(this.channel.stream, cancelled);
  }

  private startStream(): EventStream {
    const channel = this.channel;
    if (channel.stream) return channel.stream;
    const stream = this.streams.openCallStream(this.options.sink.stream(), this.options.sessionId, this.resumable);
    channel.stream = stream;
    if (channel.detachRequested) stream.detach();
    return stream;
  }
}

function callKey(scope: string, requestId: JsonRpcId): string {
  return `${scope}\u0000${typeof requestId}:${String(requestId)}`;
}
