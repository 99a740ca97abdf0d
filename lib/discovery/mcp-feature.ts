import type { Provider, Type } from '@nestjs/common';
import type { InstanceWrapper } from '@nestjs/core/injector/instance-wrapper.js';
import type { McpInvoker } from '../execution/mcp-handler.factory.js';
import type { McpAccess, ToolRuntime } from '../protocol/catalog.js';
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
}

/**
 * One method of one provider instance in scope, as the walk meets it, with what binds it to the
 * Nest pipeline: a pack registers a capability that runs on this instance from it.
 */
export interface McpInstanceMethod extends McpProviderMethod {
  /** The instance the method runs on; undefined for a request-scoped provider (one per call). */
  instance: object | undefined;
  /** The name prefix of the provider's `McpModule.forFeature()` toolset; '' outside one. */
  prefix: string;
  /** The module's packs, for what one pack amends in another's capabilities (MCP Apps in tools). */
  packs: readonly McpFeature[];
  /** The method through the Nest pipeline (a singleton wrapped once, else an instance per call). */
  invoker(): McpInvoker;
  /** An invoker under the method's policies (rate limits...), counted by `key` across instances. */
  gated(key: string, label: string, invoke: McpInvoker): McpInvoker;
  /** The scopes of the method and its class and a check of its guards, for the capability `name`. */
  access(name: string): McpAccess;
  /** Refuses a parameter decorator the call cannot fill; `what` names the kind in the message. */
  checkParams(what: string): void;
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
 *    provider and controller in scope (each class once); collect what the pack's decorator marks.
 *    Synchronous: do the work in `settle`. `visitInstance(method)` is its per-instance form, for
 *    capabilities that run on one instance and keep the walk's order (tools).
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
  install?(host: McpFeatureHost): void;
  visit?(method: McpProviderMethod): void;
  /**
   * During the walk, each method of each provider instance in scope, in walk order (a class two
   * `forFeature()` toolsets provide is met twice, once with each prefix).
   */
  visitInstance?(method: McpInstanceMethod): void;
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
}

/** The options slice the tools, resources, prompts and completion packs share. @internal */
export const MCP_FEATURE_OPTIONS = Symbol.for('nestjs-model-context:McpFeatureOptions');

/** The DI token of the module's packs, in `MCP_FEATURE_PACKS` order. @internal */
export const MCP_FEATURES = Symbol.for('nestjs-model-context:McpFeatures');
