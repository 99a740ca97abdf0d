import { SetMetadata, type Type } from '@nestjs/common';
import type { JsonObject, ToolAnnotations } from '../protocol/mcp-types.js';

/** @internal */
export const MCP_EXPOSE_ROUTE_METADATA = 'mcp:expose-route';

/**
 * How one exposed route or CQRS message appears as a tool. Every field overrides what is derived
 * (the name from the handler, the description from Swagger or the path, annotations from the
 * HTTP verb).
 *
 * @publicApi
 */
export interface ExposedToolOptions {
  /** @default the handler name (or the message class name) in snake_case */
  name?: string;
  title?: string;
  description?: string;
  /** Merged over the annotations derived from the HTTP verb. */
  annotations?: ToolAnnotations;
  /** The result's shape: a DTO class or a JSON Schema. @default the Swagger 200/201 response type, if any */
  output?: Type<unknown> | JsonObject;
  /**
   * Scopes the caller's token must grant (enforced when the module's `auth` is set), as
   * `@RequireScopes()` does for a `@Tool()`. CQRS tools pass no guard, so this is how to protect them.
   */
  requiredScopes?: string[];
  /**
   * Descriptions of a route tool's input arguments, by argument name. For what has no DTO property
   * to carry `@SchemaProperty({ description })`: path tokens (`:id`) and scalar `@Param('id')`,
   * `@Query('q')` or `@Body('x')` arguments. Replaces the description derived from the DTO, if any.
   * An unknown name, or a CQRS message (whose class takes `@SchemaProperty`), fails at bootstrap.
   */
  argumentDescriptions?: Record<string, string>;
}

/**
 * A route selector: the handler's method name (`findAll`), or `METHOD /path` as the route is
 * served (`GET /orders/:id`, the global prefix not included).
 *
 * @publicApi
 */
export type RouteSelector = string;

/**
 * Controllers whose routes become tools without a line changed in them.
 *
 * @publicApi
 */
export interface ExposeControllersOptions {
  /** The controllers to expose. Every route of each is exposed unless `include`/`exclude` narrow it. */
  controllers: Type<unknown>[];
  /** Only these routes (by handler name or `METHOD /path`). @default every route */
  include?: RouteSelector[];
  /** Never these routes (by handler name or `METHOD /path`). Applied after `include`. */
  exclude?: RouteSelector[];
  /** Per-route tool options, keyed by handler name or `METHOD /path`. */
  tools?: Record<RouteSelector, ExposedToolOptions>;
  /**
   * Swagger tags that select routes (a route or its controller tagged with one of them, through
   * `@ApiTags`). Routes marked `@ApiExcludeEndpoint()` are always left out.
   */
  tags?: string[];
}

/**
 * A `@nestjs/cqrs` command or query class exposed as a tool: its class-validator properties are
 * the input, the call builds an instance and sends it through the `CommandBus` or `QueryBus`.
 *
 * @publicApi
 */
export interface ExposedMessage extends ExposedToolOptions {
  message: Type<unknown>;
}

/**
 * What the application already has, exposed as MCP tools (the `expose` option of `McpModule`).
 *
 * @publicApi
 */
export interface McpExposeOptions {
  /** Controller routes, run through their own guards, interceptors, pipes and filters. */
  routes?: ExposeControllersOptions[];
  /** `@nestjs/cqrs` commands, sent through the `CommandBus`. */
  commands?: Array<Type<unknown> | ExposedMessage>;
  /** `@nestjs/cqrs` queries, sent through the `QueryBus`. */
  queries?: Array<Type<unknown> | ExposedMessage>;
}

/**
 * Makes one controller route an MCP tool too, keeping it an HTTP route. The tool's input merges
 * the route's `@Body()`, `@Query()` and `@Param()` parameters; a call runs the route's own guards,
 * interceptors, pipes and filters with an HTTP-shaped context whose request carries the MCP
 * request's headers and principal (`request.user`).
 *
 * @example
 * ```ts
 * @Get(':id')
 * @ExposeRoute({ description: 'One order by id' })
 * findOne(@Param('id') id: string) { ... }
 * ```
 * @publicApi
 */
export function ExposeRoute(options: ExposedToolOptions = {}): MethodDecorator {
  return SetMetadata(MCP_EXPOSE_ROUTE_METADATA, { ...options });
}
