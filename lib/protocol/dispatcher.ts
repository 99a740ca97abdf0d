import { randomUUID } from 'node:crypto';
import { Observable, Subject, from, switchMap } from 'rxjs';
import type { McpNotificationBus } from './notification-bus.js';
import type { McpCallObserver } from './call-facts.js';
import { listen } from './subscriptions.js';
import { DispatchedCall } from './dispatched-call.js';
import { McpLists } from './list-access.js';
import { McpMethods } from './methods.js';
import { McpMethodTable } from './method-table.js';
import type { CallHold } from './call-hold.js';
import { copyOf, isObject, metaOf } from './values.js';
import { freezeResult } from './serialize.js';
import { McpContext, isLogLevel, type InteractionSupport, type RequestEnvelope } from './context.js';
import { digestArguments, type RequestStateCodec } from './interaction.js';
import { McpError, McpStoreUnavailableError, storeUnavailableFailure } from './errors.js';
import { ErrorCode, failure, type JsonRpcId, type JsonRpcMessage, type JsonRpcRequest } from './json-rpc.js';
import type { ListsCacheOption, McpAccess, McpToolCatalog, McpListed } from './catalog.js';
import type { PagedList } from './paging.js';
import type { CacheHint, Implementation, JsonObject } from './mcp-types.js';
import { META_SERVER_INFO, MODERN_PROTOCOL_VERSIONS, negotiateLegacyVersion, type ProtocolEra } from './versions.js';

export interface McpDispatcherLogger {
  error(message: string, trace?: string): void;
  warn(message: string): void;
}

export interface McpDispatcherConfig {
  serverInfo: Implementation;
  instructions?: string;
  /** Cache hints for `server/discover` (modern era). */
  discoverCache: CacheHint;
  /** Cache hints for list results (modern era): one hint, or computed per list request. */
  listCache: ListsCacheOption;
  /** Items per page of list results. @default 100 */
  pageSize?: number;
  /** Show raw messages of unexpected errors to the client (development only). */
  exposeInternalErrors: boolean;
  logger: McpDispatcherLogger;
  /** Schema handling for elicitation, and how long to wait for client answers (legacy era). */
  interaction?: InteractionSupport;
  /** Protects the state of multi-round-trip requests (modern era). */
  requestState?: RequestStateCodec;
  /** Change events for `subscriptions/listen` streams (modern era). */
  bus?: McpNotificationBus;
  /**
   * Leave out of every list what the caller's guards refuse (and, with `enforceScopes`, what its
   * scopes do not cover). @default true
   */
  guardAwareLists?: boolean;
  /** Whether the transports enforce `requiredScopes` (McpModule's `auth` is set). @default false */
  enforceScopes?: boolean;
  /** `limits.subscriptionsPerSession`, also the most URIs one `subscriptions/listen` filter may name. @default 100 */
  subscriptionsPerSession?: number;
}

export type { HeaderCheck, McpCaller, McpMethodSpec, MethodHandler, ScopeResolver, TargetFinder } from './methods.js';

type Result = JsonObject;

/**
 * The dispatcher: routes one JSON-RPC request to its method for the request's era and answers
 * with an Observable of messages (notifications, then exactly one response). It owns the
 * lifecycle methods (`ping`, `logging/setLevel`, `server/discover`, `subscriptions/listen`);
 * features (tools, resources, prompts, completion) install their methods into it. It knows
 * nothing of HTTP or Nest; transports feed it envelopes and write what it emits.
 */
export class McpDispatcher extends McpMethodTable {
  private readonly serverInfoMeta: JsonObject;
  private readonly declaredCapabilities: JsonObject = { logging: {} };
  private readonly shutdownSubject = new Subject<void>();
  /** Set by the resources feature: refuses URIs that nothing serves, then runs their guards. */
  checkSubscribable?: (uri: string, era: ProtocolEra) => (ctx: McpContext) => Promise<void>;
  /**
   * Told of every request as it enters and leaves (OpenTelemetry, McpEvents); set at bootstrap.
   * Undefined when nothing observes, so a request then pays one property check.
   */
  observer?: McpCallObserver;

  private readonly lists: McpLists;

  constructor(
    private readonly config: McpDispatcherConfig,
    catalog: Pick<McpToolCatalog, 'version'>,
  ) {
    super();
    this.lists = new McpLists(config, catalog, (result, era) => this.decorate(result, era));
    this.serverInfoMeta = {
      [META_SERVER_INFO]: { name: config.serverInfo.name, version: config.serverInfo.version },
    };
    this.define(McpMethods.ping, { handler: () => ({}) });
    this.define(McpMethods.setLogLevel, {
      handler: (params, ctx) => {
        if (!isLogLevel(params.level)) {
          throw new McpError(
            ErrorCode.InvalidParams,
            `Unknown log level ${JSON.stringify(params.level ?? null)}. Use one of: debug, info, notice, warning, error, critical, alert, emergency.`,
          );
        }
        return Promise.resolve(ctx.setLogLevel(params.level)).then(() => ({}));
      },
    });
    this.define(McpMethods.discover, { handler: () => this.discover() });
    const bus = config.bus;
    if (bus) {
      this.define(McpMethods.subscriptionsListen, {
        handler: (params, ctx) =>
          listen(params, ctx, bus, this.shutdownSubject, {
            maxResourceSubscriptions: config.subscriptionsPerSession ?? 100,
            checkUri: this.checkSubscribable && ((uri) => this.checkSubscribable!(uri, 'modern')),
          }),
      });
    }
  }

  /** Ends long-lived subscriptions gracefully (each gets a `complete` result). */
  shutdown(): void {
    this.shutdownSubject.next();
  }

  /** The capabilities object advertised by `initialize` and `server/discover`. */
  capabilities(): JsonObject {
    return this.declaredCapabilities;
  }

  /** Declares (or replaces) one capability, for feature modules such as resources and prompts. */
  declareCapability(name: string, value: JsonObject): void {
    this.declaredCapabilities[name] = value;
  }

  private readonly legacyCapabilities = new Map<string, { value: JsonObject; since: string }>();

  /**
   * Declares a capability that only the legacy `initialize` result carries, from protocol
   * revision `since` on (the experimental tasks of 2025-11-25, which 2026-07-28 replaced with an
   * extension that `server/discover` advertises instead).
   */
  declareLegacyCapability(name: string, value: JsonObject, since: string): void {
    this.legacyCapabilities.set(name, { value, since });
  }

  /**
   * Declares one extension under `capabilities.extensions` (tasks, MCP Apps, skills...), beside
   * any other feature's: each extension id names its own settings object.
   */
  declareExtension(id: string, settings: JsonObject = {}): void {
    const current = this.declaredCapabilities.extensions;
    const extensions =
      typeof current === 'object' && current !== null && !Array.isArray(current) ? (current as JsonObject) : {};
    this.declaredCapabilities.extensions = { ...extensions, [id]: settings };
  }

  /** @see McpLists.pagedList */
  pagedList<T extends McpAccess>(
    key: string,
    method: string,
    items: () => readonly T[],
    describe: (item: T, era: ProtocolEra) => unknown,
  ): PagedList<T> {
    return this.lists.pagedList(key, method, items, describe);
  }

  /** @see McpLists.listPage */
  listPage<T extends McpAccess>(
    list: PagedList<T>,
    params: JsonObject,
    ctx: McpContext,
    era: ProtocolEra,
  ): Result | Promise<Result> {
    return this.lists.listPage(list, params, ctx, era);
  }

  /** @see McpLists.hidden */
  hidden<T extends McpAccess>(restricted: readonly T[], ctx: McpContext, method?: string): Promise<Set<T>> | undefined {
    return this.lists.hidden(restricted, ctx, method);
  }

  /** @see McpLists.mayList */
  mayList(access: McpAccess, ctx: McpContext): boolean | Promise<boolean> {
    return this.lists.mayList(access, ctx);
  }

  /** @see McpLists.pageHint */
  pageHint(key: string, ctx: McpContext, items: readonly McpListed[]): CacheHint {
    return this.lists.pageHint(key, ctx, items);
  }

  /** The `initialize` result for a negotiated version (legacy era). */
  initializeResult(requestedVersion: unknown): { protocolVersion: string; result: JsonObject } {
    const protocolVersion = negotiateLegacyVersion(requestedVersion);
    let capabilities = this.capabilities();
    for (const [name, { value, since }] of this.legacyCapabilities) {
      if (protocolVersion >= since) capabilities = { ...capabilities, [name]: value };
    }
    const result: JsonObject = {
      protocolVersion,
      capabilities,
      serverInfo: this.config.serverInfo,
    };
    if (this.config.instructions !== undefined) result.instructions = this.config.instructions;
    return { protocolVersion, result };
  }

  /**
   * Handles one request. The Observable emits zero or more notifications, then one response,
   * then completes; unsubscribing before that cancels the work and aborts `ctx.signal`.
   * `hold`, the call's in-flight slot, is held by the handler too until it has settled: a handler
   * that ignores the abort keeps running after an unsubscribe, and a bound on running handlers
   * (`limits.maxRequestsInFlight`) must count it until its promise settles.
   */
  handle(request: JsonRpcRequest, call: McpContext | RequestEnvelope, hold?: CallHold): Observable<JsonRpcMessage> {
    const { id, method } = request;
    const era = call.era;
    const handler = this.methods.get(method)?.[era];
    return new Observable<JsonRpcMessage>((subscriber) => {
      const emit = (n: JsonRpcMessage): void => {
        probe?.message?.(n);
        subscriber.next(n);
      };
      const ctx =
        call instanceof McpContext
          ? call.attach(emit, this.config.interaction)
          : new McpContext(id, method, call, metaOf(request.params), emit, this.config.interaction, request);
      const probe = this.observer?.call(ctx);
      if (!handler) {
        const response = this.methodNotFoundResponse(id, method, era);
        probe?.end(response);
        subscriber.next(response);
        subscriber.complete();
        return;
      }
      if (probe) ctx.probe = probe;
      const dispatched = new DispatchedCall(this, id, ctx, probe, subscriber, hold);
      const params = request.params ?? {};
      if (probe?.run) probe.run(() => dispatched.start(handler, params));
      else dispatched.start(handler, params);
      return dispatched;
    });
  }

  /**
   * Every modern result carries `resultType` and the server's identity. Public so that feature
   * methods can precompute decorated results (list pages) once.
   */
  decorate(result: Result, era: ProtocolEra): Result {
    if (era === 'legacy') return result;
    if (result.resultType !== undefined && isObject(result._meta) && META_SERVER_INFO in result._meta) {
      return result;
    }
    // Built by assignment, not by a spread: this runs on every modern answer (see copyOf).
    const decorated = copyOf(result);
    decorated.resultType = result.resultType ?? 'complete';
    decorated._meta = isObject(result._meta)
      ? Object.assign(copyOf(result._meta), this.serverInfoMeta)
      : this.serverInfoMeta;
    return decorated;
  }

  private discoverResult?: Result;

  /** Built once: capabilities are settled by the time the first client asks. */
  private discover(): Result {
    this.discoverResult ??= freezeResult(this.decorate(this.buildDiscover(), 'modern'));
    return this.discoverResult;
  }

  private buildDiscover(): Result {
    const result: Result = {
      supportedVersions: [...MODERN_PROTOCOL_VERSIONS],
      capabilities: this.capabilities(),
      serverInfo: this.config.serverInfo,
      ttlMs: this.config.discoverCache.ttlMs,
      cacheScope: this.config.discoverCache.cacheScope,
    };
    if (this.config.instructions !== undefined) result.instructions = this.config.instructions;
    return result;
  }

  /**
   * Runs a handler that may ask the client for input. On the modern era it restores the answers
   * of earlier rounds from `requestState`, and when the handler stops for missing input it ends
   * the call with an `input_required` result carrying the questions and a fresh state.
   */
  interactive(
    params: JsonObject,
    name: string,
    args: unknown,
    ctx: McpContext,
    run: () => Observable<Result>,
  ): Observable<Result> {
    if (ctx.era !== 'modern') return run();
    // Most calls carry no earlier answers: no state to verify, nothing to await first. The stop
    // for missing input is turned into its result where the call's error arrives (the
    // DispatchedCall), not by another Observable around the handler's.
    const runFrom = (round: number): Observable<Result> => {
      ctx.recoverInput = (error) => this.inputRequired(error, ctx, name, args, round);
      return run();
    };
    if (params.requestState === undefined && params.inputResponses === undefined) return runFrom(0);
    const codec = this.config.requestState;
    const restore = async (): Promise<number> => {
      let round = 0;
      if (params.requestState !== undefined && codec) {
        const state = await codec.decode(params.requestState, stateBinding(ctx, name, args));
        Object.assign(ctx.inputs.answers, state.answers);
        round = state.round;
      }
      if (isObject(params.inputResponses)) Object.assign(ctx.inputs.answers, params.inputResponses);
      return round;
    };
    return from(restore()).pipe(switchMap(runFrom));
  }

  /** A handler stopped for missing input: the `input_required` result; any other error goes on. */
  private inputRequired(error: unknown, ctx: McpContext, name: string, args: unknown, round: number): Result {
    if (!ctx.inputRequired) throw error;
    const codec = this.config.requestState;
    const result: Result = { resultType: 'input_required', inputRequests: { ...ctx.inputs.pending } };
    if (codec)
      result.requestState = codec.encode({
        ...stateBinding(ctx, name, args),
        answers: ctx.inputs.answers,
        round: round + 1,
      });
    return result;
  }

  /** @internal The error response of a failed call: its McpError, or an internal error logged with a reference. */
  errorResponse(id: JsonRpcId, error: unknown): JsonRpcMessage {
    if (error instanceof McpError) return failure(id, error.code, error.message, error.data);
    // A method's store (tasks on Redis) is away: the same answer as every other store-down path.
    if (error instanceof McpStoreUnavailableError) return storeUnavailableFailure(id, error);
    const ref = randomUUID();
    const err = error instanceof Error ? error : new Error(String(error));
    this.config.logger.error(`Request ${String(id)} failed (ref ${ref}): ${err.message}`, err.stack);
    const message = this.config.exposeInternalErrors
      ? `${err.message} (reference ${ref})`
      : `Internal error (reference ${ref}).`;
    return failure(id, ErrorCode.InternalError, message);
  }
}

/** What a request state is bound to: the call it was issued for. */
function stateBinding(ctx: McpContext, name: string, args: unknown) {
  return { method: ctx.method, name, digest: digestArguments(args ?? null), principal: ctx.principal };
}

export { McpCancelledError, isObject, isPromiseLike, metaOf, truncate } from './values.js';

export { isLogLevel };
