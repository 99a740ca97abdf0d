import { Inject, Injectable, type Type } from '@nestjs/common';
import * as messages from '../common/mcp.messages.js';
import { McpHandlerFactory, type McpInvoker } from '../execution/mcp-handler.factory.js';
import { requiredScopesOf } from '../auth/require-scopes.decorator.js';
import type { McpAccess } from '../protocol/catalog.js';
import type { McpFeatureHost, McpFeatureOptions } from '../protocol/feature-host.js';
import { capabilityAccess } from './capability-calls.js';
import { McpMetadataAccessor } from './mcp-metadata.accessor.js';
import { McpRegistry } from './mcp.registry.js';
import { MCP_FEATURE_OPTIONS } from '../common/mcp.constants.js';
import type { McpFeature, McpProviderMethod } from './mcp-feature.js';

/** Parameter types that are no DTO: an `@Args()` of one of them names no input schema. */
export const PRIMITIVES = new Set<unknown>([Object, String, Number, Boolean, Array, Function, Promise, Symbol, BigInt]);

/**
 * What the catalog packs (resources, prompts, completion) share: the methods the provider walk
 * showed them, and how a decorated method becomes a call through the Nest pipeline. Unlike the
 * extension packs (McpMethodLoader), their methods may live on request-scoped providers, and a
 * class in two toolsets serves each toolset.
 */
@Injectable()
export abstract class McpCapabilityPack implements McpFeature {
  abstract readonly kind: string;
  /** The methods {@link visit} kept, in walk order. */
  protected readonly found: McpProviderMethod[] = [];

  constructor(
    protected readonly registry: McpRegistry,
    protected readonly handlers: McpHandlerFactory,
    protected readonly accessor: McpMetadataAccessor,
    @Inject(MCP_FEATURE_OPTIONS) protected readonly options: McpFeatureOptions,
  ) {}

  abstract install(host: McpFeatureHost): void;

  visit(method: McpProviderMethod): void {
    if (typeof method.method === 'function' && this.marks(method)) this.found.push(method);
  }

  /** Whether the pack's decorators mark this method. */
  protected abstract marks(method: McpProviderMethod): boolean;

  /** `Class#method`, naming the toolset of a `McpModule.forFeature()` provider. */
  protected siteOf({ site, toolset }: McpProviderMethod): string {
    return toolset ? `${site} in ${toolset.label}` : site;
  }

  /** Refuses a parameter decorated by a decorator the MCP call cannot fill (it would silently get undefined). */
  protected checkParams({ prototype, methodName }: McpProviderMethod, site: string, what: string): void {
    const [foreign] = this.accessor.getForeignParams(prototype.constructor, methodName);
    if (foreign) throw new Error(messages.FOREIGN_PARAM_DECORATOR(site, what, foreign.index, foreign.type));
  }

  /** Singletons are wrapped once; request-scoped providers resolve an instance per call. */
  protected invokerOf({ wrapper, instance, methodName }: McpProviderMethod): McpInvoker {
    return instance ? this.handlers.create(instance, methodName) : this.handlers.createScoped(wrapper, methodName);
  }

  /**
   * Policies read their decorators from the class and method, and count by the capability's key:
   * a request-scoped provider's fresh instance per call shares one count.
   */
  protected gated(
    key: string,
    label: string,
    { prototype, method }: McpProviderMethod,
    invoke: McpInvoker,
  ): McpInvoker {
    return this.handlers.gated({ key, label, owner: prototype.constructor, method: method as Function }, invoke);
  }

  /**
   * What authorization needs of one capability method: the scopes of its class and method, and
   * a check of its guards. Guards need no real instance: a request-scoped provider is probed
   * through its class.
   */
  protected access({ wrapper, instance, prototype, methodName, method }: McpProviderMethod, name: string): McpAccess {
    const probeHost = instance ?? (wrapper.instance as object | undefined) ?? Object.create(prototype);
    const scopes = requiredScopesOf(prototype.constructor, method as Function);
    return capabilityAccess(name, this.handlers.createGuardCheck(probeHost, methodName), scopes);
  }

  /**
   * The DTO of a whole-object `@Args()` parameter, when its type is a class. Without one a
   * template gets its variables as strings; a prompt takes no arguments.
   */
  protected argsDto(
    { prototype, methodName }: McpProviderMethod,
    site: string,
    what: string,
    strict: boolean,
  ): Type<unknown> | undefined {
    const whole = this.accessor.getArgsParams(prototype.constructor, methodName).filter((p) => p.data === undefined);
    if (whole.length > 1) throw new Error(messages.MULTIPLE_ARGS_PARAMS_OF(site, what));
    if (whole.length === 0) return undefined;
    const paramtypes: unknown[] = Reflect.getMetadata('design:paramtypes', prototype, methodName) ?? [];
    const type = paramtypes[whole[0]!.index];
    if (typeof type === 'function' && !PRIMITIVES.has(type)) return type as Type<unknown>;
    if (strict) throw new Error(messages.AMBIGUOUS_ARGS(site, what));
    return undefined;
  }
}
