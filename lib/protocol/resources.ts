import { randomUUID } from 'node:crypto';
import { defer, from, reduce, switchMap, catchError, map, throwError, type Observable } from 'rxjs';
import type { McpAccess, McpFeatureCatalog, ResourceTemplateRuntime } from './catalog.js';
import { toJsonValue } from './content.js';
import type { McpContext, RequestEnvelope } from './context.js';
import { McpError, ToolError, httpExceptionMessage } from './errors.js';
import { isInputRequiredSignal } from './interaction.js';
import { ErrorCode } from './json-rpc.js';
import type { CacheHint, JsonObject, McpIcon } from './mcp-types.js';
import { PagedList } from './paging.js';
import { MAX_URI_LENGTH, type UriTemplateMatch } from './uri-template.js';
import { type ProtocolEra, BOTH_ERAS } from './versions.js';

/**
 * Hints about how a resource (or a content item) is meant to be used.
 *
 * @publicApi
 */
export interface ResourceAnnotations {
  /** Who the content is for. */
  audience?: Array<'user' | 'assistant'>;
  /** 0 (optional) to 1 (effectively required). */
  priority?: number;
  /** ISO 8601 timestamp of the last change. */
  lastModified?: string;
}

/** What `resources/list` advertises for one resource. */
export interface ResourceDescriptor {
  uri: string;
  name: string;
  title?: string;
  description?: string;
  mimeType?: string;
  /** Size in bytes, when known. */
  size?: number;
  annotations?: ResourceAnnotations;
  icons?: McpIcon[];
  _meta?: JsonObject;
}

/** What `resources/templates/list` advertises for one template. */
export interface ResourceTemplateDescriptor {
  uriTemplate: string;
  name: string;
  title?: string;
  description?: string;
  mimeType?: string;
  annotations?: ResourceAnnotations;
  icons?: McpIcon[];
  _meta?: JsonObject;
}

/** @publicApi */
export interface TextResourceContents {
  uri: string;
  mimeType?: string;
  text: string;
  _meta?: JsonObject;
}

/** `blob` is base64. @publicApi */
export interface BlobResourceContents {
  uri: string;
  mimeType?: string;
  blob: string;
  _meta?: JsonObject;
}

/** @publicApi */
export type ResourceContents = TextResourceContents | BlobResourceContents;

/** The result of `resources/read`. @publicApi */
export interface ReadResourceResult {
  contents: ResourceContents[];
  _meta?: JsonObject;
}

/**
 * A content item as a handler may return it: `uri` and `mimeType` default to the resource's,
 * and `blob` may be raw bytes.
 *
 * @publicApi
 */
export interface ResourceContentInput {
  uri?: string;
  mimeType?: string;
  text?: string;
  blob?: string | Uint8Array;
  annotations?: ResourceAnnotations;
  _meta?: JsonObject;
}

/**
 * Builders for the contents of a resource read. Return one (or an array, for several contents)
 * when a plain string, Buffer or object is not enough, e.g. to mix MIME types.
 *
 * @publicApi
 */
export const ResourceContent = {
  text(text: string, options: Omit<ResourceContentInput, 'text' | 'blob'> = {}): ResourceContentInput {
    return { ...options, text };
  },
  /** `data` is raw bytes or an already base64-encoded string. */
  blob(data: Uint8Array | string, options: Omit<ResourceContentInput, 'text' | 'blob'> = {}): ResourceContentInput {
    return { ...options, blob: typeof data === 'string' ? data : toBase64(data) };
  },
  /** Any JSON value as text, with `application/json` unless another type is given. */
  json(value: unknown, options: Omit<ResourceContentInput, 'text' | 'blob'> = {}): ResourceContentInput {
    return { mimeType: 'application/json', ...options, text: JSON.stringify(toJsonValue(value)) ?? 'null' };
  },
} as const;

/**
 * Throw it from a resource handler (or return `undefined`/`null`) when the requested resource
 * does not exist: the client gets the era's resource-not-found error (`-32002` up to 2025-11-25,
 * `-32602` on 2026-07-28), with `data.uri`.
 *
 * @publicApi
 */
export class ResourceNotFoundError extends Error {
  constructor(message?: string) {
    super(message ?? 'Resource not found.');
    this.name = 'ResourceNotFoundError';
  }
}

/** What resource, prompt and completion methods need from the module configuration. */
export interface McpFeatureOptions {
  /** Cache hints on `resources/read` results unless the resource declares its own (modern era). */
  readCache: CacheHint;
  exposeInternalErrors: boolean;
  logger: { error(message: string, trace?: string): void; warn(message: string): void };
}

/** The part of the dispatcher feature methods are installed into. */
export interface McpFeatureHost {
  setMethod(
    method: string,
    eras: readonly ProtocolEra[],
    handler: (params: JsonObject, ctx: McpContext, env: RequestEnvelope) => JsonObject | Promise<JsonObject> | Observable<JsonObject>,
  ): void;
  declareCapability(name: string, value: JsonObject): void;
  /** Adds `resultType` and the serverInfo `_meta` of modern results. */
  decorate(result: JsonObject, era: ProtocolEra): JsonObject;
  /**
   * Runs a handler that may ask the client for input (elicitation, sampling, roots): on the
   * modern era a missing answer ends the request with an `input_required` result.
   */
  interactive(params: JsonObject, name: string, args: unknown, ctx: McpContext, run: () => Observable<JsonObject>): Observable<JsonObject>;
  /** A paged list with the server's page size, catalog-bound cursors and list cache hints. */
  pagedList<T extends McpAccess>(key: string, method: string, items: () => readonly T[], describe: (item: T, era: ProtocolEra) => unknown): PagedList<T>;
  /** One page of a list for this caller: what its scopes or guards refuse is left out. */
  listPage<T extends McpAccess>(list: PagedList<T>, params: JsonObject, ctx: McpContext, era: ProtocolEra): JsonObject | Promise<JsonObject>;
  /** Declares the scopes a method's request needs; the transports enforce them (403 insufficient_scope). */
  setRequiredScopes(method: string, resolver: (params: JsonObject) => readonly string[] | undefined): void;
  /**
   * Checks a URI a client asks to be notified about (`subscriptions/listen` filters); throws the
   * error `resources/read` would give for it.
   */
  checkSubscribable?: (uri: string, era: ProtocolEra) => void;
}

const SCHEME = /^[A-Za-z][A-Za-z0-9+.-]*:/;
// RFC 3986 has no room for whitespace or control characters; they must be percent-encoded.
const NOT_IN_URI = /[\u0000-\u0020\u007f]/;
const CONTENT_KEYS = new Set(['uri', 'mimeType', 'text', 'blob', 'annotations', '_meta']);
const RESULT_KEYS = new Set(['contents', '_meta']);

/** Why a string is not an absolute URI this server can serve, or undefined when it is. */
export function uriProblem(uri: string): string | undefined {
  if (uri.length === 0) return 'it is empty';
  if (uri.length > MAX_URI_LENGTH) return `it is ${uri.length} characters long; the limit is ${MAX_URI_LENGTH}`;
  if (!SCHEME.test(uri)) return 'it does not start with a scheme such as "file:" or "https:"';
  if (NOT_IN_URI.test(uri)) return 'it contains whitespace or control characters, which must be percent-encoded';
  return undefined;
}

/**
 * Registers `resources/list`, `resources/templates/list`, `resources/read` (both eras) and the
 * legacy `resources/subscribe`/`unsubscribe`, and declares the `resources` capability.
 */
export function installResources(host: McpFeatureHost, catalog: McpFeatureCatalog, options: McpFeatureOptions): void {
  const resources = host.pagedList('resources', 'resources/list', () => catalog.resources(), (resource) => resource.descriptor);
  const templates = host.pagedList('resourceTemplates', 'resources/templates/list', () => catalog.resourceTemplates(), (template) => template.descriptor);
  host.setMethod('resources/list', BOTH_ERAS, (params, ctx, env) => host.listPage(resources, params, ctx, env.era));
  host.setMethod('resources/templates/list', BOTH_ERAS, (params, ctx, env) => host.listPage(templates, params, ctx, env.era));
  const scopes = uriScopes(catalog);
  const byUri = (params: JsonObject) => (typeof params.uri === 'string' ? scopes(params.uri) : undefined);
  host.setRequiredScopes('resources/read', byUri);
  host.setRequiredScopes('resources/subscribe', byUri);
  host.setRequiredScopes('subscriptions/listen', (params) => {
    const uris = isPlainObject(params.notifications) ? params.notifications.resourceSubscriptions : undefined;
    // An over-long list is refused by subscriptions/listen itself; never walk it here.
    if (!Array.isArray(uris) || uris.length > MAX_LISTEN_URIS) return undefined;
    return union(uris.map((uri) => (typeof uri === 'string' ? scopes(uri) : undefined)));
  });
  host.setMethod('resources/read', BOTH_ERAS, (params, ctx, env) => readResource(host, catalog, options, params, ctx, env.era));
  const checkSubscribable = (uri: string, era: ProtocolEra): void => {
    const problem = uriProblem(uri);
    if (problem !== undefined) {
      throw new McpError(ErrorCode.InvalidParams, `Invalid resource URI ${quote(uri)}: ${problem}.`, { uri: truncate(uri) });
    }
    // A subscription to a URI nothing serves could never fire, yet the session would hold it.
    if (!servesUri(catalog, uri)) throw notFound(uri, era);
  };
  host.checkSubscribable = checkSubscribable;
  host.setMethod('resources/subscribe', ['legacy'], (params, _ctx, env) => {
    const uri = subscriptionUri(params, 'resources/subscribe');
    checkSubscribable(uri, env.era);
    return Promise.resolve(env.subscribe?.(uri)).then(() => ({}));
  });
  host.setMethod('resources/unsubscribe', ['legacy'], (params, _ctx, env) => {
    const uri = subscriptionUri(params, 'resources/unsubscribe');
    return Promise.resolve(env.unsubscribe?.(uri)).then(() => ({}));
  });
  host.declareCapability('resources', { subscribe: true, listChanged: true });
}

function subscriptionUri(params: JsonObject, method: string): string {
  const uri = params.uri;
  if (typeof uri !== 'string' || uri.length === 0) {
    throw new McpError(ErrorCode.InvalidParams, `${method} needs "params.uri", the URI of the resource to watch, as a non-empty string.`);
  }
  return uri;
}

/** True when a resource, or a template (decorated or added at runtime), serves the URI. */
function servesUri(catalog: McpFeatureCatalog, uri: string): boolean {
  if (catalog.resource(uri)) return true;
  return catalog.resourceTemplates().some((template) => template.template.match(uri) !== null);
}

function readResource(
  host: McpFeatureHost,
  catalog: McpFeatureCatalog,
  options: McpFeatureOptions,
  params: JsonObject,
  ctx: McpContext,
  era: ProtocolEra,
): Observable<JsonObject> {
  const uri = params.uri;
  if (typeof uri !== 'string') {
    throw new McpError(ErrorCode.InvalidParams, 'resources/read needs "params.uri", the URI of the resource to read, as a string.');
  }
  const problem = uriProblem(uri);
  if (problem !== undefined) {
    throw new McpError(ErrorCode.InvalidParams, `Invalid resource URI ${quote(uri)}: ${problem}.`, { uri: truncate(uri) });
  }
  const finish = (source: Observable<unknown>, mimeType: string | undefined, cache: CacheHint | undefined): Observable<JsonObject> =>
    lastValue(source).pipe(
      map((value) => {
        const result = toReadResourceResult(value, uri, mimeType);
        if (result === null) throw new ResourceNotFoundError();
        if (era === 'legacy') return result as unknown as JsonObject;
        const hint = cache ?? options.readCache;
        return { ...result, ttlMs: hint.ttlMs, cacheScope: hint.cacheScope };
      }),
      catchError((error: unknown) => throwError(() => readError(error, uri, era, options))),
    );

  const direct = catalog.resource(uri);
  if (direct) return host.interactive(params, uri, {}, ctx, () => finish(defer(() => direct.read(ctx)), direct.mimeType, direct.cache));

  const matches = matchTemplates(catalog, uri);
  if (matches.length === 0) throw notFound(uri, era);
  if (matches.length > 1) {
    const [a, b] = matches.map(([t]) => t.uriTemplate);
    const message = `URI ${quote(uri)} matches two resource templates, "${a}" and "${b}", so the server cannot tell which one serves it. Make the templates disjoint (for example give them different literal prefixes).`;
    options.logger.warn(message);
    throw new McpError(ErrorCode.InternalError, message, { uri: truncate(uri), templates: [a, b] });
  }
  const [template, raw] = matches[0]!;
  const read = defer(() => from(Promise.resolve(template.parseVariables(raw)))).pipe(
    switchMap((outcome) => {
      if (!outcome.ok) throw new McpError(ErrorCode.InvalidParams, outcome.message, { uri: truncate(uri) });
      return template.read(outcome.value, raw, uri, ctx);
    }),
  );
  return host.interactive(params, uri, raw, ctx, () => finish(read, template.mimeType, template.cache));
}

/** The templates that match a URI: stops at two, which is already ambiguous. */
function matchTemplates(catalog: McpFeatureCatalog, uri: string): Array<[ResourceTemplateRuntime, UriTemplateMatch]> {
  const matches: Array<[ResourceTemplateRuntime, UriTemplateMatch]> = [];
  for (const template of catalog.resourceTemplates()) {
    if (!uri.startsWith(template.template.literalPrefix)) continue;
    const variables = template.template.match(uri);
    if (variables) matches.push([template, variables]);
    if (matches.length > 1) break;
  }
  return matches;
}

const MAX_LISTEN_URIS = 1000;

/**
 * The scopes reading a URI needs: those of the resource at it, or of every template matching it.
 * Whether any resource or template has scopes is decided once per catalog version, so that a
 * catalog without any matches no template per request.
 */
function uriScopes(catalog: McpFeatureCatalog): (uri: string) => readonly string[] | undefined {
  let cache: { version: number; any: boolean } | undefined;
  return (uri) => {
    if (cache?.version !== catalog.version) {
      const scoped = (item: McpAccess) => (item.requiredScopes?.length ?? 0) > 0;
      cache = { version: catalog.version, any: catalog.resources().some(scoped) || catalog.resourceTemplates().some(scoped) };
    }
    if (!cache.any || uriProblem(uri) !== undefined) return undefined;
    const direct = catalog.resource(uri);
    if (direct) return direct.requiredScopes;
    return union(matchTemplates(catalog, uri).map(([template]) => template.requiredScopes));
  };
}

/** Every scope of several lists, once; undefined when there is none. */
export function union(lists: ReadonlyArray<readonly string[] | undefined>): readonly string[] | undefined {
  const all = new Set<string>();
  for (const list of lists) for (const scope of list ?? []) all.add(scope);
  return all.size ? [...all] : undefined;
}

/** The resource-not-found error of the request's era, always with `data.uri`. */
export function notFound(uri: string, era: ProtocolEra): McpError {
  return new McpError(
    era === 'modern' ? ErrorCode.InvalidParams : ErrorCode.ResourceNotFound,
    `Resource not found: ${quote(uri)}. Call resources/list and resources/templates/list to see what this server offers.`,
    { uri },
  );
}

function readError(error: unknown, uri: string, era: ProtocolEra, options: McpFeatureOptions): unknown {
  if (error instanceof ResourceNotFoundError) return notFound(uri, era);
  return handlerError(error, `Resource ${quote(uri)}`, options);
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
function callerMessage(error: unknown): string | undefined {
  if (error instanceof ToolError) return error.message;
  return httpExceptionMessage(error);
}

/** Emits the handler's last value (or `undefined` when it produced none). */
export function lastValue(source: Observable<unknown>): Observable<unknown> {
  return source.pipe(reduce((_previous: unknown, value: unknown) => value, undefined as unknown));
}

/**
 * Turns what a resource handler returned into a `resources/read` result, or `null` when it
 * returned nothing (which means "not found": a result never has empty `contents`).
 *
 * - a string → one text item with the declared MIME type (default `text/plain`);
 * - a Buffer/Uint8Array → one base64 `blob` item (default `application/octet-stream`);
 * - a content item (`{ text }` or `{ blob }`, with optional `uri`, `mimeType`, `annotations`,
 *   `_meta` and nothing else), or an array of them → those items, `uri` and `mimeType` defaulted;
 * - `{ contents: [...] }` (plus optional `_meta`) → a full result, items defaulted the same way;
 * - anything else → its JSON as one text item (default `application/json`).
 */
export function toReadResourceResult(value: unknown, uri: string, mimeType?: string): ReadResourceResult | null {
  if (value === undefined || value === null) return null;
  if (typeof value === 'string') return { contents: [{ uri, mimeType: mimeType ?? 'text/plain', text: value }] };
  if (value instanceof Uint8Array) {
    return { contents: [{ uri, mimeType: mimeType ?? 'application/octet-stream', blob: toBase64(value) }] };
  }
  if (isFullResult(value)) {
    if (value.contents.length === 0) return null;
    const result: ReadResourceResult = { contents: value.contents.map((item) => normalize(item, uri, mimeType)) };
    if (value._meta !== undefined) result._meta = value._meta;
    return result;
  }
  if (isContentInput(value)) return { contents: [normalize(value, uri, mimeType)] };
  if (Array.isArray(value) && value.length > 0 && value.every(isContentInput)) {
    return { contents: value.map((item) => normalize(item, uri, mimeType)) };
  }
  const text = JSON.stringify(toJsonValue(value)) ?? 'null';
  return { contents: [{ uri, mimeType: mimeType ?? 'application/json', text }] };
}

function normalize(item: ResourceContentInput, uri: string, mimeType: string | undefined): ResourceContents {
  const out: JsonObject = { uri: item.uri ?? uri };
  if (item.text !== undefined) {
    out.mimeType = item.mimeType ?? mimeType ?? 'text/plain';
    out.text = item.text;
  } else {
    out.mimeType = item.mimeType ?? mimeType ?? 'application/octet-stream';
    out.blob = typeof item.blob === 'string' ? item.blob : toBase64(item.blob!);
  }
  if (item.annotations !== undefined) out.annotations = item.annotations;
  if (item._meta !== undefined) out._meta = item._meta;
  return out as unknown as ResourceContents;
}

function isPlainObject(value: unknown): value is JsonObject {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  const proto = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}

function isContentInput(value: unknown): value is ResourceContentInput {
  if (!isPlainObject(value)) return false;
  for (const key of Object.keys(value)) if (!CONTENT_KEYS.has(key)) return false;
  const hasText = typeof value.text === 'string';
  const hasBlob = typeof value.blob === 'string' || value.blob instanceof Uint8Array;
  if (hasText === hasBlob) return false;
  return (value.uri === undefined || typeof value.uri === 'string') && (value.mimeType === undefined || typeof value.mimeType === 'string');
}

function isFullResult(value: unknown): value is { contents: ResourceContentInput[]; _meta?: JsonObject } {
  if (!isPlainObject(value) || !Array.isArray(value.contents)) return false;
  for (const key of Object.keys(value)) if (!RESULT_KEYS.has(key)) return false;
  return value.contents.every(isContentInput);
}

function toBase64(data: Uint8Array): string {
  return Buffer.from(data.buffer, data.byteOffset, data.byteLength).toString('base64');
}

function truncate(text: string, max = 1024): string {
  return text.length > max ? `${text.slice(0, max)}…` : text;
}

function quote(text: string): string {
  return JSON.stringify(text.length > 200 ? `${text.slice(0, 200)}…` : text);
}
