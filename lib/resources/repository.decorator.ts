import { Injectable, SetMetadata, applyDecorators } from '@nestjs/common';
import type { Observable } from 'rxjs';
import { MCP_PROMPT_REPOSITORY_METADATA, MCP_RESOURCE_REPOSITORY_METADATA } from '../common/mcp.constants.js';
import type { ListCacheHint } from '../protocol/catalog.js';
import type { McpContext } from '../protocol/context.js';
import type { CacheHint, JsonObject } from '../protocol/mcp-types.js';
import type { PromptDescriptor } from '../protocol/prompt-messages.js';
import type { McpRepositoryPageRequest } from '../protocol/repositories.js';
import type { ResourceDescriptor } from '../protocol/resource-contents.js';

/**
 * Options of `@ResourceRepository()`.
 *
 * @publicApi
 */
export interface ResourceRepositoryOptions {
  /**
   * The URI prefix the repository owns, such as `docs://kb/`: every URI starting with it is read
   * through the repository. It may not overlap another repository's prefix, a resource template's
   * URI space or a fixed resource's URI.
   */
  uriPrefix: string;
  /** The MIME type of listed resources that name none, and of read contents that name none. */
  mimeType?: string;
  /**
   * Cache hints on `resources/read` results of this repository (2026-07-28).
   * @default the module's `cache.reads`
   */
  cache?: CacheHint;
  /**
   * How long this repository's list pages stay fresh (2026-07-28); pages of a guarded repository,
   * or of an authenticated caller, are always `private`. @default the module's `cache.lists`
   */
  listCache?: ListCacheHint;
}

/**
 * Options of `@PromptRepository()`.
 *
 * @publicApi
 */
export interface PromptRepositoryOptions {
  /** The prompt name prefix the repository owns, such as `kb_`. It may not overlap another's, nor a declared prompt's name. */
  namePrefix: string;
  /** How long this repository's list pages stay fresh (2026-07-28). @default the module's `cache.lists` */
  listCache?: ListCacheHint;
}

/** @internal */
export type ResourceRepositoryMetadata = ResourceRepositoryOptions;

/** @internal */
export type PromptRepositoryMetadata = PromptRepositoryOptions;

/**
 * One page of a resource repository: at most `request.limit` resources (each URI under the
 * repository's prefix), and the repository's own cursor of the next page, absent on the last.
 *
 * @publicApi
 */
export interface McpResourcePage {
  resources: ResourceDescriptor[];
  nextCursor?: string;
}

/**
 * One page of a prompt repository: at most `request.limit` prompts (each name under the
 * repository's prefix), and the repository's own cursor of the next page.
 *
 * @publicApi
 */
export interface McpPromptPage {
  prompts: PromptDescriptor[];
  nextCursor?: string;
}

type Answer<T> = T | Promise<T> | Observable<T>;

/**
 * What a `@ResourceRepository()` class implements. `list` fetches one page itself (a database
 * query with a limit and a keyset or offset cursor), `read` reads one URI under the prefix and
 * returns what a `@Resource()` method returns; `undefined` (or `ResourceNotFoundError`) answers
 * "resource not found".
 *
 * @publicApi
 */
export interface McpResourceRepository {
  list(request: McpRepositoryPageRequest, ctx: McpContext): Answer<McpResourcePage>;
  read(uri: string, ctx: McpContext): unknown;
}

/**
 * What a `@PromptRepository()` class implements. `get` receives the prompt's name and the string
 * arguments as the client sent them, and returns what a `@Prompt()` method returns; `undefined`
 * answers "unknown prompt".
 *
 * @publicApi
 */
export interface McpPromptRepository {
  list(request: McpRepositoryPageRequest, ctx: McpContext): Answer<McpPromptPage>;
  get(name: string, args: JsonObject, ctx: McpContext): unknown;
}

/**
 * Makes a class (an injectable provider: list it in a module's `providers`) the owner of a URI prefix: `resources/list` lists the fixed resources first,
 * then the repository's pages, which it fetches one at a time (`list({ cursor, limit })`), and
 * `resources/read` of any URI under the prefix calls `read(uri)`. Nothing is registered per
 * resource, so a repository can serve a table of millions of rows. Its own cursor travels inside
 * the opaque, signed cursor the client sees. Guards, interceptors, filters and `@RequireScopes`
 * on the class (or its methods) apply as on other resources; a repository the caller may not
 * list is left out of its lists.
 *
 * @example
 * ```ts
 * @ResourceRepository({ uriPrefix: 'docs://kb/', mimeType: 'text/markdown' })
 * export class KnowledgeBase implements McpResourceRepository {
 *   async list({ cursor, limit }: McpRepositoryPageRequest) {
 *     const rows = await this.db.articles.after(cursor, limit);
 *     return { resources: rows.map((r) => ({ uri: `docs://kb/${r.id}`, name: r.title })), nextCursor: rows.at(-1)?.id };
 *   }
 *   read(uri: string) { return this.db.articles.body(uri.slice('docs://kb/'.length)); }
 * }
 * ```
 * @publicApi
 */
export function ResourceRepository(options: ResourceRepositoryOptions): ClassDecorator {
  return applyDecorators(
    Injectable(),
    SetMetadata(MCP_RESOURCE_REPOSITORY_METADATA, { ...options } satisfies ResourceRepositoryMetadata),
  );
}

/**
 * Makes a provider the owner of a prompt name prefix: `prompts/list` lists the declared prompts
 * first, then the repository's pages, and `prompts/get` of a name under the prefix calls
 * `get(name, args)`. The same rules as `@ResourceRepository()` apply.
 *
 * @publicApi
 */
export function PromptRepository(options: PromptRepositoryOptions): ClassDecorator {
  return applyDecorators(
    Injectable(),
    SetMetadata(MCP_PROMPT_REPOSITORY_METADATA, { ...options } satisfies PromptRepositoryMetadata),
  );
}

/** The `@ResourceRepository()` of a class. @internal */
export function resourceRepositoryOf(owner: Function): ResourceRepositoryMetadata | undefined {
  return Reflect.getMetadata(MCP_RESOURCE_REPOSITORY_METADATA, owner) as ResourceRepositoryMetadata | undefined;
}

/** The `@PromptRepository()` of a class. @internal */
export function promptRepositoryOf(owner: Function): PromptRepositoryMetadata | undefined {
  return Reflect.getMetadata(MCP_PROMPT_REPOSITORY_METADATA, owner) as PromptRepositoryMetadata | undefined;
}
