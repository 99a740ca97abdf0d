/**
 * `nestjs-model-context`: what an app author writes against. The module and its main option
 * types, the decorators, the call's context, the runtime registry, errors and the content
 * helpers. Everything else has an entry of its own, by intent (README, "Entry points"):
 * `/options`, `/sessions`, `/transports`, `/stores`, `/redis`, `/telemetry`, `/catalog`,
 * `/protocol` and `/testing`. Internal helpers are exported from none of them.
 */
// The module and its main option types.
export { McpModule } from './mcp.module.js';
export { type McpModuleAsyncOptions, type McpModuleForRootOptions } from './mcp.module-definition.js';
export type { McpModuleOptions, McpOptionsFactory } from './interfaces/mcp-module-options.interface.js';

// Decorators.
export { Tool } from './tools/tool.decorator.js';
export { McpToolSets, ToolSets } from './tool-sets/index.js';
export { Resource, ResourceTemplate } from './resources/resource.decorator.js';
export { Prompt } from './prompts/prompt.decorator.js';
export { Complete } from './completion/complete.decorator.js';
export { Args, Ctx, McpRequest } from './decorators/params.decorators.js';
export { McpHeader } from './decorators/mcp-header.decorator.js';
export { SchemaProperty } from './schema/schema-property.decorator.js';
export { RequireScopes } from './auth/require-scopes.decorator.js';
export { ExposeRoute } from './expose/expose.interfaces.js';
export { Skill } from './skills/skill.decorator.js';
export { AppView, McpApp } from './apps/mcp-app.decorator.js';
export {
  ResourceRepository,
  PromptRepository,
  type McpResourceRepository,
  type McpPromptRepository,
  type McpResourcePage,
  type McpPromptPage,
} from './resources/repository.decorator.js';
export type { McpRepositoryPageRequest } from './protocol/repositories.js';
export { McpConcurrency, McpRateLimit, McpTimeout } from './execution/mcp-policies.js';

// The call: its context, the Nest execution context, the caller.
export { McpContext } from './protocol/context.js';
export type { McpCall } from './protocol/mcp-call.js';
export { McpExecutionContext, MCP_CONTEXT_TYPE, type McpContextType } from './execution/mcp-execution-context.js';
export { principalFromUser, type McpPrincipal } from './auth/mcp-auth.interface.js';
export { principalFromClaims } from './oauth/token.verifier.js';

// Runtime registration and toggles.
export { McpRegistry } from './discovery/mcp.registry.js';
export type {
  CompleteFunction,
  CompletionContext,
  DynamicCapabilityOptions,
  DynamicPromptDefinition,
  DynamicResourceDefinition,
  DynamicResourceTemplateDefinition,
  DynamicToolDefinition,
  McpRegistryChange,
} from './discovery/dynamic-definitions.js';
export type { McpCapabilityUpdate, McpToggleOptions } from './discovery/capability-toggles.js';

// Errors.
export { McpError, ToolError } from './protocol/errors.js';
export { ErrorCode } from './protocol/json-rpc.js';
export { ResourceNotFoundError } from './protocol/resource-contents.js';
export { SchemaGenerationError } from './schema/schema-generation.error.js';

// Content and results.
export { Content } from './protocol/content.js';
export { ResourceContent, type ReadResourceResult } from './protocol/resource-contents.js';
export { PromptMessage, type GetPromptResult } from './protocol/prompt-messages.js';
export { Emit, type McpEmission } from './protocol/emission.js';
export { appResult } from './apps/apps.js';
export type { CallToolResult, ContentBlock } from './protocol/mcp-types.js';
export {
  resolveSafePath,
  UnsafePathError,
  MAX_SAFE_PATH_LENGTH,
  type UnsafePathReason,
} from './protocol/safe-path.util.js';
export { withJsonSchema, type InferArgs } from './schema/standard-schema.js';
