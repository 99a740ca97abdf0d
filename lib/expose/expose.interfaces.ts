import { SetMetadata, type Type } from '@nestjs/common';
import type { JsonObject, ToolAnnotations } from '../protocol/mcp-types.js';
import type { McpContext } from '../protocol/context.js';
import type { McpPrincipal } from '../auth/mcp-auth.interface.js';
import type { StandardSchemaV1 } from '../schema/standard-schema.js';
import type { DynamicCapabilityOptions } from '../discovery/dynamic-definitions.js';

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
   * `@RequireScopes()` does for a `@Tool()`.
   */
  requiredScopes?: string[];
  /** The tool sets this tool belongs to (names defined in the module's `toolSets`). */
  sets?: string[];
  /**
   * Descriptions of a route tool's input arguments, by argument name. For what has no DTO property
   * to carry `@SchemaProperty({ description })`: path tokens (`:id`) and scalar `@Param('id')`,
   * `@Query('q')` or `@Body('x')` arguments. Replaces the description derived from the DTO, if any.
   * An unknown name, or a CQRS message (whose class takes `@SchemaProperty`), fails at bootstrap.
   */
  argumentDescriptions?: { [argument: string]: string | undefined };
}

/**
 * A route selector: the handler's method name (`findAll`), or `METHOD /path` with the path as
 * the controller declares it (`GET /orders/:id`) or as the route is served and its tool's
 * description prints it (`GET /api/v1/orders/:id`: global prefix, RouterModule path and URI
 * version included). A selector that matches no route of the entry's controllers fails the
 * bootstrap.
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
  /** The tool sets every route tool of this entry belongs to, added to a route's own `tools[...].sets`. */
  sets?: string[];
  /** Never these routes (by handler name or `METHOD /path`). Applied after `include`. */
  exclude?: RouteSelector[];
  /**
   * Per-route tool options, keyed by handler name or `METHOD /path`. (Values may be `undefined`,
   * so that entries built in a `forRootAsync` factory type-check without a written return type.)
   */
  tools?: { [selector: RouteSelector]: ExposedToolOptions | undefined };
  /**
   * Swagger tags that select routes (a route or its controller tagged with one of them, through
   * `@ApiTags`). Routes marked `@ApiExcludeEndpoint()` are always left out. A tag no route
   * carries fails the bootstrap.
   */
  tags?: string[];
}

/**
 * Who sends an exposed command or query, as the functions of `fromCaller` and `create` see it:
 * after the tool's guards ran, so `request.user` is what the app's guard made.
 *
 * @publicApi
 */
export interface McpMessageCaller {
  /** The principal the module's `auth` authenticated (undefined without `auth`). */
  principal?: McpPrincipal;
  /** The HTTP request of the MCP call (undefined over stdio), with `user` as the app's guards set it. */
  request?: any;
  context: McpContext;
}

/**
 * A `@nestjs/cqrs` command or query class exposed as a tool. The call runs the Nest pipeline (the
 * app's global guards and interceptors, and `decorators`), builds the message and sends it
 * through the `CommandBus` or `QueryBus`. Every exposed message must say what protects it: a
 * guard in `decorators`, `requiredScopes` (with the module's `auth`), or `public: true`.
 *
 * The input schema is the message class's decorated properties (class-validator or
 * `@SchemaProperty`). A message written the Nest way, with constructor parameters, gives `input`
 * (the schema of what the model sends) and `create` (which calls the constructor).
 *
 * @example
 * { message: PlaceOrderCommand, decorators: [UseGuards(JwtAuthGuard)], input: PlaceOrderInput,
 *   fromCaller: { customerId: ({ request }) => request.user.id },
 *   create: (input) => new PlaceOrderCommand(input.customerId, input.lines) }
 * @publicApi
 */
export interface ExposedMessage<TInput = any> extends ExposedToolOptions, DynamicCapabilityOptions {
  message: Type<unknown>;
  /**
   * Send it with no guard of its own: anyone who may call the MCP endpoint may send it (with the
   * module's `auth`, any authenticated caller). Without it, a message that no guard in
   * `decorators` and no `requiredScopes` protect fails the bootstrap.
   * @default false
   */
  public?: boolean;
  /**
   * The input when the message class has no decorated properties (constructor parameters): a DTO
   * class, a JSON Schema object, or a Standard Schema (zod, valibot). Requires `create` when the
   * constructor takes parameters.
   */
  input?: Type<TInput> | JsonObject | StandardSchemaV1<unknown, TInput>;
  /**
   * Builds the message from the validated input (fields of `fromCaller` included), after the
   * tool's guards ran. @default for a decorated class, the validated instance; with `input`, a
   * `new message()` with the input's fields assigned (only when the constructor takes no parameter)
   */
  create?: (input: TInput, caller: McpMessageCaller) => unknown;
  /**
   * Fields of the input filled from the caller, never from the model: each is left out of the
   * listed input schema, a call that sends it is refused, and its value is computed after the
   * tool's guards ran and validated with the rest (`customerId: ({ request }) => request.user.id`).
   * A function that returns `undefined` for a required field refuses the call.
   */
  fromCaller?: { [field: string]: ((caller: McpMessageCaller) => unknown) | undefined };
}

/** The `expose` slice of the module options (null without it). @internal */
export const MCP_EXPOSE_OPTIONS = Symbol.for('nestjs-model-context:MCP_EXPOSE_OPTIONS');

/**
 * What the application already has, exposed as MCP tools (the `expose` option of `McpModule`).
 *
 * @publicApi
 */
export interface McpExposeOptions {
  /**
   * Controller routes. A call is a real request through the app's HTTP adapter (its middleware,
   * guards, interceptors, pipes and filters), carrying the MCP caller's headers.
   */
  routes?: ExposeControllersOptions[];
  /** `@nestjs/cqrs` commands, sent through the `CommandBus`. */
  commands?: Array<Type<unknown> | ExposedMessage>;
  /** `@nestjs/cqrs` queries, sent through the `QueryBus`. */
  queries?: Array<Type<unknown> | ExposedMessage>;
}

/**
 * Makes one controller route an MCP tool too, keeping it an HTTP route. The tool's input merges
 * the route's `@Body()`, `@Query()` and `@Param()` parameters; a call is a real request through the
 * app's HTTP adapter (middleware, guards, interceptors, pipes, filters), carrying the MCP
 * caller's headers (`Authorization` included), so the app's own auth decides.
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
