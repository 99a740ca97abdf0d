import { SetMetadata, type Type } from '@nestjs/common';
import type { ListCacheHint } from '../protocol/catalog.js';
import { MCP_RESOURCE_METADATA, MCP_RESOURCE_TEMPLATE_METADATA } from '../common/mcp.constants.js';
import type { CacheHint, JsonObject, McpIcon } from '../protocol/mcp-types.js';
import type { ResourceAnnotations } from '../protocol/resource-contents.js';

/**
 * Options of `@Resource()`.
 *
 * @publicApi
 */
export interface ResourceOptions {
  /** The resource's absolute URI, e.g. `docs://readme` or `file:///srv/data/report.csv`. */
  uri: string;
  /** A short identifier shown in lists. @default the method name in snake_case */
  name?: string;
  /** A human-friendly display name. */
  title?: string;
  /** What the resource holds, for the model and for users. */
  description?: string;
  /**
   * The content type. A string result is sent as text of this type (default `text/plain`), a
   * Buffer as a base64 blob (default `application/octet-stream`), an object as JSON (default
   * `application/json`).
   */
  mimeType?: string;
  /** Size in bytes, when known ahead of a read. */
  size?: number;
  /** Audience, priority and last-modified hints. */
  annotations?: ResourceAnnotations;
  icons?: McpIcon[];
  _meta?: JsonObject;
  /**
   * Cache hints on this resource's `resources/read` results (2026-07-28). Use `private` for
   * anything that varies by user or token.
   * @default the module's `cache.reads`
   */
  cache?: CacheHint;
  /**
   * How long this item's entry in its list stays fresh (2026-07-28): the list page holding it gets
   * the shortest `ttlMs` and turns `private` when this says so. A function `(ctx) => hint` is
   * computed per list request. @default the module's `cache.lists`
   */
  listCache?: ListCacheHint;
}

/**
 * Options of `@ResourceTemplate()`.
 *
 * @publicApi
 */
export interface ResourceTemplateOptions extends Omit<ResourceOptions, 'uri' | 'size'> {
  /**
   * An RFC 6570 template: `{var}` (one path segment), `{+var}` (may contain "/"), `{/var}`,
   * `{/var*}`, `{?a,b}` and `{&c}` (query parameters), `{#var}` (fragment).
   */
  uriTemplate: string;
  /**
   * A DTO class for the variables: they are cast (strings to numbers and booleans) and
   * validated with class-validator before the method runs.
   * @default the type of the `@Args()` parameter; without one, variables arrive as strings
   */
  args?: Type<unknown>;
}

/** @internal */
export interface ResourceMetadata extends ResourceOptions {
  methodName: string;
}

/** @internal */
export interface ResourceTemplateMetadata extends ResourceTemplateOptions {
  methodName: string;
}

/**
 * Serves a provider method's result as an MCP resource at a fixed URI. The method may use
 * `@Ctx()` and return a string, a Buffer, an object (sent as JSON), `ResourceContent.*` items,
 * or a full `{ contents }` result; a Promise or an Observable of those works too. Returning
 * `undefined` (or throwing `ResourceNotFoundError`) answers "resource not found".
 *
 * @example
 * ```ts
 * @Resource({ uri: 'docs://readme', mimeType: 'text/markdown', description: 'Project overview' })
 * readme() { return readFile('README.md', 'utf8'); }
 * ```
 * @publicApi
 */
export function Resource(options: ResourceOptions): MethodDecorator {
  return (target, propertyKey, descriptor) => {
    const metadata: ResourceMetadata = { ...options, methodName: String(propertyKey) };
    SetMetadata(MCP_RESOURCE_METADATA, metadata)(target, propertyKey, descriptor);
  };
}

/**
 * Serves every URI that matches an RFC 6570 template. The matched variables reach the method
 * through `@Args()` (a DTO instance when `args` or the parameter type names one) or
 * `@Args('name')`; the return value is handled as for `@Resource()`.
 *
 * @example
 * ```ts
 * @ResourceTemplate({ uriTemplate: 'notes://{folder}/{id}', mimeType: 'text/markdown' })
 * note(@Args() { folder, id }: NoteRefDto) { return this.notes.find(folder, id)?.body; }
 * ```
 * @publicApi
 */
export function ResourceTemplate(options: ResourceTemplateOptions): MethodDecorator {
  return (target, propertyKey, descriptor) => {
    const metadata: ResourceTemplateMetadata = { ...options, methodName: String(propertyKey) };
    SetMetadata(MCP_RESOURCE_TEMPLATE_METADATA, metadata)(target, propertyKey, descriptor);
  };
}
