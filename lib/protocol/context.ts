import { McpError, ToolError } from './errors.js';
import type { InferArgs, StandardSchemaV1 } from '../schema/standard-schema.js';
import {
  rootsResultProblem,
  samplingResultProblem,
  type ElicitOutcome,
  type McpRoot,
  type SamplingRequest,
  type SamplingResult,
} from './interaction.js';
import { ErrorCode, type JsonRpcId, type JsonRpcMessage, type JsonRpcRequest } from './json-rpc.js';
import type { McpCall } from './mcp-call.js';
import type { Implementation, JsonObject, LogLevel } from './mcp-types.js';
import type { McpSession } from './session-store.js';
import type { ProtocolEra } from './versions.js';
import type { McpRequestProbe } from './call-facts.js';

import { askClient } from './client-questions.js';
import {
  LEVEL_RANK,
  requestState,
  type InputState,
  type InteractionSupport,
  type McpAskOptions,
  type McpSessionState,
  type McpRunHooks,
  type RequestEnvelope,
  type SessionStateHolder,
} from './call-facts.js';

export { isLogLevel, requestState } from './call-facts.js';
export type {
  InputState,
  InteractionSupport,
  McpAskOptions,
  McpSessionState,
  McpRunHooks,
  McpTaskHooks,
  RequestEnvelope,
  SessionStateHolder,
} from './call-facts.js';

/**
 * The per-call context a handler receives through `@Ctx()`: who is calling, over which revision,
 * and ways to talk back while the call runs.
 *
 * @publicApi
 */
export class McpContext implements McpCall {
  private controller?: AbortController;
  private abortReason?: unknown;
  private aborted = false;
  private lastProgress = Number.NEGATIVE_INFINITY;
  private closed = false;
  private inputCounter = 0;
  private emit: (message: JsonRpcMessage) => void;
  private support?: InteractionSupport;
  /** @internal */
  readonly inputs: InputState = { answers: {}, pending: {} };
  /** @internal The request's observers (telemetry, events), told of its round trips. */
  probe?: McpRequestProbe;
  /** @internal Set while the call runs outside its request (a run mode: as a task). */
  runHooks?: McpRunHooks;
  /**
   * @internal Told of the app handler's own promise (guards, interceptors, the method), which
   * runs on after a cancel or disconnect ends the call: the call's in-flight slot
   * (`limits.maxRequestsInFlight`) is held until it settles.
   */
  holdWork?: (work: PromiseLike<unknown>) => void;
  /**
   * @internal The capability the request targets (the tool of `tools/call`...), looked up once
   * per call through the method table and shared by the scope check, the header rules, the
   * handler and telemetry. `null` once looked up and not found.
   */
  target?: unknown;

  /** The protocol era of the request: `modern` (2026-07-28, stateless) or `legacy` (initialize-based). */
  readonly era: ProtocolEra;
  /** The request's protocol revision (negotiated at initialize on the legacy era). */
  readonly protocolVersion: string;
  /** The client's capabilities: per request on the modern era, per session on the legacy one. */
  readonly clientCapabilities: JsonObject;
  readonly clientInfo: Implementation | undefined;
  /** The authenticated principal's id, when authorization is configured. */
  readonly principal: string | undefined;
  /** The authenticated principal: id, granted scopes and the verifier's claims. */
  readonly auth: { id: string; scopes?: string[]; claims?: Record<string, unknown> } | undefined;
  /** @internal The legacy session the request belongs to. */
  readonly session: McpSession | undefined;
  /** @internal The transport's own request (see {@link request}). */
  readonly transportRequest: unknown;
  /** @internal Level below which `notifications/message` are dropped; undefined = send none. */
  readonly logLevel: LogLevel | undefined;
  private readonly facts: RequestEnvelope;
  private stateHolder: SessionStateHolder | undefined;

  /**
   * The capability's name as guards and interceptors see it (`McpExecutionContext.getCall().name`):
   * the tool or prompt name, the resource URI (the URI read, for a template).
   */
  name = '';
  /** The arguments as the client sent them. */
  rawArguments: JsonObject = NO_ARGUMENTS;
  /** The validated arguments (a DTO instance for DTO inputs), once they are. */
  arguments: unknown = undefined;
  /**
   * @internal The call's rate limits were counted when its task was admitted (before the task
   * existed, on the instance that took the request): running it counts them no more.
   */
  policiesAdmitted?: boolean;

  /**
   * @param facts what the engine gathered of the request from its transport and session; read
   *   once here, so that the context is the one object every layer of the call sees.
   */
  constructor(
    readonly requestId: JsonRpcId,
    readonly method: string,
    facts: RequestEnvelope,
    /** The request's `params._meta`, as sent. */
    readonly meta: JsonObject,
    emit: (message: JsonRpcMessage) => void = ignore,
    support?: InteractionSupport,
    /** @internal The JSON-RPC request itself, for observers. */
    readonly message?: JsonRpcRequest,
  ) {
    this.emit = emit;
    this.support = support;
    this.facts = facts;
    this.era = facts.era;
    this.protocolVersion = facts.protocolVersion;
    this.clientCapabilities = facts.capabilities;
    this.clientInfo = facts.clientInfo;
    this.principal = facts.principal;
    this.auth = facts.auth;
    this.session = facts.session;
    this.transportRequest = facts.transportRequest;
    this.logLevel = facts.logLevel;
    this.stateHolder = facts.state;
  }

  /** The call itself, for code written against {@link McpCall} (`call.context`). */
  get context(): McpContext {
    return this;
  }

  /**
   * @internal Binds the call to the stream its messages go to (the dispatcher does, as the
   * request starts) and the schema support its questions use.
   */
  attach(emit: (message: JsonRpcMessage) => void, support: InteractionSupport | undefined): this {
    this.emit = emit;
    this.support = support;
    return this;
  }

  /**
   * @internal The same call as one capability's guards see it while a list or a completion asks
   * them (`method` is then the list's, `name` the capability's). Everything else, `context`
   * included, is this call's.
   */
  viewAs(method: string, name: string, rawArguments: JsonObject, args: unknown): McpCall {
    return { method, name, rawArguments, arguments: args, context: this };
  }

  /** @internal Persists a legacy session's `logging/setLevel`. */
  setLogLevel(level: LogLevel): void | Promise<void> {
    return this.facts.setLogLevel?.(level);
  }

  /** @internal Records a legacy `resources/subscribe` of this session; undefined when untracked. */
  subscribeUri(uri: string): void | Promise<void> {
    return this.facts.subscribe?.(uri);
  }

  /** @internal Records a legacy `resources/unsubscribe` of this session. */
  unsubscribeUri(uri: string): void | Promise<void> {
    return this.facts.unsubscribe?.(uri);
  }

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
    const hooks = this.runHooks;
    return hooks ? (hooks.attempt ?? 1) : undefined;
  }

  /**
   * True when the client declared a capability (for this request on the modern era, for the
   * session on the legacy one). Dotted paths reach sub-capabilities: `'elicitation.url'`.
   */
  supports(
    capability: 'elicitation' | 'elicitation.form' | 'elicitation.url' | 'sampling' | 'sampling.tools' | 'roots',
  ): boolean {
    const [head, sub] = capability.split('.');
    const declared = this.clientCapabilities[head];
    if (typeof declared !== 'object' || declared === null) return false;
    if (sub === undefined) return true;
    const subs = declared as JsonObject;
    // An empty elicitation capability means form mode only (2025-11-25).
    if (head === 'elicitation' && sub === 'form')
      return Object.keys(subs).length === 0 || typeof subs.form === 'object';
    return typeof subs[sub] === 'object' && subs[sub] !== null;
  }

  /**
   * The settings the client declared for an extension (`capabilities.extensions[id]`, e.g.
   * `'io.modelcontextprotocol/ui'`), or undefined when it declared none. Extension ids contain
   * dots, so they are not reachable through {@link supports}.
   */
  clientExtension(id: string): JsonObject | undefined {
    const extensions = this.clientCapabilities.extensions;
    if (typeof extensions !== 'object' || extensions === null || Array.isArray(extensions)) return undefined;
    const settings = (extensions as JsonObject)[id];
    return typeof settings === 'object' && settings !== null && !Array.isArray(settings)
      ? (settings as JsonObject)
      : undefined;
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
  elicit<S extends StandardSchemaV1>(
    message: string,
    schema: S,
    options?: McpAskOptions,
  ): Promise<ElicitOutcome<InferArgs<S>>>;
  elicit<T = JsonObject>(message: string, schema: unknown, options?: McpAskOptions): Promise<ElicitOutcome<T>>;
  async elicit<T = JsonObject>(
    message: string,
    schema: unknown,
    options: McpAskOptions = {},
  ): Promise<ElicitOutcome<T>> {
    this.require('elicitation.form', { elicitation: {} }, 'form elicitation');
    const support = this.interaction();
    const params: JsonObject = { message, requestedSchema: support.requestedSchema(schema) };
    if (this.protocolVersion >= '2025-11-25') params.mode = 'form';
    return this.ask(
      options.key ?? `elicitation-${++this.inputCounter}`,
      'elicitation/create',
      params,
      async (answer) => {
        if (!isObject(answer) || !['accept', 'decline', 'cancel'].includes(answer.action as string)) return undefined;
        if (answer.action !== 'accept') return { action: answer.action } as ElicitOutcome<T>;
        const checked = await support.validateContent(schema, answer.content ?? {});
        return checked.ok ? ({ action: 'accept', content: checked.value as T } as ElicitOutcome<T>) : undefined;
      },
      undefined,
      options.beforeTask,
    );
  }

  /**
   * Sends the user to a URL (for secrets, payments, OAuth flows: never ask for those in a form).
   * Resolves to the user's consent outcome, not to the completion of the flow. `elicitationId`
   * is sent on the legacy era only: the 2026-07-28 revision dropped it, with the
   * `notifications/elicitation/complete` channel it keyed.
   */
  async elicitUrl(
    message: string,
    url: string,
    options: McpAskOptions & { elicitationId?: string } = {},
  ): Promise<{ action: 'accept' | 'decline' | 'cancel' }> {
    this.require('elicitation.url', { elicitation: { url: {} } }, 'URL elicitation');
    const params: JsonObject = { mode: 'url', message, url };
    if (this.era === 'legacy')
      params.elicitationId = options.elicitationId ?? `${this.requestId}-${this.inputCounter + 1}`;
    return this.ask(
      options.key ?? `elicitation-${++this.inputCounter}`,
      'elicitation/create',
      params,
      async (answer) =>
        isObject(answer) && ['accept', 'decline', 'cancel'].includes(answer.action as string)
          ? { action: answer.action as 'accept' | 'decline' | 'cancel' }
          : undefined,
      undefined,
      options.beforeTask,
    );
  }

  /** Asks the client's model for a completion (`sampling/createMessage`). */
  async sample(request: SamplingRequest, options: McpAskOptions = {}): Promise<SamplingResult> {
    this.require(
      request.tools ? 'sampling.tools' : 'sampling',
      request.tools ? { sampling: { tools: {} } } : { sampling: {} },
      'sampling',
    );
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
      async (answer) =>
        rootsResultProblem(answer) === undefined ? ((answer as JsonObject).roots as unknown as McpRoot[]) : undefined,
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
    this.facts.closeStream?.();
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

  /** A question to the client, asked the way this call can ask it (see askClient). */
  private ask<T>(
    key: string,
    method: string,
    params: JsonObject,
    accept: (answer: unknown) => Promise<T | undefined>,
    problem?: (answer: unknown) => string | undefined,
    beforeTask?: boolean,
  ): Promise<T> {
    const support = this.interaction();
    return askClient(
      {
        era: this.era,
        task: this.runHooks,
        inputs: this.inputs,
        probe: this.probe,
        broker: this.facts.broker,
        send: (request) => this.emit(request),
        signal: () => this.signal,
        timeoutMs: support.timeoutMs,
        owner: this.session?.id,
      },
      { key, method, params, accept, problem, beforeTask },
    );
  }

  get sessionId(): string | undefined {
    return this.session?.id;
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
    const holder = (this.stateHolder ??= requestState());
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
    return this.transportRequest;
  }
  /**
   * The caller's network address over HTTP: Express's `req.ip` (which honours 'trust proxy'),
   * else the socket's remote address. Undefined where the transport has none (stdio, in-process).
   */
  get clientAddress(): string | undefined {
    return this.facts.clientAddress?.();
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
    if (this.runHooks) {
      if (!(progress > this.lastProgress)) return;
      this.lastProgress = progress;
      return this.runHooks.status(message ?? (total !== undefined ? `${progress}/${total}` : String(progress)));
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
    if (this.runHooks) return this.runHooks.status(typeof data === 'string' ? data : JSON.stringify(data));
    const threshold = this.logLevel;
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

const NO_ARGUMENTS: JsonObject = Object.freeze({}) as JsonObject;
const ignore = (): void => undefined;

function isObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
