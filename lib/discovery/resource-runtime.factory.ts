import { sharedDtoCompiler, type DtoCompiler } from './dto-compiler.js';
import { checkListCache } from './list-cache.js';
import type { Type } from '@nestjs/common';
import type { Observable } from 'rxjs';
import type {
  ArgumentsOutcome,
  ListCacheHint,
  McpAccess,
  ResourceRuntime,
  ResourceTemplateRuntime,
} from '../protocol/catalog.js';
import type { McpContext } from '../protocol/context.js';
import type { CacheHint, JsonObject, McpIcon } from '../protocol/mcp-types.js';
import {
  uriProblem,
  type ResourceAnnotations,
  type ResourceDescriptor,
  type ResourceTemplateDescriptor,
} from '../protocol/resource-contents.js';
import { UriTemplate, UriTemplateError, type UriTemplateMatch } from '../protocol/uri-template.js';
import { formatIssues } from '../schema/dto-caster.js';
import * as messages from '../common/mcp.messages.js';
import { dtoArguments } from './prompt-runtime.factory.js';

/**
 * Options of `@Resource()`, and of `McpRegistry.addResource()`: they live beside the factory both
 * build through, below the resources pack.
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

/** Resource options after the name is settled. */
export interface ResourceDefinition extends Omit<ResourceOptions, 'name'>, McpAccess {
  name: string;
}

/** Template options after the name is settled and the variables DTO is known. */
export interface ResourceTemplateDefinition extends Omit<ResourceTemplateOptions, 'name'>, McpAccess {
  name: string;
}

export type ResourceInvoke = (ctx: McpContext) => Observable<unknown>;
export type ResourceTemplateInvoke = (
  variables: unknown,
  raw: UriTemplateMatch,
  uri: string,
  ctx: McpContext,
) => Observable<unknown>;

const SCHEME = /^[A-Za-z][A-Za-z0-9+.-]*:/;

/**
 * Turns resource and template definitions into the runtimes the dispatcher reads through:
 * URIs checked, templates parsed and DTO casters compiled once here. Decorated and dynamically
 * added ones both come through it.
 */
export class ResourceRuntimeFactory {
  constructor(private readonly dtos: DtoCompiler = sharedDtoCompiler) {}

  buildResource(definition: ResourceDefinition, read: ResourceInvoke, site: string): ResourceRuntime {
    const { uri } = definition;
    if (typeof uri !== 'string')
      throw new Error(messages.INVALID_RESOURCE_URI(String(uri), site, 'it is not a string'));
    const problem = /[{}]/.test(uri)
      ? 'it contains "{" or "}"; for a URI with variables use @ResourceTemplate({ uriTemplate }) (or McpRegistry.addResourceTemplate)'
      : uriProblem(uri);
    if (problem !== undefined) throw new Error(messages.INVALID_RESOURCE_URI(uri, site, problem));
    checkName(definition.name, site);
    if (definition.size !== undefined && (!Number.isSafeInteger(definition.size) || definition.size < 0)) {
      throw new Error(messages.INVALID_RESOURCE_OPTION(site, '"size" must be a non-negative integer (bytes)'));
    }
    const descriptor: ResourceDescriptor = { uri, name: definition.name };
    describe(descriptor, definition, site);
    if (definition.size !== undefined) descriptor.size = definition.size;
    return {
      uri,
      name: definition.name,
      descriptor: Object.freeze(descriptor),
      mimeType: definition.mimeType,
      cache: checkCache(definition.cache, site),
      listCache: checkListCache(definition.listCache, site),
      requiredScopes: definition.requiredScopes,
      authorize: definition.authorize,
      read,
    };
  }

  buildTemplate(
    definition: ResourceTemplateDefinition,
    read: ResourceTemplateInvoke,
    site: string,
  ): ResourceTemplateRuntime {
    const { uriTemplate } = definition;
    let template: UriTemplate;
    try {
      template = UriTemplate.parse(uriTemplate);
    } catch (error) {
      if (error instanceof UriTemplateError)
        throw new Error(messages.INVALID_URI_TEMPLATE(String(uriTemplate), site, error.message));
      throw error;
    }
    if (!SCHEME.test(template.literalPrefix)) {
      throw new Error(
        messages.INVALID_URI_TEMPLATE(
          uriTemplate,
          site,
          'it must start with literal text naming a scheme, such as "notes://{id}"',
        ),
      );
    }
    checkName(definition.name, site);
    const descriptor: ResourceTemplateDescriptor = { uriTemplate, name: definition.name };
    describe(descriptor, definition, site);
    const variables = this.variables(definition.args, template, site);
    return {
      uriTemplate,
      name: definition.name,
      template,
      descriptor: Object.freeze(descriptor),
      mimeType: definition.mimeType,
      cache: checkCache(definition.cache, site),
      listCache: checkListCache(definition.listCache, site),
      arguments: template.variables.map((name) => {
        const enumValues = variables.enums.get(name);
        return enumValues ? { name, enumValues } : { name };
      }),
      parseVariables: variables.parse,
      requiredScopes: definition.requiredScopes,
      authorize: definition.authorize,
      read,
    };
  }

  private variables(
    dto: Type<unknown> | undefined,
    template: UriTemplate,
    site: string,
  ): { enums: Map<string, string[]>; parse: (raw: UriTemplateMatch) => ArgumentsOutcome | Promise<ArgumentsOutcome> } {
    if (dto === undefined) return { enums: new Map(), parse: (raw) => ({ ok: true, value: raw }) };
    const { schema, cast } = this.dtos.compile(dto, site, { coerceStrings: true });
    const args = dtoArguments(schema);
    const names = new Set(args.map((a) => a.name));
    const missing = template.variables.filter((v) => !names.has(v));
    if (missing.length > 0) {
      throw new Error(
        messages.TEMPLATE_DTO_MISMATCH(
          site,
          template.template,
          `its variable${missing.length === 1 ? '' : 's'} ${missing.map((m) => `{${m}}`).join(', ')} ${missing.length === 1 ? 'has' : 'have'} no property in ${dto.name}`,
        ),
      );
    }
    const unfilled = args.filter((a) => a.required && !template.variables.includes(a.name));
    if (unfilled.length > 0) {
      throw new Error(
        messages.TEMPLATE_DTO_MISMATCH(
          site,
          template.template,
          `${dto.name} requires ${unfilled.map((a) => `"${a.name}"`).join(', ')}, which the template never fills`,
        ),
      );
    }
    const subject = `resource template "${template.template}"`;
    return {
      enums: new Map(args.filter((a) => a.enumValues).map((a) => [a.name, a.enumValues!])),
      parse: async (raw) => {
        const outcome = await cast(raw);
        return outcome.ok
          ? { ok: true, value: outcome.value }
          : { ok: false, message: formatIssues(outcome.issues, subject) };
      },
    };
  }
}

function checkName(name: unknown, site: string): void {
  if (typeof name !== 'string' || name.trim() === '') {
    throw new Error(messages.INVALID_RESOURCE_OPTION(site, '"name" must be a non-empty string'));
  }
}

function describe(
  descriptor: ResourceDescriptor | ResourceTemplateDescriptor,
  definition: ResourceDefinition | ResourceTemplateDefinition,
  site: string,
): void {
  if (definition.title !== undefined) descriptor.title = definition.title;
  if (definition.description !== undefined) descriptor.description = definition.description;
  if (definition.mimeType !== undefined) {
    if (typeof definition.mimeType !== 'string' || !/^[^\s/]+\/[^\s]+$/.test(definition.mimeType)) {
      throw new Error(
        messages.INVALID_RESOURCE_OPTION(
          site,
          `"mimeType" ${JSON.stringify(definition.mimeType)} is not a MIME type such as "text/plain"`,
        ),
      );
    }
    descriptor.mimeType = definition.mimeType;
  }
  if (definition.annotations !== undefined) descriptor.annotations = checkAnnotations(definition.annotations, site);
  if (definition.icons !== undefined) descriptor.icons = definition.icons.map((icon) => ({ ...icon }));
  if (definition._meta !== undefined) descriptor._meta = { ...definition._meta };
}

function checkAnnotations(annotations: ResourceAnnotations, site: string): ResourceAnnotations {
  const { audience, priority, lastModified } = annotations;
  if (
    audience !== undefined &&
    (!Array.isArray(audience) || !audience.every((a) => a === 'user' || a === 'assistant'))
  ) {
    throw new Error(
      messages.INVALID_RESOURCE_OPTION(site, '"annotations.audience" must be an array of "user" and/or "assistant"'),
    );
  }
  if (priority !== undefined && (typeof priority !== 'number' || !(priority >= 0 && priority <= 1))) {
    throw new Error(messages.INVALID_RESOURCE_OPTION(site, '"annotations.priority" must be a number from 0 to 1'));
  }
  if (lastModified !== undefined && (typeof lastModified !== 'string' || Number.isNaN(Date.parse(lastModified)))) {
    throw new Error(messages.INVALID_RESOURCE_OPTION(site, '"annotations.lastModified" must be an ISO 8601 timestamp'));
  }
  return { ...annotations, ...(audience ? { audience: [...audience] } : {}) };
}

/** Checks a `cache` read hint at bootstrap. */
export function checkCache(cache: CacheHint | undefined, site: string): CacheHint | undefined {
  if (cache === undefined) return undefined;
  if (
    typeof cache !== 'object' ||
    cache === null ||
    !Number.isSafeInteger(cache.ttlMs) ||
    cache.ttlMs < 0 ||
    (cache.cacheScope !== 'public' && cache.cacheScope !== 'private')
  ) {
    throw new Error(
      messages.INVALID_RESOURCE_OPTION(
        site,
        '"cache" must be { ttlMs: a non-negative integer, cacheScope: "public" | "private" }',
      ),
    );
  }
  return { ttlMs: cache.ttlMs, cacheScope: cache.cacheScope };
}
