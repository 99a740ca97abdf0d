import { Inject, Injectable, type Provider } from '@nestjs/common';
import { McpRegistry } from './discovery/mcp.registry.js';
import { MCP_FEATURE_OPTIONS, MCP_FEATURES, type McpFeature, type McpFeaturePack } from './discovery/mcp-feature.js';
import { McpSkillsLoader } from './skills/mcp-skills.loader.js';
import { McpAppsLoader } from './apps/mcp-apps.loader.js';
import { McpExposer } from './expose/mcp-exposer.js';
import { McpTasksFeature } from './tasks/mcp-tasks.js';
import type { McpFeatureHost, McpFeatureOptions } from './protocol/feature-host.js';
import { McpToolsFeature } from './tools/tools-feature.js';
import { installResources } from './protocol/resources.js';
import { installPrompts } from './protocol/prompts.js';
import { installCompletion } from './protocol/completion.js';

export { MCP_FEATURE_OPTIONS } from './discovery/mcp-feature.js';

/** A kind served from the registry with the shared feature options. */
abstract class McpCatalogKind implements McpFeature {
  abstract readonly kind: string;
  constructor(
    protected readonly registry: McpRegistry,
    @Inject(MCP_FEATURE_OPTIONS) protected readonly options: McpFeatureOptions,
  ) {}
}

/** Resources, templates, repositories and subscriptions. */
@Injectable()
export class McpResourcesFeature extends McpCatalogKind {
  readonly kind = 'resources';
  install(host: McpFeatureHost): void {
    installResources(host, this.registry, this.options);
  }
}

/** Prompts and prompt repositories. */
@Injectable()
export class McpPromptsFeature extends McpCatalogKind {
  readonly kind = 'prompts';
  install(host: McpFeatureHost): void {
    installPrompts(host, this.registry, this.options);
  }
}

/** `completion/complete` for prompt arguments and template variables. */
@Injectable()
export class McpCompletionFeature extends McpCatalogKind {
  readonly kind = 'completion';
  install(host: McpFeatureHost): void {
    installCompletion(host, this.registry, this.options);
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
  ...MCP_FEATURE_PACKS.flatMap((pack: McpFeaturePack) => pack.providers ?? []),
  ...MCP_FEATURE_PACKS,
  { provide: MCP_FEATURES, useFactory: (...packs: McpFeature[]) => packs, inject: [...MCP_FEATURE_PACKS] },
];
