import { Inject, Injectable, Logger, type OnApplicationBootstrap, type OnModuleInit, type Type } from '@nestjs/common';
import { DiscoveryService, MetadataScanner } from '@nestjs/core';
import type { InstanceWrapper } from '@nestjs/core/injector/instance-wrapper.js';
import { MCP_SCAN_SCOPE, type McpScanScope } from '../common/mcp.constants.js';
import * as messages from '../common/mcp.messages.js';
import { MCP_REQUIRED_SCOPES } from '../auth/require-scopes.decorator.js';
import { McpRegistry } from './mcp.registry.js';
import { toolsetOf } from './mcp-toolset.js';
import { MCP_FEATURES, type McpFeature } from './mcp-feature.js';

/** `createTask` → `create_task`, `HTTPStatus` → `http_status`. */
export function toSnakeCase(name: string): string {
  return name
    .replace(/([a-z0-9])([A-Z])/g, '$1_$2')
    .replace(/([A-Z]+)([A-Z][a-z])/g, '$1_$2')
    .toLowerCase();
}

/**
 * Walks the application's providers (or those of the `include` modules) at bootstrap, shows
 * every method to the packs, which read their own decorators (tools, resources, prompts,
 * completion, skills, apps, ...).
 */
@Injectable()
export class McpDiscovery implements OnModuleInit, OnApplicationBootstrap {
  private readonly logger = new Logger('McpModule');

  constructor(
    private readonly discovery: DiscoveryService,
    private readonly scanner: MetadataScanner,
    private readonly registry: McpRegistry,
    @Inject(MCP_SCAN_SCOPE) private readonly scope: McpScanScope,
    @Inject(MCP_FEATURES) private readonly features: readonly McpFeature[],
  ) {}

  /**
   * The one provider walk: shows every method to the packs that visit
   * ({@link McpFeature.visit}), then lets every pack settle.
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
      // A provider of McpModule.forFeature() is shown with its toolset (its prefix, its label).
      const toolset = toolsetOf(wrapper as never);
      this.checkScopePlacement(prototype, methodNames, className);
      for (const methodName of methodNames) {
        const shown = (prototype as Record<string, unknown>)[methodName];
        const found = { wrapper, prototype, methodName, method: shown, site: `${className}#${methodName}`, instance };
        for (const visitor of visitors) visitor.visit!(toolset ? { ...found, toolset } : found);
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

  /**
   * @RequireScopes is enforced on MCP capabilities only (the transports ask McpDispatcher.requiredScopes);
   * anywhere else it would protect nothing while looking as if it did, so the bootstrap refuses it.
   */
  private checkScopePlacement(prototype: object, methodNames: string[], className: string): void {
    let capabilities = 0;
    for (const methodName of methodNames) {
      const method = (prototype as Record<string, unknown>)[methodName];
      if (
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
}

function classNameOf(wrapper: InstanceWrapper, prototype: object): string {
  const ctorName = (prototype as { constructor?: { name?: string } }).constructor?.name;
  return ctorName && ctorName !== 'Object' ? ctorName : String(wrapper.name ?? 'provider');
}
