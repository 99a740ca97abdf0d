import type { McpPrincipal } from '../protocol/principal.js';
import type { JsonRpcMessage } from '../protocol/json-rpc.js';
import type { LogLevel } from '../protocol/mcp-types.js';
import type { McpChangeEvent } from '../protocol/notification-bus.js';
import type { McpDispatcher } from '../protocol/dispatcher.js';
import type { ResolvedMcpLimits } from './limits.js';
import { McpEngine } from './engine.js';
import { ConnectionSessionStore } from './legacy-sessions.js';
import type { McpAnswerHeaders, McpEventSink, McpResponseSink, McpScopeCheck, McpTransportFacts } from './sink.js';
import type { McpSessionCloseReason, SessionHooks } from './session-hooks.js';

/** Where a connection's messages go: whole messages, or (for a stream event) its serialized form. */
export interface McpMessageOutput {
  message(message: JsonRpcMessage | readonly JsonRpcMessage[]): void;
  /** A stream event as serialized; without it the event is parsed and passed to `message`. */
  serialized?(data: string): void;
}

export interface McpConnectionOptions {
  defaultLogLevel?: LogLevel;
  checkScopes?: McpScopeCheck;
  limits?: ResolvedMcpLimits;
  /** What the session's standing stream carries (change notifications, server requests that no answer stream took). */
  session: McpMessageOutput;
  /**
   * `sessions.onSession` / `onSessionClose`, for a connection reached over the network (the
   * 2024-11-05 HTTP+SSE transport): its `initialize` is refused or seeded as on Streamable HTTP.
   * Local connections (stdio, in process) run without hooks.
   */
  hooks?: SessionHooks;
  /** Requests the connection may have in flight (a network session); none = unbounded (stdio, in process). */
  maxRequestsInFlight?: number;
}

/** Per message: who sends it and where its answer goes (the session's output by default). */
export interface McpReceiveOptions {
  principal?: McpPrincipal;
  /** Headers of the message, by lower-case name (none on stdio). */
  headers?: Readonly<Record<string, string>>;
  /** Apply the Streamable HTTP header rules to the headers. @default false */
  headerRules?: boolean;
  /** Where the answer goes; runs `done` once it was written. */
  output?: McpMessageOutput & { done?(): void };
  /** Aborting it is the client going away: the call is cancelled. */
  signal?: AbortSignal;
  /** Handed to handlers and guards as the request (`ctx.request`). */
  transportRequest?: unknown;
  /** The sender's network address (`ctx.clientAddress`), where the transport has one. */
  clientAddress?: string;
}

/**
 * One client on a message connection (stdio, or in process): the {@link McpEngine} with the
 * connection as its one legacy session, answers written as messages, no headers, no keep-alives.
 */
export class McpConnection {
  private readonly engine: McpEngine;
  private readonly closers = new Set<() => void>();
  private queue: Promise<void> = Promise.resolve();

  constructor(
    server: McpDispatcher,
    private readonly options: McpConnectionOptions,
  ) {
    this.engine = new McpEngine(server, new ConnectionSessionStore(), {
      sessions: 'process',
      keepAliveMs: 0,
      defaultLogLevel: options.defaultLogLevel,
      checkScopes: options.checkScopes,
      limits: options.limits,
      hooks: options.hooks,
      maxRequestsInFlight: options.maxRequestsInFlight,
    });
  }

  /**
   * One parsed message (or batch). Messages are taken in the order received, as a client on one
   * pipe expects (an `initialize` before the requests that follow it, a cancel after its call).
   * Resolves once the engine took it, not when it is answered.
   */
  receive(value: unknown, options: McpReceiveOptions = {}): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      this.queue = this.queue.then(() => {
        const taken = this.take(value, options);
        taken.then(resolve, reject);
        // The connection's store answers synchronously, so all a message needs before its call
        // is dispatched runs in microtasks: the next message waits for that, never for an answer
        // (a batch may wait on a client answer that only a later message brings).
        return Promise.race([taken, new Promise<void>((next) => setImmediate(next))]).catch(() => undefined);
      });
    });
  }

  private async take(value: unknown, options: McpReceiveOptions): Promise<void> {
    const facts = this.facts(options);
    const output = options.output ?? this.options.session;
    const sink = new MessageSink(output, this.closers);
    options.signal?.addEventListener('abort', () => sink.abort(), { once: true });
    await this.engine.message({ ok: true, value }, facts, sink);
    // A legacy `initialize` (re)started the session: its standing stream opens now.
    if (isInitialize(value) && sink.answered !== undefined && 'result' in sink.answered) {
      await this.engine.stream(facts, new MessageSink(this.options.session, this.closers));
    }
  }

  deliverChange(event: McpChangeEvent): void {
    this.engine.deliverChange(event);
  }

  /** Undefined when no handler of the connection runs, else resolved once none does (a closed connection's included). */
  idle(): Promise<void> | undefined {
    return this.engine.idle();
  }

  /** Cancels every call and ends every stream; `reason` is what the close hook hears. */
  close(reason: McpSessionCloseReason = 'closed'): void {
    this.engine.close(reason);
    for (const close of [...this.closers]) close();
    this.closers.clear();
  }

  private facts(options: McpReceiveOptions): McpTransportFacts {
    const headers = options.headers;
    return {
      header: headers ? (name) => headers[name] : () => undefined,
      principal: options.principal,
      acceptsStream: true,
      headerRules: options.headerRules === true,
      transportRequest: options.transportRequest,
      clientAddress: options.clientAddress,
    };
  }
}

function isInitialize(value: unknown): boolean {
  return typeof value === 'object' && value !== null && (value as { method?: unknown }).method === 'initialize';
}

/**
 * A response sink that hands messages on. The connection closing is the client going away; a
 * sink is registered with the connection only while its answer is open.
 */
class MessageSink implements McpResponseSink {
  started = false;
  /** The JSON answer, once written. */
  answered?: JsonRpcMessage;
  private readonly listeners: Array<() => void> = [];
  private readonly closed = (): void => {
    for (const listener of this.listeners.splice(0)) listener();
  };

  constructor(
    private readonly output: McpMessageOutput & { done?(): void },
    private readonly closers: Set<() => void>,
  ) {}

  json(_status: number, body: JsonRpcMessage | readonly JsonRpcMessage[], _headers?: McpAnswerHeaders): void {
    if (!Array.isArray(body)) this.answered = body as JsonRpcMessage;
    this.output.message(body);
    this.finish();
  }

  empty(): void {
    this.finish();
  }

  stream(): McpEventSink {
    this.started = true;
    const output = this.output;
    let ended = false;
    const listeners: Array<() => void> = [];
    const end = (): void => {
      if (ended) return;
      ended = true;
      for (const listener of listeners.splice(0)) listener();
      this.finish();
    };
    this.onClose(end);
    return {
      event: (data) => {
        if (ended) return false;
        if (output.serialized) output.serialized(data);
        else output.message(JSON.parse(data) as JsonRpcMessage);
        return true;
      },
      prime: () => undefined,
      comment: () => undefined,
      end,
      get ended() {
        return ended;
      },
      onClose: (listener) => void listeners.push(listener),
    };
  }

  /** The client went away. */
  abort(): void {
    this.closers.delete(this.closed);
    this.closed();
  }

  onClose(listener: () => void): void {
    this.listeners.push(listener);
    this.closers.add(this.closed);
  }

  private finish(): void {
    this.started = true;
    this.closers.delete(this.closed);
    this.listeners.length = 0;
    this.output.done?.();
  }
}
