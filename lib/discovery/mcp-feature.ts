import type { Provider, Type } from '@nestjs/common';
import { MCP_RESOLVED_OPTIONS } from '../common/mcp.constants.js';
import type { InstanceWrapper } from '@nestjs/core/injector/instance-wrapper.js';
import type { ToolRuntime } from '../protocol/catalog.js';
import type { McpFeatureHost } from '../protocol/feature-host.js';
import type { ToolDefinition } from './tool-types.js';

/** One provider method met by the module's single provider walk (McpDiscovery). */
export interface McpProviderMethod {
  wrapper: InstanceWrapper;
  prototype: object;
  methodName: string;
  method: unknown;
  /** `Class#method`, for bootstrap errors. */
  site: string;
  /** The instance the method runs on at bootstrap; undefined for a request-scoped provider. */
  instance?: object;
  /** The `McpModule.forFeature()` toolset the provider belongs to: its name prefix and label. */
  toolset?: { prefix: string; label: string };
}

/**
 * The seam every kind of capability plugs into (tools, resources, prompts, completion, tasks,
 * skills, MCP Apps, exposed routes; tool sets, OAuth extras and a client/gateway land the same
 * way). A kind is one folder holding its whole slice (decorator, metadata, runtime, protocol
 * methods, options slice, Nest glue) and one Nest provider implementing this interface, listed
 * once in `MCP_FEATURE_PACKS` (mcp-features.ts). The module then drives every pack through the same
 * four steps, in this order:
 *
 * 1. `install(host)`: as the dispatcher is built, the pack attaches its methods to the method
 *    table (`host.define(McpMethods.x, { handler, find, scopes, headers })`) and declares its
 *    capabilities or extensions. Keep the host for later steps: a pack never injects the dispatcher.
 * 2. `visit(method)`: during the one provider walk at module init, for every method of every
 *    provider and controller in scope (each instance once, so a class in two toolsets is seen
 *    twice); collect what the pack's decorator marks.
 *    Synchronous: do the work in `settle`.
 * 3. `settle()`: once the walk is over (all packs settle concurrently): build runtimes, register
 *    them in the McpRegistry, load files.
 * 4. `ready()`: at application bootstrap, when every pack settled: cross-checks (a linked view
 *    exists) and what depends on everything being registered (advertise tasks).
 *
 * A pack injects only what it uses: the McpRegistry, McpHandlerFactory (the Nest pipeline) and its
 * own options slice, never the whole module options.
 */
export interface McpFeature {
  /** The kind, as logs name it: `tools`, `skills`... */
  readonly kind: string;
  /**
   * Metadata keys of the pack's method decorators that declare a capability: `@RequireScopes()`
   * may sit on such a method (elsewhere the walk refuses it, as scopes there would guard nothing).
   */
  readonly capabilityKeys?: readonly string[];
  /**
   * The methods a class decorator of the pack makes capabilities (a repository's `list`, `read`):
   * `@RequireScopes()` may sit on them too.
   */
  classCapabilities?(owner: Function): readonly string[];
  install?(host: McpFeatureHost): void;
  visit?(method: McpProviderMethod): void;
  settle?(): void | Promise<void>;
  ready?(): void | Promise<void>;
  /** Amends a `@Tool()` the walk found, before it is built (MCP Apps adds `_meta.ui`). */
  amendTool?<T extends Pick<ToolDefinition, '_meta'>>(definition: T, method: unknown): T;
  /** Amends the built runtime of a `@Tool()` method (MCP Apps hides app-only tools). */
  amendToolRuntime?(runtime: ToolRuntime, method: unknown): ToolRuntime;
}

/**
 * A pack's class, as `MCP_FEATURE_PACKS` lists it: the providers it brings to the module (its
 * runner, its options slice, the ports it fills) are a static `providers` list on it.
 */
export interface McpFeaturePack extends Type<McpFeature> {
  readonly providers?: readonly Provider[];
  /** The Redis pub/sub channels (after the key prefix) its stores attach to, subscribed at connect. */
  readonly redisChannels?: readonly string[];
}

/** The DI token of the module's packs, in `MCP_FEATURE_PACKS` order. @internal */
export const MCP_FEATURES = Symbol.for('nestjs-model-context:McpFeatures');

/**
 * The provider of a pack's options slice: the pack cuts its own key out of the module's resolved
 * options (null when absent), so adding a pack's options touches no module file but the options
 * interface that composes the slices. The pack's classes inject the slice's token, never the whole.
 */
export function packSlice<K extends string>(provide: symbol, key: K): Provider {
  return {
    provide,
    useFactory: (options: Partial<Record<K, unknown>>) => options[key] ?? null,
    inject: [MCP_RESOLVED_OPTIONS],
  };
}
