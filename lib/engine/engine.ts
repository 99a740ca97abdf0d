import type { McpEventStore } from '../protocol/event-store.js';
import { httpStatusFor, McpStoreUnavailableError, storeUnavailableFailure } from '../protocol/errors.js';
import { McpContext, requestState, type RequestEnvelope } from '../protocol/context.js';
import { metaOf } from '../protocol/dispatcher.js';
import { ServerRequestBroker } from '../protocol/interaction.js';
import {
  ErrorCode,
  classifyMessage,
  failure,
  type JsonRpcId,
  type JsonRpcMessage,
  type JsonRpcNotification,
  type JsonRpcRequest,
  type JsonRpcResponse,
} from '../protocol/json-rpc.js';
import type { LogLevel } from '../protocol/mcp-types.js';
import type { McpChangeEvent } from '../protocol/notification-bus.js';
import type { McpRelay } from './relay.js';
import type { McpDispatcher } from '../protocol/dispatcher.js';
import type { McpSession, McpSessionStore } from '../protocol/session-store.js';
import { DEFAULT_MCP_LIMITS, type ResolvedMcpLimits } from './limits.js';
import { runBatch } from './batch.js';
import { heldUntilSettled, InFlightSlots } from './in-flight.js';
import { LegacySessions, type JsonAnswer, type McpSessionMode } from './legacy-sessions.js';
import { CallWriter, type CallChannel } from './respond.js';
import type { McpBodyOutcome, McpRefusal, McpResponseSink, McpScopeCheck, McpTransportFacts } from './sink.js';
import { StreamHub } from './streams.js';
import { connectionOf, type McpSessionCloseReason, type SessionHooks } from './session-hooks.js';
import { isModernMessage, modernFacts, modernHeaderProblem } from './wire-rules.js';

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
const CONNECTION_SCOPE = 'connection';

/** The id of a request body, for an error about it; null for anything else. */
function requestIdOf(value: unknown): JsonRpcId | null {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return null;
  const id = (value as { id?: unknown }).id;
  return typeof id === 'string' || (typeof id === 'number' && Number.isFinite(id)) ? id : null;
}

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
 * The transport-agnostic MCP engine: given a parsed message, the transport's facts and a response
 * sink, it decides era, session, envelope and answer, for both eras. Legacy sessions, batches,
 * `initialize`, cancellation, change delivery, resumption and server-to-client requests live here
 * once; a transport only reads bytes in and writes bytes out.
 */
export class McpEngine {
  /** Legacy server-to-client requests awaiting the client's answer. */
  readonly broker = new ServerRequestBroker();
  private readonly streams: StreamHub;
  private readonly calls: CallWriter;
  private readonly sessions: LegacySessions;
  private readonly limits: ResolvedMcpLimits;
  private readonly stopRelay?: () => void;
  private readonly stopSessionEnds?: () => void;
  /** Requests in flight per session or stateless caller, and per caller across its sessions. */
  private readonly inFlight?: InFlightSlots;

  constructor(
    private readonly server: McpDispatcher,
    private readonly store: McpSessionStore,
    private readonly options: McpEngineOptions,
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
      maxSessions: options.maxSessions ?? 10_000,
      defaultLogLevel: options.defaultLogLevel,
      hooks: options.hooks,
    });
    // An answer published by the instance it reached resolves here if this instance awaits it.
    this.stopRelay = options.relay?.onResponse((response, sessionId) => this.broker.resolve(response, sessionId));
    this.stopSessionEnds = store.onSessionEnd?.(
      (sessionId, reason, session) => void this.endSession(sessionId, reason, session),
    );
  }

  /** One incoming body (a message or a batch), as the transport read it. */
  message(body: McpBodyOutcome, facts: McpTransportFacts, sink: McpResponseSink): void | Promise<void> {
    // Tool sets: who the caller is decides which tools exist for it, before any check reads them.
    const prepared = body.ok ? this.server.prepareCaller?.(facts, body.value) : undefined;
    if (prepared) return prepared.then(() => this.dispatched(body, facts, sink));
    return this.dispatched(body, facts, sink);
  }

  private dispatched(body: McpBodyOutcome, facts: McpTransportFacts, sink: McpResponseSink): void | Promise<void> {
    const outcome = this.dispatchMessage(body, facts, sink);
    if (!(outcome instanceof Promise)) return outcome;
    return outcome.catch((error: unknown) => this.unavailable(error, body.ok ? requestIdOf(body.value) : null, sink));
  }

  private dispatchMessage(body: McpBodyOutcome, facts: McpTransportFacts, sink: McpResponseSink): void | Promise<void> {
    if (!body.ok) return sink.json(body.status, failure(null, body.code, body.message));
    const value = body.value;
    if (Array.isArray(value)) return this.batch(value, facts, sink);
    const parsed = classifyMessage(value);
    if (parsed.kind === 'invalid')
      return sink.json(400, failure(parsed.id, ErrorCode.InvalidRequest, `Invalid Request: ${parsed.reason}`));
    if (parsed.kind === 'response') return this.clientResponse(parsed.message, facts, sink);
    const message = parsed.message;
    const id = parsed.kind === 'request' ? parsed.message.id : null;
    // The scope decision comes first, before anything else is read of the request. A modern call
    // keeps the target it looked up, so the catalog is asked once per call.
    const looked: { target?: unknown } = {};
    if (id !== null && this.answered(this.authorize(facts, [message as JsonRpcRequest], looked), sink)) return;
    if (isModernMessage(message, facts)) return this.modern(message, id, facts, sink, looked.target);
    return this.legacy(message, id, facts, sink);
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
   * Ends every open stream and call; called on shutdown, and when a `process`-mode connection ends
   * (its session then ends for `reason`, and the close hook hears of it).
   */
  /**
   * For a `process` engine (one connection): undefined when no handler runs, else a promise
   * resolved once none does. After a close, handlers that ignore the abort still hold their slots.
   */
  idle(): Promise<void> | undefined {
    return this.inFlight?.idle(CONNECTION_SCOPE);
  }

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
  private async endSession(sessionId: string, reason: McpSessionCloseReason, session?: McpSession): Promise<void> {
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
  private unavailable(error: unknown, id: JsonRpcId | null, sink: McpResponseSink): void {
    if (!(error instanceof McpStoreUnavailableError)) throw error;
    if (sink.started) return;
    sink.json(503, storeUnavailableFailure(id, error), { 'Retry-After': String(error.retryAfterS) });
  }

  /** Writes a refusal; true when there was one. */
  private answered<T extends object>(
    outcome: T | McpRefusal | undefined,
    sink: McpResponseSink,
  ): outcome is McpRefusal {
    if (outcome === undefined || !('status' in outcome && 'body' in outcome)) return false;
    sink.json(outcome.status, outcome.body, outcome.headers);
    return true;
  }

  /**
   * The one scope decision for every way a request arrives (alone or in a batch): each request
   * needs its scopes, and when one lacks them the caller is refused before any runs.
   */
  private authorize(
    facts: McpTransportFacts,
    requests: readonly JsonRpcRequest[],
    call?: { target?: unknown },
  ): McpRefusal | undefined {
    const check = this.options.checkScopes;
    if (!check) return undefined;
    for (const request of requests) {
      const required = this.server.requiredScopes(
        request.method,
        request.params,
        requests.length === 1 ? call : undefined,
        facts,
      );
      if (!required?.length) continue;
      const refusal = check(required, facts.principal, request);
      if (refusal) return refusal;
    }
    return undefined;
  }

  private cancelScope(sessionId: string | undefined): string | undefined {
    return this.options.sessions === 'process' ? CONNECTION_SCOPE : sessionId;
  }

  // ---------------------------------------------------------------- modern era (2026-07-28)

  private modern(
    message: JsonRpcRequest | JsonRpcNotification,
    id: JsonRpcId | null,
    facts: McpTransportFacts,
    sink: McpResponseSink,
    target: unknown,
  ): void | Promise<void> {
    const known = modernFacts(facts, message, id);
    if ('error' in known) return sink.json(httpStatusFor(known.error.code), known);
    if (id === null) {
      // Over HTTP a modern call is cancelled by closing its response; a connection cancels by id.
      const scope = this.cancelScope(undefined);
      if (scope !== undefined && message.method === 'notifications/cancelled')
        this.calls.cancel(scope, message.params?.requestId);
      return sink.empty(202);
    }
    const request = message as JsonRpcRequest;
    // The call object: built once, here, and seen by every layer down to the handler.
    const call = new McpContext(id, request.method, known, metaOf(request.params), undefined, undefined, request);
    call.target = target;
    const problem = modernHeaderProblem(this.server, facts, call, request);
    if (problem) return sink.json(httpStatusFor(problem.error.code), problem);
    if (this.options.hooks?.seeds) return this.seededCall(request, known, facts, sink);
    this.call(request, call, facts, sink, { era: 'modern' });
  }

  /** 2026-07-28 has no session: `sessions.onSession` seeds each request's state. */
  private async seededCall(
    request: JsonRpcRequest,
    known: RequestEnvelope,
    facts: McpTransportFacts,
    sink: McpResponseSink,
  ): Promise<void> {
    const seeded = await this.options.hooks!.seed(connectionOf(facts, known), request.id);
    if (this.answered(seeded, sink)) return;
    known.state = requestState(seeded.state);
    this.call(request, known, facts, sink, { era: 'modern', recheck: true });
  }

  // ---------------------------------------------------------------- legacy era (2025-03-26 … 2025-11-25)

  private async legacy(
    message: JsonRpcRequest | JsonRpcNotification,
    id: JsonRpcId | null,
    facts: McpTransportFacts,
    sink: McpResponseSink,
  ): Promise<void> {
    if (message.method === 'initialize' && id !== null) {
      const answer = await this.initialize(message as JsonRpcRequest, facts);
      return sink.json(answer.status, answer.body, answer.headers);
    }
    const context = await this.sessions.envelope(facts, id, message.method);
    if (this.answered(context, sink)) return;
    if (id === null) {
      this.notification(message as JsonRpcNotification, context.session?.id);
      return sink.empty(202);
    }
    const channel: CallChannel = { detachRequested: false };
    if (context.session && context.protocolVersion >= '2025-11-25' && this.options.eventStore) {
      context.closeStream = () => {
        if (channel.stream) channel.stream.detach();
        else channel.detachRequested = true;
      };
    }
    this.call(message as JsonRpcRequest, context, facts, sink, {
      era: 'legacy',
      sessionId: context.session?.id,
      channel,
      recheck: true,
    });
  }

  /** `initialize`, observed like every request, and the session it opens reported to the observers. */
  private async initialize(request: JsonRpcRequest, facts: McpTransportFacts): Promise<JsonAnswer> {
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

  /**
   * Dispatches one request with its call object. `recheck`: the request waited (its session, a
   * hook) since the first scope decision, so the decision is taken again, on a fresh look-up: a
   * capability enabled or added meanwhile must not run on a decision taken before it existed.
   */
  private call(
    request: JsonRpcRequest,
    known: McpContext | RequestEnvelope,
    facts: McpTransportFacts,
    sink: McpResponseSink,
    call: { era: 'legacy' | 'modern'; sessionId?: string; channel?: CallChannel; recheck?: boolean },
  ): void {
    const ctx =
      known instanceof McpContext
        ? known
        : new McpContext(request.id, request.method, known, metaOf(request.params), undefined, undefined, request);
    if (call.recheck && this.answered(this.authorize(facts, [request], ctx), sink)) return;
    const cancelScope =
      call.era === 'legacy' || this.options.sessions === 'process' ? this.cancelScope(call.sessionId) : undefined;
    if (cancelScope !== undefined && this.calls.isInflight(cancelScope, request.id)) {
      return sink.json(
        400,
        failure(
          request.id,
          ErrorCode.InvalidRequest,
          `Invalid Request: request id ${JSON.stringify(request.id)} is still in flight; use a new id for every request.`,
        ),
      );
    }
    const slot = this.inFlight?.slot(
      request.id,
      this.options.sessions === 'process' ? CONNECTION_SCOPE : undefined,
      ctx,
      facts,
    );
    if (slot !== undefined && typeof slot !== 'function') return sink.json(503, slot, { 'Retry-After': '1' });
    const hold = slot && heldUntilSettled(slot);
    this.calls.respond({
      onEnd: hold?.responseEnded,
      sink,
      messages: this.server.handle(request, ctx, hold?.handlerStarted),
      era: call.era,
      acceptsStream: facts.acceptsStream,
      cancelScope,
      sessionId: call.sessionId,
      requestId: request.id,
      channel: call.channel,
      protocolVersion: ctx.protocolVersion,
    });
  }

  private notification(message: JsonRpcNotification, sessionId: string | undefined): void {
    const scope = this.cancelScope(sessionId);
    if (message.method === 'notifications/cancelled' && scope !== undefined)
      this.calls.cancel(scope, message.params?.requestId);
  }

  private async batch(items: unknown[], facts: McpTransportFacts, sink: McpResponseSink): Promise<void> {
    const outcome = await runBatch(this.server, items, this.limits.maxBatchLength, {
      envelope: () => this.sessions.envelope(facts, null),
      authorize: (requests) => this.authorize(facts, requests),
      notification: (message, envelope) => this.notification(message, envelope.session?.id),
      admit: (request, envelope) =>
        this.inFlight?.slot(
          request.id,
          this.options.sessions === 'process' ? CONNECTION_SCOPE : undefined,
          envelope,
          facts,
        ) ?? (() => undefined),
    });
    if (this.answered(outcome, sink)) return;
    if (outcome.responses.length === 0) return sink.empty(202);
    sink.json(200, outcome.responses);
  }

  /** A client's answer to a server-to-client request (legacy era). Late or unknown answers are ignored. */
  private async clientResponse(
    message: JsonRpcResponse,
    facts: McpTransportFacts,
    sink: McpResponseSink,
  ): Promise<void> {
    let owner: string | undefined;
    if (this.options.sessions === 'stateful') {
      // The same binding as requests: only the session's own principal may answer on it.
      const session = await this.sessions.resolve(facts, null);
      if (this.answered(session, sink)) return;
      owner = session.id;
    } else if (this.options.sessions === 'process') {
      owner = this.sessions.connectionSession;
    }
    if (!this.broker.resolve(message, owner) && this.options.relay)
      void this.options.relay.publishResponse(message, owner);
    sink.empty(202);
  }
}
