import type { Provider } from '@nestjs/common';
import { MCP_FEATURES, type McpFeature, type McpFeaturePack } from './discovery/mcp-feature.js';
import { McpToolsFeature } from './tools/tools-feature.js';
import { McpTasksFeature } from './tasks/mcp-tasks.js';
import { McpResourcesFeature } from './resources/resources.feature.js';
import { McpPromptsFeature } from './prompts/prompts.feature.js';
import { McpCompletionFeature } from './completion/completion.feature.js';
import { McpSkillsLoader } from './skills/mcp-skills.loader.js';
import { McpAppsLoader } from './apps/mcp-apps.loader.js';
import { McpExposer } from './expose/mcp-exposer.js';

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

/** The packs with the providers each brings, and the list the module, the walk and the dispatcher iterate. @internal */
export const featureProviders: Provider[] = [
  ...MCP_FEATURE_PACKS.flatMap((pack: McpFeaturePack) => pack.providers ?? []),
  ...MCP_FEATURE_PACKS,
  { provide: MCP_FEATURES, useFactory: (...packs: McpFeature[]) => packs, inject: [...MCP_FEATURE_PACKS] },
];

/** The Redis channels the packs' stores hear, subscribed when the module's Redis connects. @internal */
export const featureRedisChannels: readonly string[] = MCP_FEATURE_PACKS.flatMap(
  (pack: McpFeaturePack) => pack.redisChannels ?? [],
);
