import { randomUUID } from 'node:crypto';
import type { Observable } from 'rxjs';
import type { McpAccess, McpListed } from './catalog.js';
import type { McpContext } from './context.js';
import { McpError, ToolError, httpExceptionMessage } from './errors.js';
import { isInputRequiredSignal } from './interaction.js';
import { ErrorCode } from './json-rpc.js';
import type { CacheHint, JsonObject } from './mcp-types.js';
import type { PagedList } from './paging.js';
import type { RepositoryLimits } from './repositories.js';
import type { ProtocolEra } from './versions.js';
import type { McpMethodDeclaration } from './methods.js';
import type { McpMethodSpec } from './dispatcher.js';

// What a feature (tools, resources, prompts, completion) is installed with, and the error and
// last-value handling their handlers share.

/** What feature methods (tools, resources, prompts, completion) need from the module configuration. */
export interface McpFeatureOptions {
  /** Cache hints on `resources/read` results unless the resource declares its own (modern era). */
  readCache: CacheHint;
  exposeInternalErrors: boolean;
  logger: { error(message: string, trace?: string): void; warn(message: string): void };
  /** Cursor secret and bounds of resource and prompt repositories. @default per-process secret, default limits */
  repositories?: RepositoryLimits;
}

/** The part of the dispatcher feature methods are installed into. */
export interface McpFeatureHost {
  /** Attaches a feature's handler, target look-up, scopes and header checks to a declared method. */
  define(method: McpMethodDeclaration, spec: McpMethodSpec): void;
  declareCapability(name: string, value: JsonObject): void;
  /** Declares a capability that only the legacy `initialize` result carries, from protocol revision `since` on. */
  declareLegacyCapability(name: string, value: JsonObject, since: string): void;
  /** Declares one extension (`capabilities.extensions[id]`), merged with the others. */
  declareExtension(id: string, settings?: JsonObject): void;
  /** Adds `resultType` and the serverInfo `_meta` of modern results. */
  decorate(result: JsonObject, era: ProtocolEra): JsonObject;
  /**
   * Runs a handler that may ask the client for input (elicitation, sampling, roots): on the
   * modern era a missing answer ends the request with an `input_required` result. That result is
   * made where the call's error reaches the dispatcher, so a method returns this Observable as its
   * outcome (operators that pass errors through may sit between, none that catch them).
   */
  interactive(
    params: JsonObject,
    name: string,
    args: unknown,
    ctx: McpContext,
    run: () => Observable<JsonObject>,
  ): Observable<JsonObject>;
  /** A paged list with the server's page size, catalog-bound cursors and list cache hints. */
  pagedList<T extends McpAccess>(
    key: string,
    method: string,
    items: () => readonly T[],
    describe: (item: T, era: ProtocolEra) => unknown,
  ): PagedList<T>;
  /** One page of a list for this caller: what its scopes or guards refuse is left out. */
  listPage<T extends McpAccess>(
    list: PagedList<T>,
    params: JsonObject,
    ctx: McpContext,
    era: ProtocolEra,
  ): JsonObject | Promise<JsonObject>;
  /**
   * Whether a caller may list something that cannot be listed without running it (a repository):
   * its scopes when the module enforces them, then its guards, whatever `guardAwareLists` says.
   */
  mayList(access: McpAccess, ctx: McpContext): boolean | Promise<boolean>;
  /** What this caller may not see among a list's restricted items; undefined when there is nothing to check. */
  hidden<T extends McpAccess>(restricted: readonly T[], ctx: McpContext, method?: string): Promise<Set<T>> | undefined;
  /** The modern cache hint of a page built per request, from the list's hint and its items'. */
  pageHint(key: string, ctx: McpContext, items: readonly McpListed[]): CacheHint;
  /** The capability a call targets (see {@link McpFeatureHost.setTarget}), from the call when it was looked up already. */
  targetOf(method: string, params: JsonObject | undefined, ctx?: McpContext): unknown;
  /**
   * Checks a URI a client asks to be notified about (`subscriptions/listen` filters); throws the
   * error `resources/read` would give for it. The function it returns runs the resource's guards
   * for a caller and rejects with their refusal.
   */
  checkSubscribable?: (uri: string, era: ProtocolEra) => (ctx: McpContext) => Promise<void>;
}

/** Every scope of several lists, once; undefined when there is none. */
export function union(lists: ReadonlyArray<readonly string[] | undefined>): readonly string[] | undefined {
  const all = new Set<string>();
  for (const list of lists) for (const scope of list ?? []) all.add(scope);
  return all.size ? [...all] : undefined;
}

/**
 * Maps what a resource, prompt or completion handler threw to the JSON-RPC error the client
 * gets: `McpError` as is; a `ToolError` or a Nest `HttpException` (messages meant for the
 * caller) as `-32603` with its message; anything else as `-32603` with a reference id, logged with
 * its stack. Cancellation and requests for client input pass through to the dispatcher.
 */
export function handlerError(
  error: unknown,
  subject: string,
  options: Pick<McpFeatureOptions, 'exposeInternalErrors' | 'logger'>,
): unknown {
  if (error instanceof McpError || isInputRequiredSignal(error)) return error;
  if (error instanceof Error && error.name === 'McpCancelledError') return error;
  const message = callerMessage(error);
  if (message !== undefined) return new McpError(ErrorCode.InternalError, message);
  const ref = randomUUID();
  const err = error instanceof Error ? error : new Error(String(error));
  options.logger.error(`${subject} failed (ref ${ref}): ${err.message}`, err.stack);
  return new McpError(
    ErrorCode.InternalError,
    options.exposeInternalErrors
      ? `${subject} failed: ${err.message} (reference ${ref}).`
      : `${subject} failed with an internal error (reference ${ref}). The server log has the details.`,
  );
}

/** The message of an error meant for the caller: a ToolError, or a Nest HttpException (duck-typed: no Nest here). */
export function callerMessage(error: unknown): string | undefined {
  if (error instanceof ToolError) return error.message;
  return httpExceptionMessage(error);
}

export { lastValue } from './last-value.js';

/**
 * Runs a capability's guards outside its handler, for paths that answer before the handler runs.
 * A validation message can name what a caller may not see (an enum's values, a required
 * argument), so an invalid request meets the guards first and a caller they refuse gets their
 * refusal, never the message; a subscription meets them as the read it stands for would. Only
 * those paths pay: a valid call meets the guards once, in the Nest pipeline.
 */
export function meetGuards(access: McpAccess, ctx: McpContext, rawArguments: JsonObject): Promise<void> {
  return access.authorize
    ? access.authorize(ctx, ctx.method, { rawArguments, arguments: undefined })
    : Promise.resolve();
}
