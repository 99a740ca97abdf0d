import { Inject, Injectable, type Provider } from '@nestjs/common';
import { McpRegistry } from './discovery/mcp.registry.js';
import { MCP_FEATURES, type McpFeature } from './discovery/mcp-feature.js';
import { McpSkillsLoader } from './skills/mcp-skills.loader.js';
import { McpAppsLoader } from './apps/mcp-apps.loader.js';
import { McpExposer } from './expose/mcp-exposer.js';
import { MCP_TASK_RUNNER, McpTasksFeature } from './tasks/mcp-tasks.js';
import type { McpFeatureHost, McpFeatureOptions } from './protocol/feature-host.js';
import type { McpTaskRunner } from './tasks/tasks.js';
import { installTools } from './protocol/tools.js';
import { McpResourcesFeature } from './resources/resources.feature.js';
import { McpPromptsFeature } from './prompts/prompts.feature.js';
import { McpCompletionFeature } from './completion/completion.feature.js';
import { installToolSets } from './tool-sets/tool-sets.install.js';
import type { McpToolSetsOptions } from './tool-sets/tool-sets.options.js';
import { MCP_FEATURE_OPTIONS, MCP_RESOLVED_OPTIONS } from './common/mcp.constants.js';
import type { ResolvedMcpOptions } from './interfaces/mcp-module-options.interface.js';

/** The tools pack's `toolSets` slice (null without it). @internal */
export const MCP_TOOL_SETS_OPTIONS = Symbol.for('nestjs-model-context:McpToolSetsOptions');

/** A kind served from the registry with the shared feature options. */
abstract class McpCatalogKind implements McpFeature {
  abstract readonly kind: string;
  constructor(
    protected readonly registry: McpRegistry,
    @Inject(MCP_FEATURE_OPTIONS) protected readonly options: McpFeatureOptions,
  ) {}
}

/** `tools/list` and `tools/call`; decorated tools come from the provider walk (McpDiscovery). */
@Injectable()
export class McpToolsFeature extends McpCatalogKind {
  readonly kind = 'tools';
  constructor(
    registry: McpRegistry,
    @Inject(MCP_FEATURE_OPTIONS) options: McpFeatureOptions,
    @Inject(MCP_TASK_RUNNER) private readonly tasks: McpTaskRunner,
    @Inject(MCP_TOOL_SETS_OPTIONS) private readonly toolSets: McpToolSetsOptions | null,
  ) {
    super(registry, options);
  }

  install(host: McpFeatureHost): void {
    // Tool sets stand between callers and the catalog: installed first, every tool checked as it registers.
    const gate = this.toolSets ? installToolSets(host, this.registry, this.toolSets, this.options) : undefined;
    installTools(host, this.registry, this.options, this.tasks, gate);
  }
}

/**
 * Every capability pack of the module, in installation order: adding a kind is its folder and
 * one line here.
 */
export const MCP_FEATURE_PACKS = [
  McpToolsFeature,
  McpTasksFeature,
  McpResourcesFeature,
  McpPromptsFeature,
  McpCompletionFeature,
  McpSkillsLoader,
  McpAppsLoader,
  McpExposer,
] as const;

/** The packs, and the list the module, the provider walk and the dispatcher iterate. @internal */
export const featureProviders: Provider[] = [
  {
    provide: MCP_TOOL_SETS_OPTIONS,
    useFactory: (options: ResolvedMcpOptions) => options.toolSets ?? null,
    inject: [MCP_RESOLVED_OPTIONS],
  },
  ...MCP_FEATURE_PACKS,
  { provide: MCP_FEATURES, useFactory: (...packs: McpFeature[]) => packs, inject: [...MCP_FEATURE_PACKS] },
];
