import { ToolError } from './errors.js';
import type { JsonRpcId, JsonRpcMessage, JsonRpcRequest } from './json-rpc.js';
import type { Implementation, JsonObject, LogLevel } from './mcp-types.js';
import type { McpSession } from './session-store.js';
import type { ProtocolEra } from './versions.js';
import {
  requestState,
  type InteractionSupport,
  type McpRequestProbe,
  type McpSessionState,
  type RequestEnvelope,
  type SessionStateHolder,
} from './call-facts.js';

/**
 * What every call is, before it talks back to its client: its facts (who, over which revision,
 * with which capabilities, session and state), its identity as guards see it, its target, and
 * its lifetime (cancellation, the in-flight hold, the end of its stream). {@link McpContext} adds
 * the ways to talk back (progress, logs, questions to the client) and the task members; use it,
 * not this class.
 */
export abstract class McpContextBase {
  // Every field is set when the object is built (undefined until known), so every call object
  // has one shape and the code reading it stays monomorphic: this object is made on every call.
  private controller?: AbortController = undefined;
  private abortReason?: unknown = undefined;
  private aborted = false;
  protected closed = false;
  protected emit: (message: JsonRpcMessage) => void;
  protected support?: InteractionSupport = undefined;
  /** @internal The request's observers (telemetry, events), told of its round trips. */
  probe?: McpRequestProbe = undefined;
  /**
   * @internal Told of the app handler's own promise (guards, interceptors, the method), which
   * runs on after a cancel or disconnect ends the call: the call's in-flight slot
   * (`limits.maxRequestsInFlight`) is held until it settles.
   */
  holdWork?: (work: PromiseLike<unknown>) => void = undefined;
  /**
   * @internal The capability the request targets (the tool of `tools/call`...), looked up once
   * per call through the method table and shared by the scope check, the header rules, the
   * handler and telemetry. `null` once looked up and not found.
   */
  target?: unknown = undefined;

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
  protected readonly facts: RequestEnvelope;
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

  /**
   * @internal Binds the call to the stream its messages go to (the dispatcher does, as the
   * request starts) and the schema support its questions use.
   */
  attach(emit: (message: JsonRpcMessage) => void, support: InteractionSupport | undefined): this {
    this.emit = emit;
    this.support = support;
    return this;
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
   * Legacy era, resumable streams (2025-11-25 clients on a stateful session): ends the call's SSE
   * response now; the call goes on and the client picks up the rest with `Last-Event-ID`.
   * Elsewhere it does nothing.
   */
  closeSseStream(): void {
    this.facts.closeStream?.();
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
