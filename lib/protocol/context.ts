import { McpError, ToolError } from './errors.js';
import type { InferArgs, StandardSchemaV1 } from '../schema/standard-schema.js';
import {
  InputRequiredSignal,
  rootsResultProblem,
  samplingResultProblem,
  type ElicitOutcome,
  type McpRoot,
  type SamplingRequest,
  type SamplingResult,
  type ServerRequestBroker,
} from './interaction.js';
import { ErrorCode, type JsonRpcId, type JsonRpcMessage } from './json-rpc.js';
import { LOG_LEVELS, type Implementation, type JsonObject, type LogLevel } from './mcp-types.js';
import type { McpSession } from './session-store.js';
import type { ProtocolEra } from './versions.js';
import type { McpRequestProbe } from '../telemetry/observer.js';

// A Map, not an object literal: `"toString" in {}` is true, and a level name comes off the wire.
const LEVEL_RANK: ReadonlyMap<string, number> = new Map(LOG_LEVELS.map((level, i) => [level, i]));

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
 * How a call that runs as a task asks the client and reports its state: set by the task runner,
 * so that `elicit`, `sample`, `roots`, `progress` and `log` go through the task instead of the
 * request (which has ended, or will once the task exists).
 */
export interface McpTaskHooks {
  /** False until the task exists; questions marked `beforeTask` are asked with MRTR until then. */
  readonly created: boolean;
  /** Records an input request on the task (`input_required`) and resolves with the client's answer. */
  input(key: string, method: string, params: JsonObject): Promise<unknown>;
  /** Sets the task's status message (from progress and log messages). */
  status(message: string): void;
  /** Which run of the task this is: 1, or more when a durable queue ran it again after an instance died. */
  readonly attempt?: number;
}

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

/**
 * The per-call context a handler receives through `@Ctx()`: who is calling, over which revision,
 * and ways to talk back while the call runs.
 *
 * @publicApi
 */
export class McpContext {
  private controller?: AbortController;
  private abortReason?: unknown;
  private aborted = false;
  private lastProgress = Number.NEGATIVE_INFINITY;
  private closed = false;
  private inputCounter = 0;
  /** @internal */
  readonly inputs: InputState = { answers: {}, pending: {} };
  /** @internal The request's observers (telemetry, events), told of its round trips. */
  probe?: McpRequestProbe;
  /** @internal Set while the call runs as a task. */
  taskHooks?: McpTaskHooks;
  /**
   * @internal Told of the app handler's own promise (guards, interceptors, the method), which
   * runs on after a cancel or disconnect ends the call: the call's in-flight slot
   * (`limits.maxRequestsInFlight`) is held until it settles.
   */
  holdWork?: (work: PromiseLike<unknown>) => void;
  /**
   * @internal The call's rate limits were counted when its task was admitted (before the task
   * existed, on the instance that took the request): running it counts them no more.
   */
  policiesAdmitted?: boolean;

  constructor(
    readonly requestId: JsonRpcId,
    readonly method: string,
    private readonly envelope: RequestEnvelope,
    /** The request's `params._meta`, as sent. */
    readonly meta: JsonObject,
    private readonly emit: (message: JsonRpcMessage) => void,
    private readonly support?: InteractionSupport,
  ) {}

  /**
   * Aborted when the client cancels or disconnects, or the call times out. Created on first use:
   * most calls never look at it, and an AbortController per request is measurable.
   */
  get signal(): AbortSignal {
    if (!this.controller) {
      this.controller = new AbortController();
      if (this.aborted) this.controller.abort(this.abortReason);
    }
    return this.controller.signal;
  }

  /** @internal Aborts the call's signal (cancellation, disconnect, timeout). */
  abortCall(reason: unknown): void {
    if (this.aborted) return;
    this.aborted = true;
    this.abortReason = reason;
    this.controller?.abort(reason);
  }

  /**
   * Cancels this call as a client cancellation would: the AbortSignal fires and an Observable
   * handler is torn down. Used by policies such as `@McpTimeout()`.
   */
  cancel(reason = 'The call was cancelled.'): void {
    this.abortCall(new ToolError(reason));
  }

  /**
   * For a call that runs as a task: which run this is, from 1. With a durable queue a task whose
   * instance died runs again on another (at least once), and this tells the tool it may have
   * done part of the work before; undefined outside tasks.
   */
  get taskAttempt(): number | undefined {
    const hooks = this.taskHooks;
    return hooks ? (hooks.attempt ?? 1) : undefined;
  }

  /** The authenticated principal's id, when authorization is configured. */
  get principal(): string | undefined {
    return this.envelope.principal;
  }

  /** The authenticated principal: id, granted scopes and the verifier's claims. */
  get auth(): { id: string; scopes?: string[]; claims?: Record<string, unknown> } | undefined {
    return this.envelope.auth;
  }

  /**
   * True when the client declared a capability (for this request on the modern era, for the
   * session on the legacy one). Dotted paths reach sub-capabilities: `'elicitation.url'`.
   */
  supports(capability: 'elicitation' | 'elicitation.form' | 'elicitation.url' | 'sampling' | 'sampling.tools' | 'roots'): boolean {
    const [head, sub] = capability.split('.');
    const declared = this.envelope.capabilities[head];
    if (typeof declared !== 'object' || declared === null) return false;
    if (sub === undefined) return true;
    const subs = declared as JsonObject;
    // An empty elicitation capability means form mode only (2025-11-25).
    if (head === 'elicitation' && sub === 'form') return Object.keys(subs).length === 0 || typeof subs.form === 'object';
    return typeof subs[sub] === 'object' && subs[sub] !== null;
  }

  /**
   * The settings the client declared for an extension (`capabilities.extensions[id]`, e.g.
   * `'io.modelcontextprotocol/ui'`), or undefined when it declared none. Extension ids contain
   * dots, so they are not reachable through {@link supports}.
   */
  clientExtension(id: string): JsonObject | undefined {
    const extensions = this.envelope.capabilities.extensions;
    if (typeof extensions !== 'object' || extensions === null || Array.isArray(extensions)) return undefined;
    const settings = (extensions as JsonObject)[id];
    return typeof settings === 'object' && settings !== null && !Array.isArray(settings) ? (settings as JsonObject) : undefined;
  }

  /**
   * Asks the user for structured input. `schema` is a DTO class (flat: string, number, integer,
   * boolean and enum properties), a flat Standard Schema object (zod 4, valibot) or a raw
   * elicitation schema. Resolves to the validated DTO instance (or the schema's output) on
   * `accept`, or to the decline/cancel outcome.
   *
   * Legacy era: sends `elicitation/create` to the client and awaits the answer. Modern era: the
   * call ends with an `input_required` result, and the client's retry re-runs the handler; this
   * same call then returns the answer. Give a stable `key` when the order of questions may vary.
   */
  elicit<S extends StandardSchemaV1>(message: string, schema: S, options?: McpAskOptions): Promise<ElicitOutcome<InferArgs<S>>>;
  elicit<T = JsonObject>(message: string, schema: unknown, options?: McpAskOptions): Promise<ElicitOutcome<T>>;
  async elicit<T = JsonObject>(message: string, schema: unknown, options: McpAskOptions = {}): Promise<ElicitOutcome<T>> {
    this.require('elicitation.form', { elicitation: {} }, 'form elicitation');
    const support = this.interaction();
    const params: JsonObject = { message, requestedSchema: support.requestedSchema(schema) };
    if (this.protocolVersion >= '2025-11-25') params.mode = 'form';
    return this.ask(options.key ?? `elicitation-${++this.inputCounter}`, 'elicitation/create', params, async (answer) => {
      if (!isObject(answer) || !['accept', 'decline', 'cancel'].includes(answer.action as string)) return undefined;
      if (answer.action !== 'accept') return { action: answer.action } as ElicitOutcome<T>;
      const checked = await support.validateContent(schema, answer.content ?? {});
      return checked.ok ? ({ action: 'accept', content: checked.value as T } as ElicitOutcome<T>) : undefined;
    }, undefined, options.beforeTask);
  }

  /**
   * Sends the user to a URL (for secrets, payments, OAuth flows: never ask for those in a form).
   * Resolves to the user's consent outcome, not to the completion of the flow. `elicitationId`
   * is sent on the legacy era only: the 2026-07-28 revision dropped it, with the
   * `notifications/elicitation/complete` channel it keyed.
   */
  async elicitUrl(message: string, url: string, options: McpAskOptions & { elicitationId?: string } = {}): Promise<{ action: 'accept' | 'decline' | 'cancel' }> {
    this.require('elicitation.url', { elicitation: { url: {} } }, 'URL elicitation');
    const params: JsonObject = { mode: 'url', message, url };
    if (this.era === 'legacy') params.elicitationId = options.elicitationId ?? `${this.requestId}-${this.inputCounter + 1}`;
    return this.ask(options.key ?? `elicitation-${++this.inputCounter}`, 'elicitation/create', params, async (answer) =>
      isObject(answer) && ['accept', 'decline', 'cancel'].includes(answer.action as string)
        ? { action: answer.action as 'accept' | 'decline' | 'cancel' }
        : undefined,
      undefined,
      options.beforeTask,
    );
  }

  /** Asks the client's model for a completion (`sampling/createMessage`). */
  async sample(request: SamplingRequest, options: McpAskOptions = {}): Promise<SamplingResult> {
    this.require(request.tools ? 'sampling.tools' : 'sampling', request.tools ? { sampling: { tools: {} } } : { sampling: {} }, 'sampling');
    return this.ask(
      options.key ?? `sampling-${++this.inputCounter}`,
      'sampling/createMessage',
      request as unknown as JsonObject,
      async (answer) => (samplingResultProblem(answer) === undefined ? (answer as SamplingResult) : undefined),
      samplingResultProblem,
      options.beforeTask,
    );
  }

  /** Asks the client for its roots (`roots/list`). */
  async roots(options: McpAskOptions = {}): Promise<McpRoot[]> {
    this.require('roots', { roots: {} }, 'roots');
    return this.ask(
      options.key ?? `roots-${++this.inputCounter}`,
      'roots/list',
      {},
      async (answer) => (rootsResultProblem(answer) === undefined ? ((answer as JsonObject).roots as unknown as McpRoot[]) : undefined),
      rootsResultProblem,
      options.beforeTask,
    );
  }

  /**
   * Legacy era, resumable streams (2025-11-25 clients on a stateful session): ends the call's SSE
   * response now; the call goes on and the client picks up the rest with `Last-Event-ID`.
   * Elsewhere it does nothing.
   */
  closeSseStream(): void {
    this.envelope.closeStream?.();
  }

  /** @internal True when this round needs answers the client has not given. */
  get inputRequired(): boolean {
    return Object.keys(this.inputs.pending).length > 0;
  }

  private interaction(): InteractionSupport {
    if (!this.support) throw new ToolError('This request cannot ask the client for input.');
    return this.support;
  }

  private require(capability: Parameters<McpContext['supports']>[0], wire: JsonObject, what: string): void {
    if (this.supports(capability)) return;
    if (this.era === 'modern') {
      throw new McpError(
        ErrorCode.MissingRequiredClientCapability,
        `This request needs the client's ${what} capability (${capability}), which the request did not declare in _meta["io.modelcontextprotocol/clientCapabilities"].`,
        { requiredCapabilities: wire },
      );
    }
    throw new ToolError(
      `This tool needs ${what}, but the client did not declare the "${capability}" capability when it initialized. Use a client that supports it.`,
    );
  }

  /**
   * `accept` turns a well-formed answer into the value, or undefined for a malformed one, which is
   * asked again (so a handler never sees it); `problem` says why, for the error after the last try.
   */
  private async ask<T>(
    key: string,
    method: string,
    params: JsonObject,
    accept: (answer: unknown) => Promise<T | undefined>,
    problem?: (answer: unknown) => string | undefined,
    beforeTask?: boolean,
  ): Promise<T> {
    const support = this.interaction();
    const task = this.taskHooks;
    if (task && !(beforeTask && !task.created && this.era === 'modern')) {
      // Keys are unique over a task's lifetime: a malformed answer is asked again under a new one.
      let why: string | undefined;
      for (let attempt = 1; attempt <= 3; attempt++) {
        const answer = await task.input(attempt === 1 ? key : `${key}.${attempt}`, method, params);
        const value = await accept(answer);
        if (value !== undefined) return value;
        why = problem?.(answer);
      }
      throw malformedThrice(method, why);
    }
    if (this.era === 'modern') {
      // Own keys only: `inputResponses` is client JSON, and "toString" in {} is true.
      if (Object.hasOwn(this.inputs.answers, key)) {
        const value = await accept(this.inputs.answers[key]);
        if (value !== undefined) {
          this.probe?.interaction?.('answered', method, answerAction(this.inputs.answers[key]));
          return value;
        }
      }
      this.inputs.pending[key] = { method, params };
      this.probe?.interaction?.('requested', method);
      throw new InputRequiredSignal();
    }
    const broker = this.envelope.broker;
    if (!broker) {
      throw new ToolError(
        `This tool needs to send "${method}" to the client, which needs a stateful session: configure McpModule with sessions.mode "stateful".`,
      );
    }
    let why: string | undefined;
    for (let attempt = 0; attempt < 3; attempt++) {
      this.probe?.interaction?.('requested', method);
      const answer = await broker.request(this.emit, method, params, {
        signal: this.signal,
        timeoutMs: support.timeoutMs,
        owner: this.envelope.session?.id,
      });
      this.probe?.interaction?.('answered', method, answerAction(answer));
      const value = await accept(answer);
      if (value !== undefined) return value;
      why = problem?.(answer);
    }
    throw malformedThrice(method, why);
  }

  get era(): ProtocolEra {
    return this.envelope.era;
  }
  get protocolVersion(): string {
    return this.envelope.protocolVersion;
  }
  get clientInfo(): Implementation | undefined {
    return this.envelope.clientInfo;
  }
  /** The client's capabilities: per request on the modern era, per session on the legacy one. */
  get clientCapabilities(): JsonObject {
    return this.envelope.capabilities;
  }
  get sessionId(): string | undefined {
    return this.envelope.session?.id;
  }

  /**
   * The session's state, typed by the app (`ctx.state<Cart>()`): seeded by `sessions.onSession`,
   * kept with the legacy session; on the 2026-07-28 era it lasts for this request.
   *
   * @example
   * ```ts
   * const cart = ctx.state<{ items: string[] }>();
   * await cart.update((c) => ({ items: [...(c.items ?? []), sku] }));
   * ```
   */
  state<T extends object = JsonObject>(): McpSessionState<T> {
    const holder = (this.envelope.state ??= requestState());
    return {
      persistent: holder.persistent,
      get: () => structuredClone(holder.read()) as T,
      set: (value) => holder.write(value as JsonObject),
      update: async (change) => holder.write(change(structuredClone(holder.read()) as T) as JsonObject),
    };
  }
  /**
   * The transport's request: over HTTP the one the app's own code sees (Express's `req`,
   * Fastify's request, with the `user` its guards set); undefined on stdio.
   */
  get request(): unknown {
    return this.envelope.transportRequest;
  }
  /**
   * The caller's network address over HTTP: Express's `req.ip` (which honours 'trust proxy'),
   * else the socket's remote address. Undefined where the transport has none (stdio, in-process).
   */
  get clientAddress(): string | undefined {
    return this.envelope.clientAddress?.();
  }
  get progressToken(): string | number | undefined {
    const token = this.meta.progressToken;
    return typeof token === 'string' || typeof token === 'number' ? token : undefined;
  }

  /**
   * Reports progress to the client. Sent only when the request carried a `progressToken`;
   * values that do not increase are dropped, as the spec requires progress to grow.
   */
  progress(progress: number, total?: number, message?: string): void {
    if (this.taskHooks) {
      if (!(progress > this.lastProgress)) return;
      this.lastProgress = progress;
      return this.taskHooks.status(message ?? (total !== undefined ? `${progress}/${total}` : String(progress)));
    }
    const token = this.progressToken;
    if (this.closed || token === undefined || !(progress > this.lastProgress)) return;
    this.lastProgress = progress;
    const params: JsonObject = { progressToken: token, progress };
    if (total !== undefined) params.total = total;
    if (message !== undefined) params.message = message;
    this.emit({ jsonrpc: '2.0', method: 'notifications/progress', params });
  }

  /** Sends a log message on this call's stream, if the client asked for this level. */
  log(level: LogLevel, data: unknown, logger?: string): void {
    if (this.taskHooks) return this.taskHooks.status(typeof data === 'string' ? data : JSON.stringify(data));
    const threshold = this.envelope.logLevel;
    if (this.closed || threshold === undefined || LEVEL_RANK.get(level)! < LEVEL_RANK.get(threshold)!) return;
    const params: JsonObject = { level, data };
    if (logger !== undefined) params.logger = logger;
    this.emit({ jsonrpc: '2.0', method: 'notifications/message', params });
  }

  /** @internal Sends a notification on this request's stream (used by long-lived methods). */
  notify(method: string, params: JsonObject): void {
    if (!this.closed) this.emit({ jsonrpc: '2.0', method, params });
  }

  /** @internal Called by the dispatcher once the result is sent: nothing may follow it. */
  close(): void {
    this.closed = true;
  }
}

/** An elicitation answer's `action` (accept, decline, cancel), for observers; never its content. */
function answerAction(answer: unknown): string | undefined {
  const action = isObject(answer) ? answer.action : undefined;
  return action === 'accept' || action === 'decline' || action === 'cancel' ? action : undefined;
}

function malformedThrice(method: string, why: string | undefined): ToolError {
  return new ToolError(
    `The client answered "${method}" with a malformed result three times${why ? ` (${why})` : ''}. The client must answer with a result shaped as the MCP specification defines for "${method}".`,
  );
}

function isObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
