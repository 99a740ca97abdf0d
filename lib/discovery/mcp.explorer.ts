import { Inject, Injectable, Logger, type OnModuleInit, type Type } from '@nestjs/common';
import { DiscoveryService, MetadataScanner } from '@nestjs/core';
import type { InstanceWrapper } from '@nestjs/core/injector/instance-wrapper.js';
import { MCP_RESOLVED_OPTIONS } from '../mcp.constants.js';
import * as messages from '../mcp.messages.js';
import type { ResolvedMcpOptions } from '../interfaces/mcp-module-options.interface.js';
import { McpHandlerFactory } from '../execution/mcp-handler.factory.js';
import type { McpCall } from '../execution/mcp-call.interface.js';
import type { ToolMetadata } from '../decorators/tool.decorator.js';
import { McpMetadataAccessor } from './mcp-metadata.accessor.js';
import { McpRegistry } from './mcp.registry.js';
import { ToolRuntimeFactory, type ToolDefinition } from './tool-runtime.factory.js';

const PRIMITIVES = new Set<unknown>([Object, String, Number, Boolean, Array, Function, Promise, Symbol, BigInt]);

/** `createTask` → `create_task`, `HTTPStatus` → `http_status`. */
export function toSnakeCase(name: string): string {
  return name
    .replace(/([a-z0-9])([A-Z])/g, '$1_$2')
    .replace(/([A-Z]+)([A-Z][a-z])/g, '$1_$2')
    .toLowerCase();
}

/**
 * Walks the application's providers (or those of the `include` modules) at bootstrap and
 * registers every `@Tool()` method it finds.
 */
@Injectable()
export class McpExplorer implements OnModuleInit {
  private readonly logger = new Logger('McpModule');

  constructor(
    private readonly discovery: DiscoveryService,
    private readonly scanner: MetadataScanner,
    private readonly accessor: McpMetadataAccessor,
    private readonly handlers: McpHandlerFactory,
    private readonly registry: McpRegistry,
    @Inject(MCP_RESOLVED_OPTIONS) private readonly options: ResolvedMcpOptions,
  ) {}

  onModuleInit(): void {
    const factory = new ToolRuntimeFactory();
    this.registry.factory = factory;
    this.registry.namePattern = this.options.toolNamePattern;
    const scope = this.options.include ? { include: this.options.include as Function[] } : {};
    const wrappers = [...this.discovery.getProviders(scope), ...this.discovery.getControllers(scope)];
    const seen = new Set<object>();
    for (const wrapper of wrappers) {
      if (wrapper.isAlias) continue;
      const instance = wrapper.instance as object | undefined;
      const prototype = instance ? Object.getPrototypeOf(instance) : undefined;
      if (!instance || !prototype || seen.has(instance)) {
        if (!wrapper.isDependencyTreeStatic() && wrapper.metatype) this.refuseIfScoped(wrapper);
        continue;
      }
      seen.add(instance);
      const className = classNameOf(wrapper, instance);
      for (const methodName of this.scanner.getAllMethodNames(prototype)) {
        const metadata = this.accessor.getToolMetadata((prototype as Record<string, unknown>)[methodName]);
        if (!metadata) continue;
        const site = `${className}#${methodName}`;
        if (!wrapper.isDependencyTreeStatic()) throw new Error(messages.REQUEST_SCOPED_TOOL(site));
        const definition = this.definition(metadata, prototype, methodName, site);
        const invoker = this.handlers.create(instance, methodName);
        const runtime = factory.build(
          definition,
          (args, rawArguments, context) =>
            invoker({ method: 'tools/call', name: definition.name, rawArguments, arguments: args, context } satisfies McpCall),
          site,
        );
        this.registry.register(runtime, site);
      }
    }
    this.logger.log(`Discovered ${this.registry.tools().length} MCP tool(s): ${this.registry.toolNames().join(', ') || 'none'}`);
  }

  private definition(metadata: ToolMetadata, prototype: object, methodName: string, site: string): ToolDefinition {
    const { methodName: _declared, name: declaredName, ...rest } = metadata;
    const name = declaredName ?? toSnakeCase(methodName);
    if (rest.input !== undefined) return { ...rest, name };
    const indices = this.accessor.getArgsParamIndices(prototype.constructor, methodName);
    if (indices.length > 1) throw new Error(messages.MULTIPLE_ARGS_PARAMS(site));
    if (indices.length === 0) return { ...rest, name };
    const paramtypes: unknown[] = Reflect.getMetadata('design:paramtypes', prototype, methodName) ?? [];
    const type = paramtypes[indices[0]];
    if (typeof type !== 'function' || PRIMITIVES.has(type)) throw new Error(messages.AMBIGUOUS_INPUT(site));
    return { ...rest, name, input: type as Type<unknown> };
  }

  private refuseIfScoped(wrapper: InstanceWrapper): void {
    const metatype = wrapper.metatype as Type<unknown> | null;
    const prototype = metatype?.prototype as object | undefined;
    if (!prototype) return;
    for (const methodName of this.scanner.getAllMethodNames(prototype)) {
      if (this.accessor.getToolMetadata((prototype as Record<string, unknown>)[methodName])) {
        throw new Error(messages.REQUEST_SCOPED_TOOL(`${metatype!.name}#${methodName}`));
      }
    }
  }
}

function classNameOf(wrapper: InstanceWrapper, instance: object): string {
  const ctorName = (Object.getPrototypeOf(instance) as { constructor?: { name?: string } }).constructor?.name;
  return ctorName && ctorName !== 'Object' ? ctorName : String(wrapper.name ?? 'provider');
}
