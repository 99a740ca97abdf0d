import { Inject, Injectable, Logger, type OnApplicationBootstrap, type OnModuleInit, type Type } from '@nestjs/common';
import { withClassToolSets } from '../decorators/tool-sets.decorator.js';
import { DiscoveryService, MetadataScanner } from '@nestjs/core';
import type { InstanceWrapper } from '@nestjs/core/injector/instance-wrapper.js';
import { MCP_SCAN_SCOPE, type McpScanScope } from '../common/mcp.constants.js';
import * as messages from '../common/mcp.messages.js';
import { McpHandlerFactory, type McpInvoker } from '../execution/mcp-handler.factory.js';
import type { ToolMetadata } from '../decorators/tool.decorator.js';
import { MCP_REQUIRED_SCOPES, requiredScopesOf } from '../auth/require-scopes.decorator.js';
import type { McpAccess } from '../protocol/catalog.js';
import { capabilityAccess, toolCall } from './capability-calls.js';
import { McpMetadataAccessor } from './mcp-metadata.accessor.js';
import { McpRegistry } from './mcp.registry.js';
import { type ToolDefinition } from './tool-runtime.factory.js';
import { toolsetOf } from './mcp-toolset.js';
import { MCP_FEATURES, type McpFeature } from './mcp-feature.js';

const PRIMITIVES = new Set<unknown>([Object, String, Number, Boolean, Array, Function, Promise, Symbol, BigInt]);

/** `createTask` → `create_task`, `HTTPStatus` → `http_status`. */
export function toSnakeCase(name: string): string {
  return name
    .replace(/([a-z0-9])([A-Z])/g, '$1_$2')
    .replace(/([A-Z]+)([A-Z][a-z])/g, '$1_$2')
    .toLowerCase();
}

/**
 * Walks the application's providers (or those of the `include` modules) at bootstrap, shows
 * every method to the packs (resources, prompts, completion... read their own decorators) and
 * registers every `@Tool()` method it finds.
 */
@Injectable()
export class McpDiscovery implements OnModuleInit, OnApplicationBootstrap {
  private readonly logger = new Logger('McpModule');

  constructor(
    private readonly discovery: DiscoveryService,
    private readonly scanner: MetadataScanner,
    private readonly accessor: McpMetadataAccessor,
    private readonly handlers: McpHandlerFactory,
    private readonly registry: McpRegistry,
    @Inject(MCP_SCAN_SCOPE) private readonly scope: McpScanScope,
    @Inject(MCP_FEATURES) private readonly features: readonly McpFeature[],
  ) {}

  /**
   * The one provider walk: registers the tools it finds, shows every method to the packs that
   * visit ({@link McpFeature.visit}), then lets every pack settle.
   */
  async onModuleInit(): Promise<void> {
    this.walk();
    await Promise.all(this.features.map((feature) => feature.settle?.()));
  }

  /** Every pack's bootstrap checks, once every pack settled. */
  async onApplicationBootstrap(): Promise<void> {
    for (const feature of this.features) await feature.ready?.();
  }

  private walk(): void {
    const visitors = this.features.filter((feature) => feature.visit);
    const factory = this.registry.toolFactory;
    const wrappers = [...this.discovery.getProviders(this.scope), ...this.discovery.getControllers(this.scope)];
    const seen = new Set<object>();
    for (const wrapper of wrappers) {
      if (wrapper.isAlias) continue;
      const scoped = !wrapper.isDependencyTreeStatic();
      // A request-scoped provider has no real instance at bootstrap: read its class, and let
      // each call resolve a fresh instance.
      const instance = scoped ? undefined : (wrapper.instance as object | undefined);
      const prototype = (
        instance ? Object.getPrototypeOf(instance) : (wrapper.metatype as Type<unknown> | null)?.prototype
      ) as object | undefined;
      if (!prototype || (!scoped && !instance)) continue;
      const identity = instance ?? prototype;
      if (seen.has(identity)) continue;
      seen.add(identity);
      const className = classNameOf(wrapper, prototype);
      const methodNames = this.scanner.getAllMethodNames(prototype);
      // A provider of McpModule.forFeature() gets its toolset's prefix, and sites say which
      // toolset, so a clash between two instances of one class names both.
      const toolset = toolsetOf(wrapper as never);
      const prefix = toolset?.prefix ?? '';
      const where = toolset ? ` in ${toolset.label}` : '';
      this.checkScopePlacement(prototype, methodNames, className);
      for (const methodName of methodNames) {
        const shown = (prototype as Record<string, unknown>)[methodName];
        const found = { wrapper, prototype, methodName, method: shown, site: `${className}#${methodName}`, instance };
        for (const visitor of visitors) visitor.visit!(toolset ? { ...found, toolset } : found);
        const metadata = this.accessor.getToolMetadata((prototype as Record<string, unknown>)[methodName]);
        if (!metadata) continue;
        const site = `${className}#${methodName}${where}`;
        this.checkParams(prototype, methodName, site, 'tool');
        const unprefixed = withClassToolSets(
          this.definition(metadata, prototype, methodName, site),
          prototype.constructor,
        );
        const method = (prototype as Record<string, unknown>)[methodName];
        const declared = this.features.reduce((found, feature) => feature.amendTool?.(found, method) ?? found, {
          ...unprefixed,
          name: prefix + unprefixed.name,
        });
        const definition = { ...declared, ...this.access(wrapper, instance, prototype, methodName, declared.name) };
        const invoker = this.gated(
          `tool:${definition.name}`,
          `tool "${definition.name}"`,
          prototype,
          methodName,
          this.invokerFor(wrapper, instance, methodName),
        );
        const runtime = factory.build(definition, toolCall(definition.name, invoker), site);
        this.registry.register(
          this.features.reduce((built, feature) => feature.amendToolRuntime?.(built, method) ?? built, runtime),
          site,
        );
      }
    }
    this.logger.log(
      `Discovered ${this.registry.tools().length} MCP tool(s): ${this.registry.toolNames().join(', ') || 'none'}`,
    );
  }

  /** Whether a pack's decorator declares a capability on the method. */
  private packCapability(method: unknown): boolean {
    return (
      typeof method === 'function' &&
      this.features.some((feature) => feature.capabilityKeys?.some((key) => Reflect.hasMetadata(key, method)))
    );
  }

  /** Refuses a parameter decorated by a decorator the MCP call cannot fill (it would silently get undefined). */
  private checkParams(prototype: object, methodName: string, site: string, what: string): void {
    const [foreign] = this.accessor.getForeignParams(prototype.constructor, methodName);
    if (foreign) throw new Error(messages.FOREIGN_PARAM_DECORATOR(site, what, foreign.index, foreign.type));
  }

  /**
   * @RequireScopes is enforced on MCP capabilities only (the transports ask McpDispatcher.requiredScopes);
   * anywhere else it would protect nothing while looking as if it did, so the bootstrap refuses it.
   */
  private checkScopePlacement(prototype: object, methodNames: string[], className: string): void {
    let capabilities = 0;
    for (const methodName of methodNames) {
      const method = (prototype as Record<string, unknown>)[methodName];
      if (
        this.accessor.hasMcpMetadata(method) ||
        this.packCapability(method) ||
        this.features.some((feature) => feature.classCapabilities?.(prototype.constructor).includes(methodName))
      )
        capabilities++;
      else if (typeof method === 'function' && Reflect.hasOwnMetadata(MCP_REQUIRED_SCOPES, method)) {
        throw new Error(messages.SCOPES_NOT_ON_CAPABILITY(`${className}#${methodName}`));
      }
    }
    if (capabilities === 0 && Reflect.hasOwnMetadata(MCP_REQUIRED_SCOPES, prototype.constructor)) {
      throw new Error(messages.SCOPES_NOT_ON_CAPABILITY(className));
    }
  }

  /**
   * What authorization needs of one capability method: the scopes of its class and method, and
   * a check of its guards. Guards need no real instance: a request-scoped provider is probed
   * through its class.
   */
  private access(
    wrapper: InstanceWrapper,
    instance: object | undefined,
    prototype: object,
    methodName: string,
    name: string,
  ): McpAccess {
    const probeHost = instance ?? (wrapper.instance as object | undefined) ?? Object.create(prototype);
    const scopes = requiredScopesOf(prototype.constructor, (prototype as Record<string, Function>)[methodName]);
    return capabilityAccess(name, this.handlers.createGuardCheck(probeHost, methodName), scopes);
  }

  private definition(metadata: ToolMetadata, prototype: object, methodName: string, site: string): ToolDefinition {
    const { methodName: _declared, name: declaredName, ...rest } = metadata;
    const name = declaredName ?? toSnakeCase(methodName);
    if (rest.input !== undefined) return { ...rest, name };
    const params = this.accessor.getArgsParams(prototype.constructor, methodName);
    const whole = params.filter((p) => p.data === undefined).map((p) => p.index);
    if (whole.length > 1) throw new Error(messages.MULTIPLE_ARGS_PARAMS(site));
    if (whole.length === 0) {
      if (params.length > 0) throw new Error(messages.AMBIGUOUS_INPUT(site));
      return { ...rest, name };
    }
    const indices = whole;
    const paramtypes: unknown[] = Reflect.getMetadata('design:paramtypes', prototype, methodName) ?? [];
    const type = paramtypes[indices[0]];
    if (typeof type !== 'function' || PRIMITIVES.has(type)) throw new Error(messages.AMBIGUOUS_INPUT(site));
    return { ...rest, name, input: type as Type<unknown> };
  }

  /**
   * Policies read their decorators from the class and method, and count by the capability's key:
   * a request-scoped provider's fresh instance per call shares one count.
   */
  private gated(key: string, label: string, prototype: object, methodName: string, invoke: McpInvoker): McpInvoker {
    return this.handlers.gated(
      { key, label, owner: prototype.constructor, method: (prototype as Record<string, Function>)[methodName]! },
      invoke,
    );
  }

  /** Singletons are wrapped once; request-scoped providers resolve an instance per call. */
  private invokerFor(wrapper: InstanceWrapper, instance: object | undefined, methodName: string): McpInvoker {
    return instance ? this.handlers.create(instance, methodName) : this.handlers.createScoped(wrapper, methodName);
  }
}

function classNameOf(wrapper: InstanceWrapper, prototype: object): string {
  const ctorName = (prototype as { constructor?: { name?: string } }).constructor?.name;
  return ctorName && ctorName !== 'Object' ? ctorName : String(wrapper.name ?? 'provider');
}
