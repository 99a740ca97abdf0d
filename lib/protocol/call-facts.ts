import type { ServerRequestBroker } from './interaction.js';
import type { JsonRpcMessage, JsonRpcRequest } from './json-rpc.js';
import { LOG_LEVELS, type Implementation, type JsonObject, type LogLevel } from './mcp-types.js';
import type { McpSession } from './session-store.js';
import type { ProtocolEra } from './versions.js';

// What a call is made of besides its McpContext: the facts the engine gathers from the transport
// and the session, the state holder, and the hooks and options of questions to the client.

// A Map, not an object literal: `"toString" in {}` is true, and a level name comes off the wire.
export const LEVEL_RANK: ReadonlyMap<string, number> = new Map(LOG_LEVELS.map((level, i) => [level, i]));

/** True for the eight RFC 5424 level names only (never an inherited property name). */
export function isLogLevel(value: unknown): value is LogLevel {
  return typeof value === 'string' && LEVEL_RANK.has(value);
}

/** Everything the dispatcher knows about one incoming request, built by a transport. */
export interface RequestEnvelope {
  era: ProtocolEra;
  protocolVersion: string;
  capabilities: JsonObject;
  clientInfo?: Implementation;
  session?: McpSession;
  /** The transport's own request object (an HTTP request), for handlers that need headers. */
  transportRequest?: unknown;
  /** Reads the caller's network address; a function, so that requests that never ask pay nothing. */
  clientAddress?: () => string | undefined;
  /** Level below which `notifications/message` are dropped; undefined = send none. */
  logLevel?: LogLevel;
  /** Persists a legacy session's `logging/setLevel`. */
  setLogLevel?(level: LogLevel): void | Promise<void>;
  /** The authenticated principal's id, when authorization is configured. */
  principal?: string;
  /** The authenticated principal (id, scopes, claims). */
  auth?: { id: string; scopes?: string[]; claims?: Record<string, unknown> };
  /** Legacy era: sends server-to-client requests on the call's stream. */
  broker?: ServerRequestBroker;
  /** Legacy era: ends the call's SSE response early; the client resumes with Last-Event-ID. */
  closeStream?(): void;
  /**
   * Legacy era: records a `resources/subscribe` of this session (the caller then delivers
   * `notifications/resources/updated` for that URI). Undefined = subscriptions are accepted but
   * not tracked.
   */
  subscribe?(uri: string): void | Promise<void>;
  /** Legacy era: records a `resources/unsubscribe` of this session. */
  unsubscribe?(uri: string): void | Promise<void>;
  /** The session's state (legacy), or this request's (seeded per request by `sessions.onSession`). */
  state?: SessionStateHolder;
}

/** Where a context reads and writes session state. @internal */
export interface SessionStateHolder {
  readonly persistent: boolean;
  read(): JsonObject;
  write(value: JsonObject): Promise<void>;
}

/**
 * The per-session state a handler reads and writes through `ctx.state<T>()`. On a legacy session
 * it lives with the session (in memory, or in Redis so that it follows the session to another
 * instance); on the 2026-07-28 era, which has no session, it lives for one request and starts
 * from what `sessions.onSession` seeded for it.
 *
 * @publicApi
 */
export interface McpSessionState<T extends object = JsonObject> {
  /** True when the state lives with a session; false when it lasts for this request only. */
  readonly persistent: boolean;
  /** A copy of the current state: change it with `set` or `update`. */
  get(): T;
  /** Replaces the state and stores it (a JSON object within `limits.sessionStateBytes`). */
  set(value: T): Promise<void>;
  /**
   * Applies `change` to a copy of the current state and stores the result. Calls of one session
   * running at the same time, on one instance or several, write in turn: the last write wins.
   */
  update(change: (current: T) => T): Promise<void>;
}

/** A state that lasts for one request (2026-07-28 era, stateless legacy). @internal */
export function requestState(initial: JsonObject = {}): SessionStateHolder {
  let value = initial;
  return {
    persistent: false,
    read: () => value,
    write: async (next) => {
      value = next;
    },
  };
}

/**
 * How a context turns elicitation schemas into wire schemas and validates answers. Supplied by
 * the dispatcher (which owns the schema layer), so the context stays a plain class.
 */
export interface InteractionSupport {
  requestedSchema(schema: unknown): JsonObject;
  validateContent(schema: unknown, content: unknown): Promise<{ ok: true; value: unknown } | { ok: false }>;
  timeoutMs: number;
}

/**
 * How a call that runs outside its request (a run mode: tasks) asks the client and reports its
 * state: set by the pack that runs it, so that `elicit`, `sample`, `roots`, `progress` and `log`
 * go through that run instead of the request (which has ended, or will once the run exists).
 */
export interface McpRunHooks {
  /** False until the run exists (the task); questions marked `beforeTask` are asked with MRTR until then. */
  readonly created: boolean;
  /** Records an input request on the run (a task's `input_required`) and resolves with the client's answer. */
  input(key: string, method: string, params: JsonObject): Promise<unknown>;
  /** Sets the run's status message (from progress and log messages). */
  status(message: string): void;
  /** Which attempt this is: 1, or more when a durable queue ran it again after an instance died. */
  readonly attempt?: number;
}

/** The run hooks of a call that runs as a task. */
export type McpTaskHooks = McpRunHooks;

/** Options of the questions a handler asks the client (`elicit`, `sample`, `roots`). */
export interface McpAskOptions {
  /** A stable key for the question, when the order of questions may vary between rounds. */
  key?: string;
  /**
   * For task tools on 2026-07-28: ask this question with a multi-round-trip `input_required`
   * result on `tools/call` itself, before the task is created, as long as it is asked before the
   * handler waits on anything else. Without it, a question makes the task `input_required`.
   */
  beforeTask?: boolean;
}

/** Multi-round-trip bookkeeping of one modern-era call. */
export interface InputState {
  /** Answers from `inputResponses` and from earlier rounds (carried in requestState). */
  answers: JsonObject;
  /** Input requests this round could not satisfy, by key. */
  pending: Record<string, JsonObject>;
}

/** What only the answer knows: `initialize`'s negotiated version and new session. */
export interface McpLateFacts {
  protocolVersion?: string;
  sessionId?: string;
  /** The keyed hash of `sessionId`. */
  sessionRef?: string;
}

/** One request under observation, from its start to its response (or cancellation). */
export interface McpRequestProbe {
  /** Runs the request's handler, e.g. inside the request's trace context. */
  run?<T>(fn: () => T): T;
  /** A message the request sent before its response: progress, logs, server-to-client requests. */
  message?(message: JsonRpcMessage): void;
  /** A server-to-client round trip of the call (elicitation, sampling, roots): asked, then answered. */
  interaction?(phase: 'requested' | 'answered', method: string, action?: string): void;
  /**
   * The response, or undefined when the call was cancelled before it. `late` carries what only the
   * answer knows (`initialize`'s negotiated version and new session).
   */
  end(response: JsonRpcMessage | undefined, late?: McpLateFacts): void;
}

/** What an observer is told of one request as it enters the dispatcher (or the engine, for `initialize`). */
export interface McpRequestFacts {
  request: JsonRpcRequest;
  era: ProtocolEra;
  /** The request's protocol version; for `initialize`, the version the client asked for. */
  protocolVersion: string;
  sessionId?: string;
  principal?: string;
  /** The transport's request (an HTTP request over HTTP): where HTTP trace headers are read. */
  transportRequest?: unknown;
}

/** What an observer reads of a request besides its JSON-RPC message. */
export type McpObservedSource = Omit<McpRequestFacts, 'request'>;

/**
 * A call as observers read it: the call object itself (McpContext), whose JSON-RPC request is
 * `message` (rebuilt from its id and method when a caller made the context without it).
 */
export interface McpObservedCall extends McpObservedSource {
  readonly message?: JsonRpcRequest;
  readonly requestId: JsonRpcRequest['id'];
  readonly method: string;
}

/** A legacy session as observers see it. */
export interface McpSessionFacts {
  sessionId: string;
  /** The keyed hash of `sessionId`, set by McpObservers for its sinks. */
  sessionRef?: string;
  protocolVersion: string;
  principal?: string;
  clientInfo?: { name?: string; version?: string };
}

/** Why a session ended. `closed`: through `McpSessionAdmin.close()`. @publicApi */
export type McpSessionCloseReason = 'deleted' | 'expired' | 'evicted' | 'closed';

/**
 * Told of every request as it enters and leaves, and of sessions (OpenTelemetry and McpEvents,
 * through McpObservers); set on the dispatcher at bootstrap.
 */
export interface McpCallObserver {
  /** A call, from its call object. */
  call(call: McpObservedCall): McpRequestProbe | undefined;
  /** A request that is no call (`initialize`), from its facts. */
  request(facts: McpRequestFacts): McpRequestProbe | undefined;
  sessionOpened(facts: McpSessionFacts): void;
  sessionClosed(sessionId: string, reason: McpSessionCloseReason): void;
  /** The keyed hash observers show for a session id. */
  sessionRef(sessionId: string): string;
}
