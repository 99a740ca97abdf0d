import { Inject, Injectable, Logger, Optional, type Type } from '@nestjs/common';
import { packSlice, type McpFeature } from '../discovery/mcp-feature.js';
import {
  DiscoveryService,
  ExternalContextCreator,
  HttpAdapterHost,
  MetadataScanner,
  ModuleRef,
  type NestContainer,
} from '@nestjs/core';
import type { InstanceWrapper } from '@nestjs/core/injector/instance-wrapper.js';
import { MCP_AUTH_OPTIONS, MCP_DTO_COMPILER, MCP_SCAN_SCOPE, type McpScanScope } from '../common/mcp.constants.js';
import type { McpAuthOptions } from '../auth/mcp-auth.interface.js';
import type { JsonObject, ToolAnnotations } from '../protocol/mcp-types.js';
import type { ArgumentsOutcome } from '../protocol/catalog.js';
import { ToolError } from '../protocol/errors.js';
import type { DtoCompiler } from '../discovery/dto-compiler.js';
import { McpRegistry } from '../discovery/mcp.registry.js';
import { toSnakeCase } from '../discovery/mcp-discovery.js';
import { ToolRuntimeFactory } from '../tools/tool-runtime.factory.js';
import { McpHandlerFactory } from '../execution/mcp-handler.factory.js';
import {
  MCP_EXPOSE_OPTIONS,
  MCP_EXPOSE_ROUTE_METADATA,
  type McpExposeOptions,
  type ExposeControllersOptions,
  type ExposedMessage,
  type ExposedToolOptions,
} from './expose.interfaces.js';
import { createRouteInvoker, routeInjectorFor, type RouteInject } from './route-invoker.js';
import { buildRouteInput } from './route-schema.js';
import { swaggerExcluded, swaggerOperationOf, swaggerOutputOf, swaggerTagsOf } from './swagger-metadata.js';
import { RouteMap, checkSelectors, routeLabel, selects, versionNote, type ExposableRoute } from './exposed-routes.js';
import { buildMessageTool } from './message-tools.js';

/** Annotations an HTTP verb implies; explicit ones win. */
const VERB_ANNOTATIONS: Partial<Record<string, ToolAnnotations>> = {
  GET: { readOnlyHint: true },
  HEAD: { readOnlyHint: true },
  PUT: { readOnlyHint: false, idempotentHint: true },
  DELETE: { readOnlyHint: false, idempotentHint: true, destructiveHint: true },
};

/**
 * Registers what the application already has as tools: controller routes marked `@ExposeRoute()`
 * or listed in `expose.routes`, and the `@nestjs/cqrs` commands and queries of `expose.commands` /
 * `expose.queries`.
 */
@Injectable()
export class McpExposer implements McpFeature {
  static readonly providers = [packSlice(MCP_EXPOSE_OPTIONS, 'expose')];
  readonly kind = 'exposed routes';
  private readonly logger = new Logger('McpModule');

  constructor(
    private readonly discovery: DiscoveryService,
    private readonly scanner: MetadataScanner,
    private readonly registry: McpRegistry,
    private readonly externalContextCreator: ExternalContextCreator,
    private readonly moduleRef: ModuleRef,
    private readonly handlers: McpHandlerFactory,
    @Inject(MCP_EXPOSE_OPTIONS) private readonly options: McpExposeOptions | null,
    @Inject(MCP_SCAN_SCOPE) private readonly scope: McpScanScope,
    @Inject(MCP_AUTH_OPTIONS) private readonly auth: McpAuthOptions | null,
    @Inject(MCP_DTO_COMPILER) private readonly dtos: DtoCompiler,
    @Optional() private readonly adapterHost?: HttpAdapterHost,
  ) {}

  async settle(): Promise<void> {
    const dtos = this.dtos;
    const factory = new ToolRuntimeFactory(dtos);
    const names = [...(await this.exposeRoutes(factory, dtos)), ...(await this.exposeMessages(factory, dtos))];
    if (names.length)
      this.logger.log(`Exposed ${names.length} existing route(s)/message(s) as MCP tools: ${names.join(', ')}`);
  }

  private async exposeRoutes(factory: ToolRuntimeFactory, dtos: DtoCompiler): Promise<string[]> {
    const listed = this.options?.routes ?? [];
    const controllers = this.discovery.getControllers(this.scope).filter((w) => !w.isAlias && w.metatype);
    for (const entry of listed) {
      for (const controller of entry.controllers ?? []) {
        if (!controllers.some((w) => w.metatype === controller)) {
          throw new Error(
            `McpModule: "expose.routes" lists ${controller?.name ?? String(controller)}, which is not a controller of the application${this.scope.include ? ' (within the "include" modules)' : ''}. Add it to a module's "controllers", or remove it from "expose.routes".`,
          );
        }
      }
    }
    const map = new RouteMap(this.container());
    const tagsOf = (route: ExposableRoute): string[] => swaggerTagsOf(route.controller, route.method);
    const byController = new Map<Function, ExposableRoute[]>();
    for (const wrapper of controllers) byController.set(wrapper.metatype as Function, this.routesOf(map, wrapper));
    listed.forEach((entry, index) =>
      checkSelectors(
        entry,
        index,
        (entry.controllers ?? []).flatMap((c) => byController.get(c) ?? []),
        tagsOf,
      ),
    );

    const names: string[] = [];
    let inject: RouteInject | undefined;
    let injectorResolved = false;
    const injector = (): RouteInject => {
      if (inject) return inject;
      throw new ToolError(
        "Route tools send each call through the app's HTTP server, and this app has none: it was created as an application context (NestFactory.createApplicationContext). Create it with NestFactory.create() to call route tools.",
      );
    };
    for (const wrapper of controllers) {
      const controller = wrapper.metatype as Type<unknown>;
      const selections = listed.filter((entry) => entry.controllers?.includes(controller));
      for (const route of byController.get(controller) ?? []) {
        const { methodName, method, site, verb } = route;
        const decorated = Reflect.getMetadata(MCP_EXPOSE_ROUTE_METADATA, method) as ExposedToolOptions | undefined;
        const selected = selections.find((entry) => routeSelected(entry, route));
        if (!decorated && !selected) continue;
        if (!wrapper.isDependencyTreeStatic() || !wrapper.instance) {
          throw new Error(
            `McpModule: route ${site} cannot be a tool: ${controller.name} is request-scoped (or depends on a request-scoped provider), which route tools do not support yet. Make it a singleton, or expose the capability through a @Tool() provider method.`,
          );
        }
        if (!injectorResolved) {
          inject = await routeInjectorFor(this.adapterHost?.httpAdapter);
          injectorResolved = true;
        }
        const overrides: ExposedToolOptions = {
          ...(selected ? toolOptionsFor(selected, route) : {}),
          ...(decorated ?? {}),
        };
        const input = buildRouteInput(controller, methodName, route.declared[0]!, dtos, site);
        describeArguments(input.schema, overrides.argumentDescriptions, site);
        this.checkScopes(overrides.requiredScopes, site);
        const operation = swaggerOperationOf(method);
        const name = overrides.name ?? toSnakeCase(methodName);
        const swagger = operation?.description ?? operation?.summary;
        const description =
          overrides.description ??
          (swagger !== undefined
            ? `${swagger}${route.versions.length ? ` (${versionNote(route).slice(2)})` : ''}`
            : `${routeLabel(route)} (${controller.name}.${methodName}${versionNote(route)}).`);
        const title = overrides.title ?? (operation?.description ? operation.summary : undefined);
        const annotations = { ...(VERB_ANNOTATIONS[verb] ?? {}), ...(overrides.annotations ?? {}) };
        const invoke = createRouteInvoker(route.target, input.routing, injector);
        const runtime = factory.build(
          {
            name,
            ...(title !== undefined ? { title } : {}),
            description,
            ...(Object.keys(annotations).length ? { annotations } : {}),
            input: input.schema,
            output: overrides.output ?? swaggerOutputOf(method),
            ...(overrides.requiredScopes ? { requiredScopes: [...overrides.requiredScopes] } : {}),
            ...(selected?.sets || overrides.sets
              ? { sets: [...(selected?.sets ?? []), ...(overrides.sets ?? [])] }
              : {}),
          },
          (_args, raw, context) => invoke(raw as Record<string, unknown>, context),
          site,
        );
        // Values are the route's own pipes' to judge (its ValidationPipe, ParseIntPipe...), as for
        // an HTTP request; only arguments the route has no place for are refused here.
        const known = new Set(Object.keys(input.schema.properties as object));
        const rename = `name it in "expose.routes" (tools: { '${routeLabel(route)}': { name: '...' } }) or with @ExposeRoute({ name })`;
        this.registry.register(
          { ...runtime, parseArguments: (args) => unknownArguments(args, known, name) },
          site,
          'route',
          rename,
        );
        names.push(name);
      }
    }
    return names;
  }

  /** The routes of a controller; @ExposeRoute() on a method that is no route is an error. */
  private routesOf(map: RouteMap, wrapper: InstanceWrapper): ExposableRoute[] {
    const controller = wrapper.metatype as Type<unknown>;
    const methodNames = this.scanner.getAllMethodNames(controller.prototype as object);
    const routes = map.routesOf(controller, wrapper.host?.metatype, methodNames);
    for (const methodName of methodNames) {
      const method = (controller.prototype as Record<string, Function>)[methodName]!;
      if (Reflect.getMetadata(MCP_EXPOSE_ROUTE_METADATA, method) && !routes.some((r) => r.methodName === methodName)) {
        throw new Error(
          `McpModule: @ExposeRoute() on ${controller.name}#${methodName}, which is not a route (no @Get/@Post/... decorator). Put it on a route handler, or use @Tool() on a provider method.`,
        );
      }
    }
    return routes;
  }

  private checkScopes(scopes: string[] | undefined, site: string): void {
    if (!scopes?.length || this.auth) return;
    throw new Error(
      `McpModule: ${site} requires the scope(s) ${scopes.join(', ')}, which only the module's "auth" option enforces, and it is not set: the scopes would protect nothing. Configure "auth", or remove "requiredScopes".`,
    );
  }

  private async exposeMessages(factory: ToolRuntimeFactory, dtos: DtoCompiler): Promise<string[]> {
    const commands = this.options?.commands ?? [];
    const queries = this.options?.queries ?? [];
    if (commands.length + queries.length === 0) return [];
    const cqrs = await loadCqrs();
    const names: string[] = [];
    for (const [list, busType, kind] of [
      [commands, cqrs.CommandBus, 'CommandBus'],
      [queries, cqrs.QueryBus, 'QueryBus'],
    ] as const) {
      if (list.length === 0) continue;
      let bus: { execute(message: unknown): Promise<unknown> };
      try {
        bus = this.moduleRef.get(busType, { strict: false }) as typeof bus;
      } catch {
        throw new Error(
          `McpModule: "expose.${kind === 'CommandBus' ? 'commands' : 'queries'}" needs the ${kind} of @nestjs/cqrs, which the application does not provide. Import CqrsModule.forRoot() in the application module.`,
        );
      }
      for (const item of list) {
        const entry: ExposedMessage = typeof item === 'function' ? { message: item } : item;
        const { runtime, site, rename } = buildMessageTool(entry, kind, bus, {
          handlers: this.handlers,
          factory,
          dtos,
          auth: this.auth !== null,
        });
        this.registry.register(runtime, site, 'message', rename);
        names.push(runtime.name);
      }
    }
    return names;
  }

  private container(): NestContainer {
    return (this.externalContextCreator as unknown as { container: NestContainer }).container;
  }
}

/** Whether an `expose.routes` entry selects a route (Swagger-excluded routes never). */
function routeSelected(entry: ExposeControllersOptions, route: ExposableRoute): boolean {
  if (swaggerExcluded(route.controller, route.method)) return false;
  if (entry.include && !entry.include.some((s) => selects(s, route))) return false;
  if (entry.exclude?.some((s) => selects(s, route))) return false;
  if (entry.tags && !swaggerTagsOf(route.controller, route.method).some((tag) => entry.tags!.includes(tag)))
    return false;
  return true;
}

/** The `tools` options of a route; two keys that both select it are ambiguous. */
function toolOptionsFor(entry: ExposeControllersOptions, route: ExposableRoute): ExposedToolOptions {
  const matching = Object.entries(entry.tools ?? {}).filter(
    ([selector, options]) => options !== undefined && selects(selector, route),
  );
  if (matching.length > 1) {
    throw new Error(
      `McpModule: route ${route.site} is selected by two "tools" keys, ${matching.map(([k]) => `"${k}"`).join(' and ')}, so its options are ambiguous. Keep one, or use a path that names only one route ("${routeLabel(route)}").`,
    );
  }
  return matching[0]?.[1] ?? {};
}

function unknownArguments(args: Record<string, unknown>, known: Set<string>, name: string): ArgumentsOutcome {
  const unknown = Object.keys(args).filter((key) => !known.has(key));
  if (unknown.length === 0) return { ok: true, value: args };
  return {
    ok: false,
    message: `Invalid arguments for tool "${name}": unknown argument(s) ${unknown
      .slice(0, 5)
      .map((k) => `"${k}"`)
      .join(', ')}; it takes ${[...known].map((k) => `"${k}"`).join(', ') || 'no arguments'}.`,
  };
}

interface CqrsPackage {
  CommandBus: Type<unknown>;
  QueryBus: Type<unknown>;
}

/** Loads `@nestjs/cqrs` only when commands or queries are exposed: it is an optional peer dependency. */
async function loadCqrs(): Promise<CqrsPackage> {
  const specifier = '@nestjs/cqrs';
  try {
    return (await import(specifier)) as CqrsPackage;
  } catch (error) {
    throw new Error(
      `McpModule: "expose.commands"/"expose.queries" need the "@nestjs/cqrs" package, which could not be loaded (${(error as Error).message}). Install it with "npm install @nestjs/cqrs", or remove those options.`,
    );
  }
}

/** Puts `argumentDescriptions` into the route tool's input schema; a name it lacks is a typo. */
function describeArguments(
  schema: JsonObject,
  descriptions: ExposedToolOptions['argumentDescriptions'],
  site: string,
): void {
  if (!descriptions) return;
  const properties = schema.properties as Record<string, JsonObject>;
  for (const [key, description] of Object.entries(descriptions)) {
    if (description === undefined) continue;
    if (!properties[key]) {
      throw new Error(
        `McpModule: route ${site} has no argument "${key}" to describe (its arguments: ${Object.keys(properties).join(', ') || 'none'}). Fix the name in "argumentDescriptions".`,
      );
    }
    properties[key] = { ...properties[key], description };
  }
}
