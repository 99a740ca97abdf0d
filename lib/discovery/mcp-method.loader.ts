import { Inject, Injectable } from '@nestjs/common';
import { MCP_RESOLVED_OPTIONS } from '../common/mcp.constants.js';
import type { ResolvedMcpOptions } from '../interfaces/mcp-module-options.interface.js';
import { McpHandlerFactory } from '../execution/mcp-handler.factory.js';
import { requiredScopesOf } from '../auth/require-scopes.decorator.js';
import type { McpAccess } from '../protocol/catalog.js';
import type { McpFeatureHost } from '../protocol/feature-host.js';
import { capabilityAccess } from './capability-calls.js';
import { McpRegistry } from './mcp.registry.js';
import type { McpFeature, McpProviderMethod } from './mcp-feature.js';

/**
 * What the extension packs (skills, MCP Apps) share: the module's dependencies, the methods the
 * provider walk handed them, and the access (scopes, guards) of a decorated method.
 */
@Injectable()
export abstract class McpMethodLoader implements McpFeature {
  abstract readonly kind: string;
  /** The dispatcher, as the pack was installed into it. */
  protected host?: McpFeatureHost;
  /** The methods {@link visit} kept. */
  protected readonly found: McpProviderMethod[] = [];
  private readonly seen = new WeakMap<object, Set<string>>();

  constructor(
    protected readonly handlers: McpHandlerFactory,
    protected readonly registry: McpRegistry,
    @Inject(MCP_RESOLVED_OPTIONS) protected readonly options: ResolvedMcpOptions,
  ) {}

  install(host: McpFeatureHost): void {
    this.host = host;
  }

  visit(method: McpProviderMethod): void {
    if (typeof method.method !== 'function' || !this.marks(method.method)) return;
    // The walk shows each instance; these packs serve a class's method once, whatever provides it.
    const names = this.seen.get(method.prototype) ?? new Set<string>();
    if (names.has(method.methodName)) return;
    this.seen.set(method.prototype, names.add(method.methodName));
    this.found.push(method);
  }

  /** Whether the pack's decorators mark this method. */
  protected abstract marks(method: Function): boolean;

  /** The singleton instance a method runs on at bootstrap; request-scoped providers are refused, naming `what`. */
  protected instanceOf({ wrapper, site }: McpProviderMethod, what: string): object {
    if (!wrapper.isDependencyTreeStatic() || !wrapper.instance) {
      throw new Error(`${site}: ${what} cannot live on a request-scoped provider. Move it to a singleton provider.`);
    }
    return wrapper.instance as object;
  }

  /** The scopes of a method and its class, and a check of its guards. */
  protected accessOf(instance: object, { prototype, methodName, method }: McpProviderMethod, name: string): McpAccess {
    return capabilityAccess(
      name,
      this.handlers.createGuardCheck(instance, methodName),
      requiredScopesOf(prototype.constructor, method as Function),
    );
  }
}
