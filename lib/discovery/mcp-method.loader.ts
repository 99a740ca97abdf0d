import { Inject, Injectable, type Type } from '@nestjs/common';
import { DiscoveryService, MetadataScanner } from '@nestjs/core';
import type { InstanceWrapper } from '@nestjs/core/injector/instance-wrapper.js';
import { MCP_RESOLVED_OPTIONS, MCP_DISPATCHER } from '../mcp.constants.js';
import type { ResolvedMcpOptions } from '../interfaces/mcp-module-options.interface.js';
import { McpHandlerFactory } from '../execution/mcp-handler.factory.js';
import { requiredScopesOf } from '../auth/require-scopes.decorator.js';
import type { McpAccess } from '../protocol/catalog.js';
import type { McpDispatcher } from '../protocol/dispatcher.js';
import { capabilityAccess } from './capability-calls.js';
import { McpRegistry } from './mcp.registry.js';

/** One provider method met by {@link McpMethodLoader.methods}. */
export interface LoadedMethod {
  wrapper: InstanceWrapper;
  prototype: object;
  methodName: string;
  method: unknown;
  /** `Class#method`, for bootstrap errors. */
  site: string;
}

/**
 * What the extension loaders (skills, MCP Apps) share: the module's dependencies, one walk over
 * the providers in scope (`include`), and the access (scopes, guards) of a decorated method.
 */
@Injectable()
export abstract class McpMethodLoader {
  constructor(
    protected readonly discovery: DiscoveryService,
    protected readonly scanner: MetadataScanner,
    protected readonly handlers: McpHandlerFactory,
    protected readonly registry: McpRegistry,
    @Inject(MCP_DISPATCHER) protected readonly server: McpDispatcher,
    @Inject(MCP_RESOLVED_OPTIONS) protected readonly options: ResolvedMcpOptions,
  ) {}

  /** Every method of every provider and controller in scope, each class once. */
  protected *methods(): Generator<LoadedMethod> {
    const scope = this.options.include ? { include: this.options.include as Function[] } : {};
    const seen = new Set<object>();
    for (const wrapper of [...this.discovery.getProviders(scope), ...this.discovery.getControllers(scope)]) {
      if (wrapper.isAlias) continue;
      const prototype = (wrapper.instance ? Object.getPrototypeOf(wrapper.instance) : (wrapper.metatype as Type<unknown> | null)?.prototype) as object | undefined;
      if (!prototype || seen.has(prototype)) continue;
      seen.add(prototype);
      for (const methodName of this.scanner.getAllMethodNames(prototype)) {
        yield { wrapper, prototype, methodName, method: (prototype as Record<string, unknown>)[methodName], site: `${prototype.constructor.name}#${methodName}` };
      }
    }
  }

  /** The singleton instance a method runs on at bootstrap; request-scoped providers are refused, naming `what`. */
  protected instanceOf({ wrapper, site }: LoadedMethod, what: string): object {
    if (!wrapper.isDependencyTreeStatic() || !wrapper.instance) {
      throw new Error(`${site}: ${what} cannot live on a request-scoped provider. Move it to a singleton provider.`);
    }
    return wrapper.instance as object;
  }

  /** The scopes of a method and its class, and a check of its guards. */
  protected accessOf(instance: object, { prototype, methodName, method }: LoadedMethod, name: string): McpAccess {
    return capabilityAccess(name, this.handlers.createGuardCheck(instance, methodName), requiredScopesOf(prototype.constructor, method as Function));
  }
}
