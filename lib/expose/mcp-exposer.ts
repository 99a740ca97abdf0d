import { Inject, Injectable, Logger, RequestMethod, type OnModuleInit, type Type } from '@nestjs/common';
import { METHOD_METADATA, PATH_METADATA } from '@nestjs/common/constants.js';
import { DiscoveryService, ExternalContextCreator, MetadataScanner, ModuleRef, type NestContainer } from '@nestjs/core';
import { from } from 'rxjs';
import { MCP_RESOLVED_OPTIONS } from '../mcp.constants.js';
import type { ResolvedMcpOptions } from '../interfaces/mcp-module-options.interface.js';
import type { JsonObject, ToolAnnotations } from '../protocol/mcp-types.js';
import type { ArgumentsOutcome } from '../protocol/catalog.js';
import { dtoCompilerFor, type DtoCompiler } from '../discovery/dto-compiler.js';
import { McpRegistry } from '../discovery/mcp.registry.js';
import { toSnakeCase } from '../discovery/mcp.explorer.js';
import { ToolRuntimeFactory } from '../discovery/tool-runtime.factory.js';
import { MCP_EXPOSE_ROUTE_METADATA, type ExposeControllersOptions, type ExposedMessage, type ExposedToolOptions } from './expose.interfaces.js';
import { RouteInvokerFactory } from './route-invoker.js';
import { buildRouteInput } from './route-schema.js';
import { swaggerExcluded, swaggerOperationOf, swaggerOutputOf, swaggerTagsOf } from './swagger-metadata.js';

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
export class McpExposer implements OnModuleInit {
  private readonly logger = new Logger('McpModule');

  constructor(
    private readonly discovery: DiscoveryService,
    private readonly scanner: MetadataScanner,
    private readonly registry: McpRegistry,
    private readonly externalContextCreator: ExternalContextCreator,
    private readonly moduleRef: ModuleRef,
    @Inject(MCP_RESOLVED_OPTIONS) private readonly options: ResolvedMcpOptions,
  ) {}

  async onModuleInit(): Promise<void> {
    const dtos = dtoCompilerFor(this.options.schemas.nullableOptionals);
    const factory = new ToolRuntimeFactory(dtos);
    this.registry.namePattern = this.options.toolNamePattern;
    const names = [...this.exposeRoutes(factory, dtos), ...(await this.exposeMessages(factory))];
    if (names.length) this.logger.log(`Exposed ${names.length} existing route(s)/message(s) as MCP tools: ${names.join(', ')}`);
  }

  private exposeRoutes(factory: ToolRuntimeFactory, dtos: DtoCompiler): string[] {
    const listed = this.options.expose?.routes ?? [];
    const scope = this.options.include ? { include: this.options.include as Function[] } : {};
    const controllers = this.discovery.getControllers(scope).filter((w) => !w.isAlias && w.metatype);
    for (const entry of listed) {
      for (const controller of entry.controllers ?? []) {
        if (!controllers.some((w) => w.metatype === controller)) {
          throw new Error(
            `McpModule: "expose.routes" lists ${controller?.name ?? String(controller)}, which is not a controller of the application${this.options.include ? ' (within the "include" modules)' : ''}. Add it to a module's "controllers", or remove it from "expose.routes".`,
          );
        }
      }
    }
    const names: string[] = [];
    let invokers: RouteInvokerFactory | undefined;
    for (const wrapper of controllers) {
      const controller = wrapper.metatype as Type<unknown>;
      const selections = listed.filter((entry) => entry.controllers?.includes(controller));
      const prototype = controller.prototype as Record<string, Function>;
      for (const methodName of this.scanner.getAllMethodNames(prototype)) {
        const method = prototype[methodName]!;
        const decorated = Reflect.getMetadata(MCP_EXPOSE_ROUTE_METADATA, method) as ExposedToolOptions | undefined;
        const site = `${controller.name}#${methodName}`;
        const verbValue = Reflect.getMetadata(METHOD_METADATA, method) as number | undefined;
        const methodPath = Reflect.getMetadata(PATH_METADATA, method) as string | string[] | undefined;
        const isRoute = verbValue !== undefined && methodPath !== undefined;
        if (!isRoute) {
          if (decorated) throw new Error(`McpModule: @ExposeRoute() on ${site}, which is not a route (no @Get/@Post/... decorator). Put it on a route handler, or use @Tool() on a provider method.`);
          continue;
        }
        const verb = RequestMethod[verbValue] ?? 'GET';
        const path = joinPath(Reflect.getMetadata(PATH_METADATA, controller) as string | string[] | undefined, methodPath);
        const selected = selections.find((entry) => selects(entry, controller, method, methodName, verb, path));
        if (!decorated && !selected) continue;
        if (!wrapper.isDependencyTreeStatic() || !wrapper.instance) {
          throw new Error(
            `McpModule: route ${site} cannot be a tool: ${controller.name} is request-scoped (or depends on a request-scoped provider), which route tools do not support yet. Make it a singleton, or expose the capability through a @Tool() provider method.`,
          );
        }
        const key = `${verb} ${path}`;
        const overrides: ExposedToolOptions = { ...(selected?.tools?.[methodName] ?? selected?.tools?.[key] ?? {}), ...(decorated ?? {}) };
        const input = buildRouteInput(controller, methodName, path, dtos, site);
        describeArguments(input.schema, overrides.argumentDescriptions, site);
        const operation = swaggerOperationOf(method);
        const prefix = this.container().applicationConfig?.getGlobalPrefix() ?? '';
        const fullPath = prefix ? joinPath(prefix, path) : path;
        const name = overrides.name ?? toSnakeCase(methodName);
        const description = overrides.description ?? operation?.description ?? operation?.summary ?? `${verb} ${fullPath} (${controller.name}.${methodName}).`;
        const title = overrides.title ?? (operation?.description ? operation.summary : undefined);
        const annotations = { ...(VERB_ANNOTATIONS[verb] ?? {}), ...(overrides.annotations ?? {}) };
        invokers ??= new RouteInvokerFactory(this.container());
        const invoke = invokers.create(
          { instance: wrapper.instance as object, methodName, moduleKey: wrapper.host!.token as string, requestMethod: verbValue, verb, path: fullPath },
          input.routing,
        );
        const runtime = factory.build(
          {
            name,
            ...(title !== undefined ? { title } : {}),
            description,
            ...(Object.keys(annotations).length ? { annotations } : {}),
            input: input.schema,
            output: overrides.output ?? swaggerOutputOf(method),
            ...(overrides.requiredScopes ? { requiredScopes: [...overrides.requiredScopes] } : {}),
          },
          (_args, raw, context) => invoke(raw as Record<string, unknown>, context),
          site,
        );
        // Values are the route's own pipes' to judge (its ValidationPipe, ParseIntPipe...), as for
        // an HTTP request; only arguments the route has no place for are refused here.
        const known = new Set(Object.keys(input.schema.properties as object));
        this.registry.register({ ...runtime, parseArguments: (args) => unknownArguments(args, known, name) }, site, 'route');
        names.push(name);
      }
    }
    return names;
  }

  private async exposeMessages(factory: ToolRuntimeFactory): Promise<string[]> {
    const commands = this.options.expose?.commands ?? [];
    const queries = this.options.expose?.queries ?? [];
    if (commands.length + queries.length === 0) return [];
    const cqrs = await loadCqrs();
    const names: string[] = [];
    for (const [list, busType, what] of [
      [commands, cqrs.CommandBus, 'CommandBus'],
      [queries, cqrs.QueryBus, 'QueryBus'],
    ] as const) {
      if (list.length === 0) continue;
      let bus: { execute(message: unknown): Promise<unknown> };
      try {
        bus = this.moduleRef.get(busType, { strict: false }) as typeof bus;
      } catch {
        throw new Error(`McpModule: "expose.${what === 'CommandBus' ? 'commands' : 'queries'}" needs the ${what} of @nestjs/cqrs, which the application does not provide. Import CqrsModule.forRoot() in the application module.`);
      }
      for (const item of list) {
        const entry: ExposedMessage = typeof item === 'function' ? { message: item } : item;
        const site = `${what} ${entry.message.name}`;
        if (entry.argumentDescriptions) {
          throw new Error(`McpModule: ${site} sets "argumentDescriptions", which only route tools take. Describe the message's properties with @SchemaProperty({ description }) on ${entry.message.name}.`);
        }
        const name = entry.name ?? toSnakeCase(entry.message.name.replace(/(Command|Query)$/, ''));
        const runtime = factory.build(
          {
            name,
            ...(entry.title !== undefined ? { title: entry.title } : {}),
            description: entry.description ?? `Sends a ${entry.message.name} through the ${what}.`,
            ...(entry.annotations ? { annotations: entry.annotations } : what === 'QueryBus' ? { annotations: { readOnlyHint: true } } : {}),
            input: entry.message,
            ...(entry.output ? { output: entry.output } : {}),
            ...(entry.requiredScopes ? { requiredScopes: [...entry.requiredScopes] } : {}),
          },
          // The caster has built and validated the message instance; the bus finds its handler by class.
          (args) => from(bus.execute(args)),
          site,
        );
        this.registry.register(runtime, site, 'message');
        names.push(name);
      }
    }
    return names;
  }

  private container(): NestContainer {
    return (this.externalContextCreator as unknown as { container: NestContainer }).container;
  }
}

function unknownArguments(args: Record<string, unknown>, known: Set<string>, name: string): ArgumentsOutcome {
  const unknown = Object.keys(args).filter((key) => !known.has(key));
  if (unknown.length === 0) return { ok: true, value: args };
  return {
    ok: false,
    message: `Invalid arguments for tool "${name}": unknown argument(s) ${unknown.slice(0, 5).map((k) => `"${k}"`).join(', ')}; it takes ${[...known].map((k) => `"${k}"`).join(', ') || 'no arguments'}.`,
  };
}

function selects(entry: ExposeControllersOptions, controller: Function, method: Function, methodName: string, verb: string, path: string): boolean {
  if (swaggerExcluded(controller, method)) return false;
  const matches = (selector: string): boolean => selector === methodName || normalizeSelector(selector) === `${verb} ${path}`;
  if (entry.include && !entry.include.some(matches)) return false;
  if (entry.exclude?.some(matches)) return false;
  if (entry.tags && !swaggerTagsOf(controller, method).some((tag) => entry.tags!.includes(tag))) return false;
  return true;
}

function normalizeSelector(selector: string): string {
  const [verb, ...rest] = selector.trim().split(/\s+/);
  return `${verb!.toUpperCase()} ${joinPath(undefined, rest.join(' '))}`;
}

function joinPath(base: string | string[] | undefined, path: string | string[] | undefined): string {
  const first = (value: string | string[] | undefined): string => (Array.isArray(value) ? (value[0] ?? '') : (value ?? ''));
  const joined = `/${first(base)}/${first(path)}`.replace(/\/+/g, '/');
  return joined.length > 1 ? joined.replace(/\/$/, '') : joined;
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
function describeArguments(schema: JsonObject, descriptions: Record<string, string> | undefined, site: string): void {
  if (!descriptions) return;
  const properties = schema.properties as Record<string, JsonObject>;
  for (const [key, description] of Object.entries(descriptions)) {
    if (!properties[key]) {
      throw new Error(`McpModule: route ${site} has no argument "${key}" to describe (its arguments: ${Object.keys(properties).join(', ') || 'none'}). Fix the name in "argumentDescriptions".`);
    }
    properties[key] = { ...properties[key], description };
  }
}
