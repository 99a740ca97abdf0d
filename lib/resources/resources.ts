import { defer, from, switchMap, catchError, map, throwError, type Observable } from 'rxjs';
import type { McpAccess, McpFeatureCatalog, ResourceTemplateRuntime } from '../protocol/catalog.js';
import type { McpContext } from '../protocol/context.js';
import { McpError } from '../protocol/errors.js';
import {
  meetGuards,
  handlerError,
  lastValue,
  union,
  type McpFeatureHost,
  type McpFeatureOptions,
} from '../protocol/feature-host.js';
import { ErrorCode } from '../protocol/json-rpc.js';
import type { CacheHint, JsonObject } from '../protocol/mcp-types.js';
import {
  ResourceNotFoundError,
  isPlainObject,
  toReadResourceResult,
  uriProblem,
} from '../protocol/resource-contents.js';
import type { UriTemplateMatch } from '../protocol/uri-template.js';
import type { ProtocolEra } from '../protocol/versions.js';
import { McpMethods } from '../protocol/methods.js';
import {
  repositoryAwareList,
  repositoryResource,
  type RepositoryListSpec,
  type ResourceRepositoryRuntime,
} from '../protocol/repositories.js';

/**
 * Registers `resources/list`, `resources/templates/list`, `resources/read` (both eras) and the
 * legacy `resources/subscribe`/`unsubscribe`, and declares the `resources` capability.
 */
export function installResources(host: McpFeatureHost, catalog: McpFeatureCatalog, options: McpFeatureOptions): void {
  const resources = host.pagedList(
    'resources',
    'resources/list',
    () => catalog.resources(),
    (resource) => resource.descriptor,
  );
  const templates = host.pagedList(
    'resourceTemplates',
    'resources/templates/list',
    () => catalog.resourceTemplates(),
    (template) => template.descriptor,
  );
  const repositoryList: RepositoryListSpec<ResourceRepositoryRuntime> = {
    key: 'resources',
    method: 'resources/list',
    what: 'Resource repository',
    repositories: () => catalog.resourceRepositories?.() ?? [],
    version: () => catalog.version,
    item: repositoryResource,
  };
  host.define(McpMethods.resourcesList, { handler: repositoryAwareList(host, resources, repositoryList, options) });
  host.define(McpMethods.resourceTemplatesList, {
    handler: (params, ctx) => host.listPage(templates, params, ctx, ctx.era),
  });
  const scopes = uriScopes(catalog);
  const byUri = (params: JsonObject) => (typeof params.uri === 'string' ? scopes(params.uri) : undefined);
  host.define(McpMethods.subscriptionsListen, {
    scopes: (params) => {
      const uris = isPlainObject(params.notifications) ? params.notifications.resourceSubscriptions : undefined;
      // An over-long list is refused by subscriptions/listen itself; never walk it here.
      if (!Array.isArray(uris) || uris.length > MAX_LISTEN_URIS) return undefined;
      return union(uris.map((uri) => (typeof uri === 'string' ? scopes(uri) : undefined)));
    },
  });
  host.define(McpMethods.resourcesRead, {
    scopes: byUri,
    handler: (params, ctx) => readResource(host, catalog, options, params, ctx, ctx.era),
  });
  const checkSubscribable = (uri: string, era: ProtocolEra): McpAccess => {
    const problem = uriProblem(uri);
    if (problem !== undefined) {
      throw new McpError(ErrorCode.InvalidParams, `Invalid resource URI ${quote(uri)}: ${problem}.`, {
        uri: truncate(uri),
      });
    }
    // A subscription to a URI nothing serves could never fire, yet the session would hold it.
    const access = servingAccess(catalog, uri);
    if (!access) throw notFound(uri, era);
    return access;
  };
  // What a caller may not read it may not watch either: the guards of the resource run first. A
  // concealed resource answers its refusal as a URI nothing serves, as its read does.
  const mayWatch = (access: McpAccess, uri: string, ctx: McpContext, era: ProtocolEra): Promise<void> =>
    meetGuards(access, ctx, {}).catch((error: unknown) =>
      Promise.reject(
        access.conceal ? notFound(uri, era) : handlerError(error, `Subscription to ${quote(uri)}`, options),
      ),
    );
  host.checkSubscribable = (uri, era) => {
    const access = checkSubscribable(uri, era);
    return (ctx) => mayWatch(access, uri, ctx, era);
  };
  host.define(McpMethods.resourcesSubscribe, {
    scopes: byUri,
    handler: (params, ctx) => {
      const uri = subscriptionUri(params, McpMethods.resourcesSubscribe.name);
      return mayWatch(checkSubscribable(uri, ctx.era), uri, ctx, ctx.era)
        .then(() => ctx.subscribeUri(uri))
        .then(() => ({}));
    },
  });
  host.define(McpMethods.resourcesUnsubscribe, {
    handler: (params, ctx) => {
      const uri = subscriptionUri(params, McpMethods.resourcesUnsubscribe.name);
      return Promise.resolve(ctx.unsubscribeUri(uri)).then(() => ({}));
    },
  });
  host.declareCapability('resources', { subscribe: true, listChanged: true });
}

function subscriptionUri(params: JsonObject, method: string): string {
  const uri = params.uri;
  if (typeof uri !== 'string' || uri.length === 0) {
    throw new McpError(
      ErrorCode.InvalidParams,
      `${method} needs "params.uri", the URI of the resource to watch, as a non-empty string.`,
    );
  }
  return uri;
}

/** The resource, or the first template (decorated or added at runtime), that serves the URI. */
function servingAccess(catalog: McpFeatureCatalog, uri: string): McpAccess | undefined {
  return (
    catalog.resource(uri) ??
    catalog.resourceRepositoryFor?.(uri) ??
    catalog.resourceTemplates().find((template) => template.template.match(uri) !== null)
  );
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
    throw new McpError(
      ErrorCode.InvalidParams,
      'resources/read needs "params.uri", the URI of the resource to read, as a string.',
    );
  }
  const problem = uriProblem(uri);
  if (problem !== undefined) {
    throw new McpError(ErrorCode.InvalidParams, `Invalid resource URI ${quote(uri)}: ${problem}.`, {
      uri: truncate(uri),
    });
  }
  const finish = (
    source: Observable<unknown>,
    mimeType: string | undefined,
    cache: CacheHint | undefined,
  ): Observable<JsonObject> =>
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
  if (direct)
    return host.interactive(params, uri, {}, ctx, () =>
      finish(
        defer(() => direct.read(ctx)),
        direct.mimeType,
        direct.cache,
      ),
    );

  const repository = catalog.resourceRepositoryFor?.(uri);
  if (repository) {
    return host.interactive(params, uri, {}, ctx, () =>
      finish(
        defer(() => repository.read(uri, ctx)),
        repository.mimeType,
        repository.cache,
      ),
    );
  }

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
      if (!outcome.ok) {
        const invalid = new McpError(ErrorCode.InvalidParams, outcome.message, { uri: truncate(uri) });
        return from(meetGuards(template, ctx, raw).then(() => Promise.reject(invalid)));
      }
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
      const repositories = catalog.resourceRepositories?.() ?? [];
      cache = {
        version: catalog.version,
        any: catalog.resources().some(scoped) || catalog.resourceTemplates().some(scoped) || repositories.some(scoped),
      };
    }
    if (!cache.any || uriProblem(uri) !== undefined) return undefined;
    const direct = catalog.resource(uri);
    if (direct) return direct.requiredScopes;
    const repository = catalog.resourceRepositoryFor?.(uri);
    if (repository) return repository.requiredScopes;
    return union(matchTemplates(catalog, uri).map(([template]) => template.requiredScopes));
  };
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

function truncate(text: string, max = 1024): string {
  return text.length > max ? `${text.slice(0, max)}…` : text;
}

function quote(text: string): string {
  return JSON.stringify(text.length > 200 ? `${text.slice(0, 200)}…` : text);
}
