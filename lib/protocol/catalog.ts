import type { Observable } from 'rxjs';
import type { McpContext } from './context.js';
import type { CacheHint, JsonObject, ToolDescriptor } from './mcp-types.js';
import type { PromptDescriptor } from './prompt-messages.js';
import type { ResourceDescriptor, ResourceTemplateDescriptor } from './resource-contents.js';
import type { PromptRepositoryRuntime, ResourceRepositoryRuntime } from './repositories.js';
import type { UriTemplate, UriTemplateMatch } from './uri-template.js';
import type { ProtocolEra } from './versions.js';

export type ArgumentsOutcome = { ok: true; value: unknown } | { ok: false; message: string };

/**
 * What authorization knows of one capability (tool, resource, template, prompt), the same for
 * every kind: precomputed at registration, so that capabilities without any cost nothing.
 */
export interface McpAccess {
  /** OAuth scopes a caller needs (checked by the transport before the request runs: 403 without them). */
  readonly requiredScopes?: readonly string[];
  /**
   * Runs the capability's guards (method, class and global) for `method` without running the
   * handler, and rejects with what a refusing guard raised. Set only when a guard applies. Lists
   * ask it with their own method (a guard tells a listing by `McpExecutionContext.isListing()`);
   * `completion/complete` asks it before completing an argument of the capability.
   */
  authorize?(
    ctx: McpContext,
    method: string,
    request?: { rawArguments: JsonObject; arguments: unknown },
  ): Promise<void>;
  /**
   * Hide it from every caller its guards or scopes refuse, on every path: left out of lists even
   * with `guardAwareLists: false`, and a refused watch gets the error of a URI nothing serves
   * rather than the refusal, so that no answer tells it exists (skills).
   */
  readonly conceal?: boolean;
  /**
   * Whether a client with these capabilities (per request on 2026-07-28, per session on
   * 2025-11-25) may know the capability exists at all; set only when some may not (an MCP Apps
   * app-only tool). Unlike guards it applies to lists whatever `guardAwareLists` says, and a call
   * of a capability it hides answers exactly as for an unknown one.
   */
  visibleTo?(clientCapabilities: JsonObject): boolean;
}

/**
 * How long one item's list entry stays fresh (2026-07-28): the page holding it carries the
 * shortest `ttlMs` of the list and its items, and `private` when any of them is. A function is
 * computed per list request, for the caller.
 *
 * @publicApi
 */
export type ListCacheHint = Partial<CacheHint> | ((ctx: McpContext) => Partial<CacheHint> | undefined);

/**
 * The module-wide hint of the four lists: one hint, or a function of the list
 * (`tools`, `prompts`, `resources`, `resourceTemplates`) and the caller, computed per request.
 *
 * @publicApi
 */
export type ListsCacheOption = CacheHint | ((list: string, ctx: McpContext) => CacheHint);

/** The `cache` hints when unset: discovery and lists public for a while, reads run the app's code per call. @internal */
export const DEFAULT_CACHE_HINTS: Readonly<{ discover: CacheHint; lists: CacheHint; reads: CacheHint }> = {
  discover: { ttlMs: 300_000, cacheScope: 'public' },
  lists: { ttlMs: 60_000, cacheScope: 'public' },
  reads: { ttlMs: 0, cacheScope: 'private' },
};

/** An item that may carry its own list cache hint. */
export interface McpListed {
  readonly listCache?: ListCacheHint;
}

/** A callable tool as the dispatcher sees it: prepared once, invoked per call. */
export interface ToolRuntime extends McpAccess, McpListed {
  readonly name: string;
  /** The descriptor for each era (legacy drops non-object output schemas). */
  readonly descriptors: Readonly<Record<ProtocolEra, ToolDescriptor>>;
  readonly hasOutputSchema: boolean;
  /** Arguments mirrored into `Mcp-Param-*` headers (`x-mcp-header` in the input schema). */
  readonly headerParams?: readonly HeaderParam[];
  /** Casts and validates raw arguments. A failure message names each field and rule. */
  parseArguments(args: JsonObject): ArgumentsOutcome | Promise<ArgumentsOutcome>;
  /**
   * Runs the tool. Emits the values the handler produced (the last one is the result) and errors
   * with whatever it threw. Unsubscribing cancels the call.
   */
  invoke(args: unknown, rawArgs: JsonObject, ctx: McpContext): Observable<unknown>;
  /**
   * Counts a task call against the tool's rate limits before its task exists, or rejects with the
   * refusal; `invoke` on the same context then counts them no more. Unset: the tool has none.
   */
  admit?(args: unknown, rawArgs: JsonObject, ctx: McpContext): Promise<void>;
  /** Checks a result against the output schema: null when valid, else a readable message. */
  checkOutput?(value: unknown): string | null;
  /** Whether a call may (`optional`) or must (`required`) run as a task. Unset: never a task. */
  readonly taskSupport?: 'optional' | 'required';
  /** The tool sets it belongs to (`@Tool({ sets })`, its class's `@ToolSets()`, an exposed route's `sets`). */
  readonly sets?: readonly string[];
}

/**
 * The port through which the protocol layer reads the tools (the catalog report of `catalog/` is
 * another thing: what a server offers, as data). The Nest registry implements it; the protocol
 * layer never sees Nest.
 */
export interface McpToolCatalog {
  /** Increases on every change, so that cached list results and cursors can expire. */
  readonly version: number;
  tools(): readonly ToolRuntime[];
  tool(name: string): ToolRuntime | undefined;
}

export interface HeaderParam {
  /** Property names from the arguments root to the value. */
  path: readonly string[];
  /** The name part of `Mcp-Param-{header}`. */
  header: string;
  type: 'string' | 'integer' | 'boolean';
}

/** A resource at a fixed URI, as the dispatcher sees it. */
export interface ResourceRuntime extends McpAccess, McpListed {
  readonly uri: string;
  readonly name: string;
  /** What `resources/list` advertises (the same for both eras). */
  readonly descriptor: Readonly<ResourceDescriptor>;
  /** The declared MIME type, used for text and blob contents that do not name their own. */
  readonly mimeType?: string;
  /** Overrides the module's read cache hint (modern era). */
  readonly cache?: CacheHint;
  /** Reads the resource. Emits what the handler produced (the last value counts). */
  read(ctx: McpContext): Observable<unknown>;
}

/** An RFC 6570 resource template, as the dispatcher sees it. */
export interface ResourceTemplateRuntime extends McpAccess, McpListed {
  readonly uriTemplate: string;
  readonly name: string;
  readonly template: UriTemplate;
  /** What `resources/templates/list` advertises. */
  readonly descriptor: Readonly<ResourceTemplateDescriptor>;
  readonly mimeType?: string;
  readonly cache?: CacheHint;
  /** The template's variables, in template order, with what completion needs to know. */
  readonly arguments: readonly CompletableArgument[];
  /** Casts and validates the matched variables (through the DTO when there is one). */
  parseVariables(variables: UriTemplateMatch): ArgumentsOutcome | Promise<ArgumentsOutcome>;
  /** Reads the resource a matching URI names. */
  read(variables: unknown, raw: UriTemplateMatch, uri: string, ctx: McpContext): Observable<unknown>;
}

/** A prompt, as the dispatcher sees it. */
export interface PromptRuntime extends McpAccess, McpListed {
  readonly name: string;
  /** What `prompts/list` advertises. */
  readonly descriptor: Readonly<PromptDescriptor>;
  readonly arguments: readonly CompletableArgument[];
  /** Casts and validates the (string) arguments. A failure message names each field and rule. */
  parseArguments(args: JsonObject): ArgumentsOutcome | Promise<ArgumentsOutcome>;
  /** Renders the prompt. Emits what the handler produced (the last value counts). */
  get(args: unknown, rawArgs: JsonObject, ctx: McpContext): Observable<unknown>;
}

/** A prompt argument or template variable that `completion/complete` may be asked about. */
export interface CompletableArgument {
  readonly name: string;
  /** Allowed values from the DTO's enum (as strings): completed without any code. */
  readonly enumValues?: readonly string[];
}

/** What a completer is asked. */
export interface CompletionRequest {
  /** The argument or template variable being completed. */
  argument: string;
  /** What the user has typed so far. */
  value: string;
  /** Arguments (or variables) the client already resolved. */
  context: { arguments?: Record<string, string> };
}

/** Produces completion values (a string array, or `{ values, total?, hasMore? }`). */
export interface Completer {
  (request: CompletionRequest, ctx: McpContext): Observable<unknown>;
  /** Scopes of the completer itself (`@RequireScopes` on a `@Complete()` method or its class), on top of its target's. */
  readonly requiredScopes?: readonly string[];
}

/** What a `completion/complete` reference points at. */
export type CompletionTarget = { kind: 'prompt'; name: string } | { kind: 'resourceTemplate'; uriTemplate: string };

/**
 * The resources, templates, prompts and completers one module serves. The Nest registry
 * implements it next to {@link McpToolCatalog}; `version` covers every list.
 */
export interface McpFeatureCatalog extends McpToolCatalog {
  resources(): readonly ResourceRuntime[];
  resource(uri: string): ResourceRuntime | undefined;
  resourceTemplates(): readonly ResourceTemplateRuntime[];
  resourceTemplate(uriTemplate: string): ResourceTemplateRuntime | undefined;
  prompts(): readonly PromptRuntime[];
  prompt(name: string): PromptRuntime | undefined;
  /** A completer registered for one argument of a prompt or template, if any. */
  completer(target: CompletionTarget, argument: string): Completer | undefined;
  /** Resource repositories in registration order (their prefixes never overlap). */
  resourceRepositories?(): readonly ResourceRepositoryRuntime[];
  /** The resource repository whose prefix the URI starts with, if any. */
  resourceRepositoryFor?(uri: string): ResourceRepositoryRuntime | undefined;
  /** Prompt repositories in registration order. */
  promptRepositories?(): readonly PromptRepositoryRuntime[];
  /** The prompt repository whose prefix the name starts with, if any. */
  promptRepositoryFor?(name: string): PromptRepositoryRuntime | undefined;
}
