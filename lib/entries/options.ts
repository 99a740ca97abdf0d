/**
 * `nestjs-model-context/options`: every option type by name, for apps that build their options in
 * pieces or wrap a decorator: the slices of `McpModule.forRoot()` and each decorator's options.
 * The root entry keeps the module's main option types (`McpModuleOptions`, `McpModuleForRootOptions`,
 * `McpModuleAsyncOptions`, `McpOptionsFactory`).
 */
export { MCP_MODULE_OPTIONS, type McpModuleExtras, type McpEndpointVersion } from '../mcp.module-definition.js';
export type {
  McpSessionOptions,
  McpLimitOptions,
  McpShutdownOptions,
} from '../interfaces/mcp-module-options.interface.js';
export type { McpLegacySseOptions } from '../transport/legacy-sse.transport.js';
export type { McpAuthOptions } from '../auth/mcp-auth.interface.js';
export type {
  McpClaimsMapper,
  McpDpopOptions,
  McpIntrospectionOptions,
  McpJsonWebKeySet,
  McpJwtVerificationOptions,
} from '../oauth/oauth-options.interface.js';
export type { McpToolsetOptions } from '../discovery/mcp-toolset.js';
export type { ListCacheHint, ListsCacheOption } from '../protocol/catalog.js';
export type { McpSkillsOptions } from '../skills/mcp-skills-options.interface.js';
export type { McpExplorerOptions } from '../explorer/explorer.controller.js';
export type { McpAdminRoutesOptions } from '../admin/mcp-admin.controller.js';
export type { McpEventsOptions } from '../telemetry/events.js';
export type { McpTelemetryOptions } from '../telemetry/options.js';
export type {
  ExposeControllersOptions,
  ExposedMessage,
  ExposedToolOptions,
  McpExposeOptions,
  RouteSelector,
} from '../expose/expose.interfaces.js';
// Decorator options.
export type { ToolOptions } from '../tools/tool.decorator.js';
export type { ResourceOptions, ResourceTemplateOptions } from '../discovery/resource-runtime.factory.js';
export type { PromptOptions } from '../discovery/prompt-runtime.factory.js';
export type { CompleteOptions } from '../completion/complete.decorator.js';
export type { SchemaPropertyOptions } from '../schema/schema-property.decorator.js';
export type { InlineSkill, SkillOptions, SkillSource } from '../skills/skill.decorator.js';
export type { AppViewOptions, AppViewSource, McpAppOptions } from '../apps/mcp-app.decorator.js';
export type { ResourceRepositoryOptions, PromptRepositoryOptions } from '../resources/repository.decorator.js';
export type { McpRateLimitOptions } from '../execution/mcp-policies.js';
export type {
  McpToolSetCaller,
  McpToolSetDefinition,
  McpToolListMode,
  McpToolSetsOptions,
} from '../tool-sets/index.js';
