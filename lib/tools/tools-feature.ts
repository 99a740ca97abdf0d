import { Inject, Injectable, type Provider, type Type } from '@nestjs/common';
import { ModuleRef } from '@nestjs/core';
import * as messages from '../common/mcp.messages.js';
import { MCP_FEATURE_OPTIONS } from '../common/mcp.constants.js';
import { McpHandlerFactory } from '../execution/mcp-handler.factory.js';
import { toolCall } from '../discovery/capability-calls.js';
import { McpCapabilityPack, PRIMITIVES } from '../discovery/capability-pack.js';
import { toSnakeCase } from '../discovery/mcp-discovery.js';
import { MCP_FEATURES, packSlice, type McpFeature, type McpProviderMethod } from '../discovery/mcp-feature.js';
import { McpMetadataAccessor } from '../discovery/mcp-metadata.accessor.js';
import { MCP_REGISTRY_SETTINGS, McpRegistry, type McpRegistrySettings } from '../discovery/mcp.registry.js';
import { MCP_TOOL_BUILDER, type McpToolBuilder, type ToolDefinition } from '../discovery/tool-types.js';
import type { McpFeatureHost, McpFeatureOptions } from '../protocol/feature-host.js';
import { MCP_RUN_MODES, McpRunModes } from '../protocol/tool-calls.js';
import { withClassToolSets } from '../decorators/tool-sets.decorator.js';
import { installToolSets } from '../tool-sets/tool-sets.install.js';
import type { McpToolSetsOptions } from '../tool-sets/tool-sets.options.js';
import { MCP_TOOL_METADATA, type ToolMetadata } from './tool.decorator.js';
import { ToolRuntimeFactory } from './tool-runtime.factory.js';
import { installTools } from './tools.js';

/** The tools pack's `toolSets` slice (null without it). @internal */
export const MCP_TOOL_SETS_OPTIONS = Symbol.for('nestjs-model-context:McpToolSetsOptions');

/** What the tools pack adds to the module's providers: its `toolSets` slice, the registry's tool builder, the run modes. */
const toolProviders: Provider[] = [
  packSlice(MCP_TOOL_SETS_OPTIONS, 'toolSets'),
  {
    provide: MCP_TOOL_BUILDER,
    useFactory: (settings: McpRegistrySettings | null) => new ToolRuntimeFactory(settings?.dtos),
    inject: [{ token: MCP_REGISTRY_SETTINGS, optional: true }],
  },
  { provide: MCP_RUN_MODES, useFactory: () => new McpRunModes() },
];

/**
 * The tools pack: `tools/list` and `tools/call`, the `@Tool()` methods the provider walk meets,
 * and the runtime builder the registry uses for tools added at runtime. Tool sets ride on it.
 */
@Injectable()
export class McpToolsFeature extends McpCapabilityPack {
  static readonly providers = toolProviders;
  readonly kind = 'tools';
  readonly capabilityKeys = [MCP_TOOL_METADATA];
  private packs?: readonly McpFeature[];

  constructor(
    registry: McpRegistry,
    handlers: McpHandlerFactory,
    accessor: McpMetadataAccessor,
    @Inject(MCP_FEATURE_OPTIONS) options: McpFeatureOptions,
    @Inject(MCP_RUN_MODES) private readonly modes: McpRunModes,
    @Inject(MCP_TOOL_SETS_OPTIONS) private readonly toolSets: McpToolSetsOptions | null,
    @Inject(MCP_TOOL_BUILDER) private readonly factory: McpToolBuilder,
    private readonly moduleRef: ModuleRef,
  ) {
    super(registry, handlers, accessor, options);
  }

  protected marks({ method }: McpProviderMethod): boolean {
    return Reflect.hasMetadata(MCP_TOOL_METADATA, method as Function);
  }

  install(host: McpFeatureHost): void {
    // Tool sets stand between callers and the catalog: installed first, every tool checked as it registers.
    const gate = this.toolSets ? installToolSets(host, this.registry, this.toolSets, this.options) : undefined;
    installTools(host, this.registry, this.options, this.modes, gate);
  }

  /**
   * Registers a `@Tool()` method of one instance (the walk shows each), named with its toolset's
   * prefix, in walk order.
   */
  override visit(found: McpProviderMethod): void {
    const { method, prototype, methodName, toolset } = found;
    const metadata =
      typeof method === 'function'
        ? (Reflect.getMetadata(MCP_TOOL_METADATA, method) as ToolMetadata | undefined)
        : undefined;
    if (!metadata) return;
    const site = this.siteOf(found);
    this.checkParams(found, site, 'tool');
    // Other packs amend tools (MCP Apps adds `_meta.ui`, hides app-only tools).
    const packs = (this.packs ??= this.moduleRef.get<readonly McpFeature[]>(MCP_FEATURES));
    const unprefixed = withClassToolSets(this.definition(metadata, prototype, methodName, site), prototype.constructor);
    const declared = packs.reduce((amended, pack) => pack.amendTool?.(amended, method) ?? amended, {
      ...unprefixed,
      name: (toolset?.prefix ?? '') + unprefixed.name,
    });
    const definition = { ...declared, ...this.access(found, declared.name) };
    const invoker = this.gated(`tool:${definition.name}`, `tool "${definition.name}"`, found, this.invokerOf(found));
    const runtime = this.factory.build(definition, toolCall(definition.name, invoker), site);
    this.registry.register(
      packs.reduce((built, pack) => pack.amendToolRuntime?.(built, method) ?? built, runtime),
      site,
    );
  }

  /** The tool's definition: its declared options, its name, and its input (the `@Args()` DTO by default). */
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
    const paramtypes: unknown[] = Reflect.getMetadata('design:paramtypes', prototype, methodName) ?? [];
    const type = paramtypes[whole[0]!];
    if (typeof type !== 'function' || PRIMITIVES.has(type)) throw new Error(messages.AMBIGUOUS_INPUT(site));
    return { ...rest, name, input: type as Type<unknown> };
  }
}
