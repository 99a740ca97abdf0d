import { randomUUID } from 'node:crypto';
import { Observable, Subject, catchError, from, isObservable, of, switchMap, type Subscription } from 'rxjs';
import type { McpNotificationBus } from './notification-bus.js';
import type { McpObservers } from '../telemetry/observer.js';
import { listen } from './subscriptions.js';
import { freezeResult } from './serialize.js';
import { McpContext, isLogLevel, type InteractionSupport, type RequestEnvelope } from './context.js';
import { digestArguments, type RequestStateCodec } from './interaction.js';
import { McpError, McpStoreUnavailableError, storeUnavailableFailure } from './errors.js';
import {
  ErrorCode,
  failure,
  success,
  type JsonRpcFailure,
  type JsonRpcId,
  type JsonRpcMessage,
  type JsonRpcRequest,
} from './json-rpc.js';
import type { ListsCacheOption, McpAccess, McpCatalog, McpListed } from './catalog.js';
import { missingScopes } from '../auth/mcp-auth.interface.js';
import { DEFAULT_PAGE_SIZE, PagedList, type PageAdjust } from './paging.js';
import type { CacheHint, Implementation, JsonObject } from './mcp-types.js';
import {
  LEGACY_PROTOCOL_VERSIONS,
  META_SERVER_INFO,
  MODERN_PROTOCOL_VERSIONS,
  negotiateLegacyVersion,
  type ProtocolEra,
} from './versions.js';

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

/** Who sends a request, as the transport knows before it runs: for decisions taken per caller (tool sets). */
export interface McpCaller {
  principal?: { id: string; scopes?: string[]; claims?: Record<string, unknown> };
  transportRequest?: unknown;
}

/** The scopes one request needs, from its params (see {@link McpDispatcher.requiredScopes}). */
export type ScopeResolver = (params: JsonObject, caller?: McpCaller) => readonly string[] | undefined;

/**
 * Checks the `Mcp-Param-*` headers of a modern request against its params (see
 * {@link McpDispatcher.checkHeaders}): a message on mismatch, else undefined.
 */
export type HeaderCheck = (params: JsonObject, getHeader: (name: string) => string | undefined, caller?: McpCaller) => string | undefined;

type Result = JsonObject;
type MethodHandler = (
  params: JsonObject,
  ctx: McpContext,
  env: RequestEnvelope,
) => Result | Promise<Result> | Observable<Result>;

/**
 * The dispatcher: routes one JSON-RPC request to its method for the request's era and answers
 * with an Observable of messages (notifications, then exactly one response). It owns the
 * lifecycle methods (`ping`, `logging/setLevel`, `server/discover`, `subscriptions/listen`);
 * features (tools, resources, prompts, completion) install their methods into it. It knows
 * nothing of HTTP or Nest; transports feed it envelopes and write what it emits.
 */
export class McpDispatcher {
  private readonly legacyMethods = new Map<string, MethodHandler>();
  private readonly modernMethods = new Map<string, MethodHandler>();
  private readonly serverInfoMeta: JsonObject;
  private readonly declaredCapabilities: JsonObject = { logging: {} };
  private readonly shutdownSubject = new Subject<void>();
  private readonly scopeResolvers = new Map<string, ScopeResolver>();
  private readonly headerChecks = new Map<string, HeaderCheck>();
  /** Set by the resources feature: refuses URIs that nothing serves, then runs their guards. */
  checkSubscribable?: (uri: string, era: ProtocolEra) => (ctx: McpContext) => Promise<void>;
  /**
   * Told of every request as it enters and leaves (OpenTelemetry, McpEvents); set at bootstrap.
   * Undefined when nothing observes, so a request then pays one property check.
   */
  observer?: McpObservers;
  /**
   * Settles what depends on the caller before its requests (`body`: one message or a batch) are
   * looked at (the tool sets it may use), so that the scope and header checks, which cannot
   * wait, read it. Set only when tool sets are configured; never rejects (a failure is kept for
   * the request to answer).
   */
  prepareCaller?: (caller: McpCaller, body: unknown) => void | Promise<void>;

  constructor(
    private readonly config: McpDispatcherConfig,
    private readonly catalog: Pick<McpCatalog, 'version'>,
  ) {
    this.serverInfoMeta = {
      [META_SERVER_INFO]: { name: config.serverInfo.name, version: config.serverInfo.version },
    };
    this.legacyMethods.set('ping', () => ({}));
    this.legacyMethods.set('logging/setLevel', (params, _ctx, env) => {
      if (!isLogLevel(params.level)) {
        throw new McpError(
          ErrorCode.InvalidParams,
          `Unknown log level ${JSON.stringify(params.level ?? null)}. Use one of: debug, info, notice, warning, error, critical, alert, emergency.`,
        );
      }
      return Promise.resolve(env.setLogLevel?.(params.level)).then(() => ({}));
    });
    this.modernMethods.set('server/discover', () => this.discover());
    const bus = config.bus;
    if (bus) {
      this.modernMethods.set('subscriptions/listen', (params, ctx) =>
        listen(params, ctx, bus, this.shutdownSubject, {
          maxResourceSubscriptions: config.subscriptionsPerSession ?? 100,
          checkUri: this.checkSubscribable && ((uri) => this.checkSubscribable!(uri, 'modern')),
        }),
      );
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
    const extensions = typeof current === 'object' && current !== null && !Array.isArray(current) ? (current as JsonObject) : {};
    this.declaredCapabilities.extensions = { ...extensions, [id]: settings };
  }

  /**
   * A paged list of catalog items: one page size, cursors bound to the catalog version, and
   * modern pages carrying the list cache hints, for tools, resources, templates and prompts alike.
   */
  pagedList<T extends McpAccess>(key: string, method: string, items: () => readonly T[], describe: (item: T, era: ProtocolEra) => unknown): PagedList<T> {
    const { listCache } = this.config;
    // Static hints (the list's and its items') are baked into the cached pages; a function
    // anywhere makes listPage recompute the hints per request.
    const staticBase: CacheHint = typeof listCache === 'function' ? { ttlMs: 0, cacheScope: 'private' } : listCache;
    return new PagedList<T>({
      key,
      method,
      pageSize: this.config.pageSize ?? DEFAULT_PAGE_SIZE,
      version: () => this.catalog.version,
      items,
      describe,
      finishModern: (page, pageItems) => this.decorate({ ...page, ...combineHints(staticBase, pageItems, undefined) }, 'modern'),
      restricted: (item) => item.visibleTo !== undefined || this.scopesApply(item) || this.guardsApply(item),
      dynamic: (item) => typeof listCache === 'function' || typeof (item as McpListed).listCache === 'function',
    });
  }

  /**
   * One page of a list for this caller, leaving out what its scopes or guards refuse (the guards
   * run as for a call, with the list's method, so `McpExecutionContext.isListing()` is true).
   * Without such items the cached pages are served as they are; otherwise the page is built for
   * this caller and marked `cacheScope: "private"`.
   */
  listPage<T extends McpAccess>(list: PagedList<T>, params: JsonObject, ctx: McpContext, era: ProtocolEra): Result | Promise<Result> {
    const adjust = list.dynamic() ? this.perRequestHints<T>(list, ctx) : undefined;
    const hidden = this.hidden(list.restricted(), ctx);
    if (hidden === undefined) return list.page(params.cursor, era, undefined, adjust);
    return hidden.then((set) => list.page(params.cursor, era, set, adjust));
  }

  /**
   * What this caller may not see among `restricted` items (its scopes, guards, client
   * capabilities refuse), its guards asked as for `method` (the request's own by default):
   * undefined when there is nothing to check.
   */
  hidden<T extends McpAccess>(restricted: readonly T[], ctx: McpContext, method?: string): Promise<Set<T>> | undefined {
    if (restricted.length === 0) return undefined;
    return Promise.all(restricted.map((item) => this.visible(item, ctx, method))).then((visible) => {
      const hidden = new Set<T>();
      visible.forEach((ok, i) => !ok && hidden.add(restricted[i]));
      return hidden;
    });
  }

  /** The cache hints of one page for this caller, when the list's or an item's hint is a function. */
  private perRequestHints<T>(list: PagedList<T>, ctx: McpContext): PageAdjust<T> {
    const { listCache } = this.config;
    return (page, items) => {
      const base = typeof listCache === 'function' ? listCache(list.key, ctx) : listCache;
      return { ...page, ...combineHints(base, items as readonly McpListed[], ctx) };
    };
  }

  private scopesApply(item: McpAccess): boolean {
    return this.config.enforceScopes === true && (this.config.guardAwareLists !== false || item.conceal === true) && (item.requiredScopes?.length ?? 0) > 0;
  }

  private guardsApply(item: McpAccess): boolean {
    return (this.config.guardAwareLists !== false || item.conceal === true) && item.authorize !== undefined;
  }

  private visible(item: McpAccess, ctx: McpContext, method = ctx.method): boolean | Promise<boolean> {
    if (item.visibleTo?.(ctx.clientCapabilities) === false) return false;
    if (this.scopesApply(item) && missingScopes(item.requiredScopes!, ctx.auth?.scopes).length > 0) return false;
    if (!this.guardsApply(item)) return true;
    return item.authorize!(ctx, method).then(
      () => true,
      () => false,
    );
  }

  /**
   * Whether a caller may list a repository: its scopes (when enforced), then its guards. A
   * repository's items cannot be listed without running it, so this holds even with
   * `guardAwareLists: false`.
   */
  mayList(access: McpAccess, ctx: McpContext): boolean | Promise<boolean> {
    if (this.config.enforceScopes === true && (access.requiredScopes?.length ?? 0) > 0 && missingScopes(access.requiredScopes!, ctx.auth?.scopes).length > 0) {
      return false;
    }
    if (!access.authorize) return true;
    return access.authorize(ctx, ctx.method).then(
      () => true,
      () => false,
    );
  }

  /** The modern cache hint of a page built per request (a repository's), from the list's hint and its items'. */
  pageHint(key: string, ctx: McpContext, items: readonly McpListed[]): CacheHint {
    const { listCache } = this.config;
    return combineHints(typeof listCache === 'function' ? listCache(key, ctx) : listCache, items, ctx);
  }

  /** Declares how to find the scopes a method's request needs (feature modules: tools, resources, prompts, completion). */
  setRequiredScopes(method: string, resolver: ScopeResolver): void {
    this.scopeResolvers.set(method, resolver);
  }

  /** Registers a method for one or both eras (used by feature modules such as tools and resources). */
  setMethod(method: string, eras: readonly ProtocolEra[], handler: MethodHandler): void {
    for (const era of eras) (era === 'modern' ? this.modernMethods : this.legacyMethods).set(method, handler);
  }

  hasMethod(era: ProtocolEra, method: string): boolean {
    return (era === 'modern' ? this.modernMethods : this.legacyMethods).has(method);
  }

  /** Declares how to check the `Mcp-Param-*` headers of a method's modern request (the tools feature). */
  setHeaderCheck(method: string, check: HeaderCheck): void {
    this.headerChecks.set(method, check);
  }

  /**
   * Checks the `Mcp-Param-*` headers of a modern request against its params, for the method's
   * {@link HeaderCheck}. Returns a message on mismatch.
   */
  checkHeaders(method: string, params: JsonObject, getHeader: (name: string) => string | undefined, caller?: McpCaller): string | undefined {
    return this.headerChecks.get(method)?.(params, getHeader, caller);
  }

  /**
   * OAuth scopes the target of a request needs, for the transport to enforce before it runs: the
   * tool of `tools/call`, the resource or template serving the URI of `resources/read` and
   * `resources/subscribe`, the prompt of `prompts/get`, the ref's prompt or template of
   * `completion/complete`. The single source every entry path asks.
   */
  requiredScopes(method: string, params: JsonObject | undefined, caller?: McpCaller): readonly string[] | undefined {
    return this.scopeResolvers.get(method)?.(params ?? {}, caller);
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
   * `onHandlerStart` is called when a handler starts and returns what to call once it has settled:
   * a handler that ignores the abort keeps running after an unsubscribe, and a bound on running
   * handlers (`limits.maxRequestsInFlight`) must count it until its promise settles.
   */
  handle(request: JsonRpcRequest, env: RequestEnvelope, onHandlerStart?: () => () => void): Observable<JsonRpcMessage> {
    const { id, method } = request;
    const handler = (env.era === 'modern' ? this.modernMethods : this.legacyMethods).get(method);
    return new Observable<JsonRpcMessage>((subscriber) => {
      const probe = this.observer?.request({
        request,
        era: env.era,
        protocolVersion: env.protocolVersion,
        sessionId: env.session?.id,
        principal: env.principal,
        transportRequest: env.transportRequest,
      });
      if (!handler) {
        const response = this.methodNotFoundResponse(id, method, env.era);
        probe?.end(response);
        subscriber.next(response);
        subscriber.complete();
        return;
      }
      const params = request.params ?? {};
      const meta = isObject(params._meta) ? params._meta : {};
      const emit = probe?.message
        ? (n: JsonRpcMessage) => {
            probe.message!(n);
            subscriber.next(n);
          }
        : (n: JsonRpcMessage) => subscriber.next(n);
      const ctx = new McpContext(id, method, env, meta, emit, this.config.interaction);
      if (probe) ctx.probe = probe;
      let settled = false;
      let handlerDone = false;
      const handlerSettled = onHandlerStart?.();
      // The handler itself, and every promise of app code it reported (ctx.holdWork).
      let outstanding = 1;
      const workEnded = (): void => {
        if (--outstanding === 0) handlerSettled?.();
      };
      if (handlerSettled) {
        ctx.holdWork = (work) => {
          outstanding++;
          work.then(workEnded, workEnded);
        };
      }
      const endHandler = (): void => {
        if (handlerDone) return;
        handlerDone = true;
        workEnded();
      };
      /** A handler's promise still pending: its end is its settling, not the unsubscribe. */
      let pendingPromise = false;
      const settle = (message: JsonRpcMessage): void => {
        settled = true;
        if (!pendingPromise) endHandler();
        ctx.close();
        probe?.end(message);
        subscriber.next(message);
        subscriber.complete();
      };
      let inner: Subscription | undefined;
      const start = (): void => {
        try {
          const outcome = handler(params, ctx, env);
          if (isObservable(outcome)) {
            let last: Result | undefined;
            inner = outcome.subscribe({
              next: (value) => (last = value),
              error: (error: unknown) => settle(this.errorResponse(id, error)),
              complete: () => settle(success(id, this.decorate(last ?? {}, env.era))),
            });
          } else if (isPromiseLike(outcome)) {
            pendingPromise = true;
            outcome.then(
              (result) => {
                endHandler();
                if (!subscriber.closed) settle(success(id, this.decorate(result, env.era)));
              },
              (error: unknown) => {
                endHandler();
                if (!subscriber.closed) settle(this.errorResponse(id, error));
              },
            );
          } else {
            settle(success(id, this.decorate(outcome, env.era)));
          }
        } catch (error) {
          settle(this.errorResponse(id, error));
        }
      };
      if (probe?.run) probe.run(start);
      else start();
      return () => {
        ctx.close();
        if (!settled) {
          ctx.abortCall(new McpCancelledError());
          probe?.end(undefined);
        }
        inner?.unsubscribe();
        if (!pendingPromise) endHandler();
      };
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
    return {
      ...result,
      resultType: result.resultType ?? 'complete',
      _meta: isObject(result._meta) ? { ...result._meta, ...this.serverInfoMeta } : this.serverInfoMeta,
    };
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
    const codec = this.config.requestState;
    const binding = () => ({ method: ctx.method, name, digest: digestArguments(args ?? null), principal: ctx.principal });
    const askOrFail = (error: unknown, round: number): Observable<Result> => {
      if (!ctx.inputRequired) throw error;
      const result: Result = { resultType: 'input_required', inputRequests: { ...ctx.inputs.pending } };
      if (codec) result.requestState = codec.encode({ ...binding(), answers: ctx.inputs.answers, round: round + 1 });
      return of(result);
    };
    // Most calls carry no earlier answers: no state to verify, nothing to await first.
    if (params.requestState === undefined && params.inputResponses === undefined) {
      return run().pipe(catchError((error: unknown) => askOrFail(error, 0)));
    }
    const restore = async (): Promise<number> => {
      let round = 0;
      if (params.requestState !== undefined && codec) {
        const state = await codec.decode(params.requestState, binding());
        Object.assign(ctx.inputs.answers, state.answers);
        round = state.round;
      }
      if (isObject(params.inputResponses)) Object.assign(ctx.inputs.answers, params.inputResponses);
      return round;
    };
    return from(restore()).pipe(switchMap((round) => run().pipe(catchError((error: unknown) => askOrFail(error, round)))));
  }

  private errorResponse(id: JsonRpcId, error: unknown): JsonRpcMessage {
    if (error instanceof McpError) return failure(id, error.code, error.message, error.data);
    // A method's store (tasks on Redis) is away: the same answer as every other store-down path.
    if (error instanceof McpStoreUnavailableError) return storeUnavailableFailure(id, error);
    const ref = randomUUID();
    const err = error instanceof Error ? error : new Error(String(error));
    this.config.logger.error(`Request ${String(id)} failed (ref ${ref}): ${err.message}`, err.stack);
    const message = this.config.exposeInternalErrors ? `${err.message} (reference ${ref})` : `Internal error (reference ${ref}).`;
    return failure(id, ErrorCode.InternalError, message);
  }

  methodNotFoundResponse(id: JsonRpcId, method: string, era: ProtocolEra): JsonRpcFailure {
    const other = era === 'modern' ? this.legacyMethods : this.modernMethods;
    const hint = other.has(method) || method === 'initialize'
      ? era === 'modern'
        ? ` "${truncate(method)}" exists only in the legacy protocol (${LEGACY_PROTOCOL_VERSIONS.join(', ')}), which opens with initialize.`
        : ` "${truncate(method)}" exists only in protocol ${MODERN_PROTOCOL_VERSIONS.join(', ')}.`
      : '';
    return failure(id, ErrorCode.MethodNotFound, `Method not found: "${truncate(method)}".${hint}`);
  }
}

/** The reason a cancelled call's AbortSignal carries. */
export class McpCancelledError extends Error {
  constructor() {
    super('The request was cancelled.');
    this.name = 'McpCancelledError';
  }
}

export function isObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

export function isPromiseLike<T>(value: unknown): value is PromiseLike<T> {
  return typeof value === 'object' && value !== null && typeof (value as PromiseLike<T>).then === 'function';
}

export function truncate(text: string, max = 80): string {
  return text.length > max ? `${text.slice(0, max)}…` : text;
}

export { isLogLevel };

/**
 * A page's hints from the list's and its items': the shortest TTL, and `private` when any is.
 * Function hints are skipped without a caller (the cached pages) and computed with one.
 */
function combineHints(base: CacheHint, items: readonly unknown[], ctx: McpContext | undefined): CacheHint {
  let { ttlMs, cacheScope } = base;
  for (const item of items) {
    const declared = (item as McpListed).listCache;
    if (declared === undefined) continue;
    if (typeof declared === 'function' && ctx === undefined) continue;
    const hint = typeof declared === 'function' ? declared(ctx!) : declared;
    if (!hint) continue;
    if (typeof hint.ttlMs === 'number' && Number.isSafeInteger(hint.ttlMs) && hint.ttlMs >= 0) ttlMs = Math.min(ttlMs, hint.ttlMs);
    if (hint.cacheScope === 'private') cacheScope = 'private';
  }
  return { ttlMs, cacheScope };
}
