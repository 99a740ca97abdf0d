import type { McpEventStore } from '../protocol/event-store.js';
import { DEFAULT_SESSION_OPTIONS } from './session-options.js';
import { McpStoreUnavailableError, storeUnavailableFailure } from '../protocol/errors.js';
import { ServerRequestBroker } from '../protocol/interaction.js';
import { ErrorCode, failure, type JsonRpcId, type JsonRpcMessage, type JsonRpcRequest } from '../protocol/json-rpc.js';
import type { LogLevel } from '../protocol/mcp-types.js';
import type { McpChangeEvent } from '../protocol/notification-bus.js';
import type { McpDispatcher } from '../protocol/dispatcher.js';
import type { McpSession, McpSessionStore } from '../protocol/session-store.js';
import type { McpRelay } from './relay.js';
import { DEFAULT_MCP_LIMITS, type ResolvedMcpLimits } from './limits.js';
import { InFlightSlots } from './in-flight.js';
import { LegacySessions, type JsonAnswer, type McpSessionMode } from './legacy-sessions.js';
import { CallWriter } from './respond.js';
import type { McpRefusal, McpResponseSink, McpScopeCheck, McpTransportFacts } from './sink.js';
import { StreamHub } from './streams.js';
import type { McpSessionCloseReason, SessionHooks } from './session-hooks.js';

export interface McpEngineOptions {
  /** Legacy-era session handling (see {@link McpSessionMode}). The modern era is always stateless. */
  sessions: McpSessionMode;
  /** McpModule's resolved `limits`. @default DEFAULT_MCP_LIMITS */
  limits?: ResolvedMcpLimits;
  /** Legacy log threshold before the client calls `logging/setLevel`. */
  defaultLogLevel?: LogLevel;
  /** Interval of keep-alive comments on long-lived streams and slow calls; 0 sends none. */
  keepAliveMs: number;
  /** Stores legacy stream events for `Last-Event-ID` resumption (stateful sessions only). */
  eventStore?: McpEventStore;
  /** The `retry:` hint of priming events. @default 1000 */
  retryMs?: number;
  /** Several instances as one server: legacy GET streams, session messages and client answers. */
  relay?: McpRelay;
  /** Scope decision for requests that need OAuth scopes; none = scopes are not enforced here. */
  checkScopes?: McpScopeCheck;
  /** `sessions.maxSessions`, named in the refusal when the store is full. @default 10000 */
  maxSessions?: number;
  /** `sessions.onSession` / `onSessionClose` and the session-state bound. */
  hooks?: SessionHooks;
  /**
   * Requests one session (a `process`-mode connection: the connection) or one stateless caller
   * may have in flight (`limits.maxRequestsInFlight`); none = unbounded (stdio, in process: one
   * local client).
   */
  maxRequestsInFlight?: number;
}

/** Scope of the calls of a `process`-mode connection: one connection, one id space. */
export const CONNECTION_SCOPE = 'connection';

/** The name and version of an `initialize`'s clientInfo, bounded, for observers. */
function clientInfoOf(value: unknown): { name?: string; version?: string } | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const { name, version } = value as { name?: unknown; version?: unknown };
  const info: { name?: string; version?: string } = {};
  if (typeof name === 'string') info.name = name.slice(0, 128);
  if (typeof version === 'string') info.version = version.slice(0, 64);
  return info;
}

/** The methods an endpoint with these sessions answers. */
export function allowedMethods(sessions: McpSessionMode): string {
  return sessions === 'stateful' ? 'GET, POST, DELETE' : 'POST';
}

/**
 * The engine's session side, whatever message a transport brings: the legacy GET stream and
 * DELETE, the admin view, shutdown and drain, what a session's end ends, and an observed
 * `initialize`. {@link McpEngine} adds the messages themselves; the state both sides share lives
 * here, built once.
 */
export abstract class McpEngineSessions {
  /** Legacy server-to-client requests awaiting the client's answer. */
  readonly broker = new ServerRequestBroker();
  protected readonly streams: StreamHub;
  protected readonly calls: CallWriter;
  protected readonly sessions: LegacySessions;
  protected readonly limits: ResolvedMcpLimits;
  private readonly stopRelay?: () => void;
  private readonly stopSessionEnds?: () => void;
  /** Requests in flight per session or stateless caller, and per caller across its sessions. */
  protected readonly inFlight?: InFlightSlots;

  constructor(
    protected readonly server: McpDispatcher,
    protected readonly store: McpSessionStore,
    protected readonly options: McpEngineOptions,
  ) {
    this.limits = options.limits ?? DEFAULT_MCP_LIMITS;
    if (options.maxRequestsInFlight !== undefined)
      this.inFlight = new InFlightSlots(options.maxRequestsInFlight, this.limits);
    this.streams = new StreamHub({
      eventStore: options.eventStore,
      relay: options.relay,
      keepAliveMs: options.keepAliveMs,
      retryMs: options.retryMs ?? 1000,
    });
    this.calls = new CallWriter(this.streams, options.eventStore);
    this.sessions = new LegacySessions(server, store, this.broker, this.streams, {
      mode: options.sessions,
      limits: this.limits,
      maxSessions: options.maxSessions ?? DEFAULT_SESSION_OPTIONS.maxSessions,
      defaultLogLevel: options.defaultLogLevel,
      hooks: options.hooks,
    });
    // An answer published by the instance it reached resolves here if this instance awaits it.
    this.stopRelay = options.relay?.onResponse((response, sessionId) => this.broker.resolve(response, sessionId));
    this.stopSessionEnds = store.onSessionEnd?.(
      // A store that fails to drop the ended session's events leaves them to expire on their own.
      (sessionId, reason, session) => void this.endSession(sessionId, reason, session).catch(() => undefined),
    );
  }

  /** A legacy GET: the session's stream, or the resume of one after `Last-Event-ID`. */
  async stream(facts: McpTransportFacts, sink: McpResponseSink): Promise<void> {
    return this.openStream(facts, sink).catch((error: unknown) => this.unavailable(error, null, sink));
  }

  private async openStream(facts: McpTransportFacts, sink: McpResponseSink): Promise<void> {
    if (this.options.sessions === 'stateless') {
      return sink.json(
        405,
        failure(
          null,
          ErrorCode.InvalidRequest,
          'Method Not Allowed: this endpoint keeps no sessions, so there is no GET stream. Use POST.',
        ),
        {
          Allow: allowedMethods('stateless'),
        },
      );
    }
    const context = await this.sessions.envelope(facts, null);
    if (this.answered(context, sink) || !context.session) return;
    const lastEventId = facts.header('last-event-id');
    return this.streams.serveGet(sink, context.session, context.protocolVersion, lastEventId);
  }

  /** A legacy DELETE: ends the caller's session. */
  async end(facts: McpTransportFacts, sink: McpResponseSink): Promise<void> {
    return this.endRequest(facts, sink).catch((error: unknown) => this.unavailable(error, null, sink));
  }

  private async endRequest(facts: McpTransportFacts, sink: McpResponseSink): Promise<void> {
    if (this.options.sessions === 'stateless') {
      return sink.json(
        405,
        failure(null, ErrorCode.InvalidRequest, 'Method Not Allowed: this endpoint keeps no sessions to delete.'),
        { Allow: allowedMethods('stateless') },
      );
    }
    const sessionId = facts.header('mcp-session-id');
    if (sessionId === undefined) {
      return sink.json(
        400,
        failure(
          null,
          ErrorCode.InvalidRequest,
          'Bad Request: DELETE needs the Mcp-Session-Id header of the session to end.',
        ),
      );
    }
    const ended = await this.sessions.delete(facts, sessionId);
    if (!ended) {
      return sink.json(
        404,
        failure(null, ErrorCode.InvalidRequest, 'Session not found: it expired or was already deleted.'),
      );
    }
    await this.endSession(sessionId, 'deleted', ended);
    sink.empty(200);
  }

  /** Ends any session, whoever owns it (the admin view); false when it did not exist. */
  async closeSession(sessionId: string): Promise<boolean> {
    const session = await this.store.get(sessionId);
    if (!session || !(await this.store.delete(sessionId))) return false;
    await this.endSession(sessionId, 'closed', session);
    return true;
  }

  /** Streams this instance holds for a session. */
  openStreams(sessionId: string): number {
    return this.streams.openStreams(sessionId);
  }

  /**
   * Shutdown: streams that can resume elsewhere end now with a `retry:` hint, calls get `graceMs`
   * to finish (their events keep going to the event store), the rest are cancelled, and every
   * stored write is flushed before this resolves.
   */
  async drain(graceMs: number): Promise<void> {
    this.streams.drain();
    const idle = await this.calls.whenIdle(graceMs);
    if (!idle) this.calls.cancelAll();
    await this.streams.flushed();
  }

  /** Sends a server-initiated message on a legacy session's GET stream (see StreamHub.sendToSession). */
  sendToSession(sessionId: string, message: JsonRpcMessage): boolean {
    return this.streams.sendToSession(sessionId, message);
  }

  /** Delivers a change to the legacy sessions that have a GET stream here. */
  deliverChange(event: McpChangeEvent): void {
    this.streams.deliverChange(event);
  }

  /**
   * For a `process` engine (one connection): undefined when no handler runs, else a promise
   * resolved once none does. After a close, handlers that ignore the abort still hold their slots.
   */
  idle(): Promise<void> | undefined {
    return this.inFlight?.idle(CONNECTION_SCOPE);
  }

  /**
   * Ends every open stream and call; called on shutdown, and when a `process`-mode connection ends
   * (its session then ends for `reason`, and the close hook hears of it).
   */
  close(reason: McpSessionCloseReason = 'closed'): void {
    const connection = this.options.sessions === 'process' ? this.sessions.connectionSession : undefined;
    if (connection !== undefined) {
      this.server.observer?.sessionClosed(connection, reason);
      this.options.hooks?.closed({ sessionId: connection, reason, session: this.sessions.endConnection() });
    }
    this.calls.cancelAll();
    this.streams.close();
    this.stopRelay?.();
    this.stopSessionEnds?.();
  }

  /**
   * Everything a legacy session holds ends with it, whatever ended it (DELETE, idle expiry,
   * eviction at its owner's cap): its GET stream, relay stream, in-flight calls and stored events.
   */
  protected async endSession(sessionId: string, reason: McpSessionCloseReason, session?: McpSession): Promise<void> {
    this.server.observer?.sessionClosed(sessionId, reason);
    this.streams.endSession(sessionId);
    this.calls.cancelAll(sessionId);
    this.options.hooks?.closed({ sessionId, reason, session });
    // An ended session's events can never be resumed: release them now rather than at expiry.
    await this.options.eventStore?.dropSession?.(sessionId);
  }

  /**
   * A store the request needed (sessions, stored events, the relay) is unreachable: 503 with
   * `Retry-After`, not a 500, since the same request succeeds once the store is back. The outage
   * itself is logged by the store, once; anything else is rethrown to the transport.
   */
  protected unavailable(error: unknown, id: JsonRpcId | null, sink: McpResponseSink): void {
    if (!(error instanceof McpStoreUnavailableError)) throw error;
    if (sink.started) return;
    sink.json(503, storeUnavailableFailure(id, error), { 'Retry-After': String(error.retryAfterS) });
  }

  /** Writes a refusal; true when there was one. */
  protected answered<T extends object>(
    outcome: T | McpRefusal | undefined,
    sink: McpResponseSink,
  ): outcome is McpRefusal {
    if (outcome === undefined || !('status' in outcome && 'body' in outcome)) return false;
    sink.json(outcome.status, outcome.body, outcome.headers);
    return true;
  }

  /** `initialize`, observed like every request, and the session it opens reported to the observers. */
  protected async initialize(request: JsonRpcRequest, facts: McpTransportFacts): Promise<JsonAnswer> {
    const observer = this.server.observer;
    if (!observer) return this.sessions.initialize(facts, request);
    const requested = request.params?.protocolVersion;
    const previous = this.sessions.connectionSession;
    const probe = observer.request({
      request,
      era: 'legacy',
      protocolVersion: typeof requested === 'string' ? requested : '',
      principal: facts.principal?.id,
      transportRequest: facts.transportRequest,
    });
    const run = () => this.sessions.initialize(facts, request);
    let answer: JsonAnswer;
    try {
      answer = await (probe?.run ? probe.run(run) : run());
    } catch (error) {
      probe?.end(failure(request.id, ErrorCode.ServerBusy, error instanceof Error ? error.message : String(error)));
      throw error;
    }
    const result = 'result' in answer.body ? answer.body.result : undefined;
    const sessionId = result
      ? (answer.headers?.['Mcp-Session-Id'] ??
        (this.options.sessions === 'process' ? this.sessions.connectionSession : undefined))
      : undefined;
    const protocolVersion = typeof result?.protocolVersion === 'string' ? result.protocolVersion : undefined;
    probe?.end(answer.body, { protocolVersion, sessionId });
    if (sessionId !== undefined && protocolVersion !== undefined) {
      if (previous !== undefined && previous !== sessionId) observer.sessionClosed(previous, 'closed');
      observer.sessionOpened({
        sessionId,
        protocolVersion,
        principal: facts.principal?.id,
        clientInfo: clientInfoOf(request.params?.clientInfo),
      });
    }
    return answer;
  }
}
