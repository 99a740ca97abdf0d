export { McpModule } from './mcp.module.js';
export {
  MCP_MODULE_OPTIONS,
  type McpModuleAsyncOptions,
  type McpModuleExtras,
  type McpEndpointVersion,
  type McpModuleForRootOptions,
} from './mcp.module-definition.js';
export type { McpLegacySseOptions } from './transport/legacy-sse.transport.js';
export type {
  McpModuleOptions,
  McpOptionsFactory,
  McpSessionOptions,
  McpLimitOptions,
} from './interfaces/mcp-module-options.interface.js';
export { Tool, type ToolOptions } from './decorators/tool.decorator.js';
export { McpToolSets, ToolSets, type McpToolSetCaller, type McpToolSetDefinition, type McpToolListMode, type McpToolSetsOptions } from './tool-sets/index.js';
export {
  ExposeRoute,
  type ExposeControllersOptions,
  type ExposedMessage,
  type ExposedToolOptions,
  type McpExposeOptions,
  type RouteSelector,
} from './expose/expose.interfaces.js';
export { Args, Ctx, McpRequest } from './decorators/params.decorators.js';
export { McpRegistry } from './discovery/mcp.registry.js';
export type {
  CompleteFunction,
  DynamicCapabilityOptions,
  DynamicPromptDefinition,
  DynamicResourceDefinition,
  DynamicResourceTemplateDefinition,
  DynamicToolDefinition,
  McpRegistryChange,
} from './discovery/dynamic-definitions.js';
export {
  Resource,
  ResourceTemplate,
  type ResourceOptions,
  type ResourceTemplateOptions,
} from './decorators/resource.decorator.js';
export { Prompt, type PromptOptions } from './decorators/prompt.decorator.js';
export { Complete, type CompleteOptions, type CompletionContext } from './decorators/complete.decorator.js';
export { ResourceNotFoundError } from './protocol/resources.js';
export {
  ResourceContent,
  type BlobResourceContents,
  type ReadResourceResult,
  type ResourceAnnotations,
  type ResourceContentInput,
  type ResourceContents,
  type TextResourceContents,
} from './protocol/resource-contents.js';
export { PromptMessage, type GetPromptResult } from './protocol/prompts.js';
export type { CompletionValues } from './protocol/completion.js';
export { resolveSafePath, UnsafePathError, MAX_SAFE_PATH_LENGTH, type UnsafePathReason } from './protocol/safe-path.util.js';
export { McpExecutionContext, MCP_CONTEXT_TYPE, type McpContextType } from './execution/mcp-execution-context.js';
export { McpConcurrency, McpRateLimit, McpTimeout, McpTimeoutInterceptor, type McpRateLimitOptions } from './execution/mcp-policies.js';
export { McpRedisThrottlerStorage, type McpThrottlerStorage, type McpThrottlerStorageRecord } from './redis/redis-throttler.storage.js';
export { RequireScopes } from './auth/require-scopes.decorator.js';
export { principalFromUser, type McpAuthOptions, type McpPrincipal } from './auth/mcp-auth.interface.js';
export { McpHttpExceptionFilter } from './transport/mcp-http-exception.filter.js';
export { InProcessNotificationBus, type McpChangeEvent, type McpNotificationBus } from './protocol/notification-bus.js';
export type { McpCall } from './execution/mcp-call.interface.js';
export { McpContext } from './protocol/context.js';
export { McpError, McpStoreUnavailableError, ToolError } from './protocol/errors.js';
export { ErrorCode } from './protocol/json-rpc.js';
export { Content } from './protocol/content.js';
export { Emit, type McpEmission } from './protocol/emission.js';
export type { ElicitOutcome, McpRoot, SamplingRequest, SamplingResult } from './protocol/interaction.js';
export { InMemoryEventStore, type McpEventStore, type StoredEvent } from './protocol/event-store.js';
export { SchemaProperty, type SchemaPropertyOptions } from './schema/schema-property.decorator.js';
export { McpHeader } from './decorators/mcp-header.decorator.js';
export type { McpRelay, McpRelayStreamRequest } from './protocol/relay.js';
export type { McpRedisClient, McpRedisOptions } from './redis/redis-client.js';
export { McpRedisBackend } from './redis/redis-backend.js';
export { RedisSessionStore } from './redis/redis-session.store.js';
export { RedisEventStore } from './redis/redis-event.store.js';
export { RedisNotificationBus } from './redis/redis-notification.bus.js';
export { RedisReplayGuard } from './redis/redis-replay.guard.js';
export { RedisRelay } from './redis/redis-relay.js';
export { McpHealthIndicator, type McpHealthDetails, type McpHealthResult } from './health/mcp-health.indicator.js';
export { SchemaGenerationError } from './schema/schema-generation.error.js';
export type { McpToolsetOptions } from './discovery/mcp-toolset.js';
export type { McpCapabilityUpdate, McpToggleOptions } from './discovery/capability-toggles.js';
export type { McpToggleState, McpToggleTarget } from './protocol/notification-bus.js';
export type { ListCacheHint, ListsCacheOption } from './protocol/catalog.js';
export { withJsonSchema, type InferArgs, type StandardSchemaV1, type StandardJsonSchemaConverter } from './schema/standard-schema.js';
export type {
  AudioContent,
  CacheHint,
  CallToolResult,
  ContentBlock,
  EmbeddedResourceContent,
  ImageContent,
  Implementation,
  LogLevel,
  McpIcon,
  ResourceLinkContent,
  TextContent,
  ToolAnnotations,
} from './protocol/mcp-types.js';
export {
  InMemorySessionStore,
  type McpSession,
  type McpSessionCreateOptions,
  type McpSessionCreateResult,
  type McpSessionEndReason,
  type McpSessionField,
  type McpSessionStore,
} from './protocol/session-store.js';
export {
  LEGACY_PROTOCOL_VERSIONS,
  MODERN_PROTOCOL_VERSIONS,
  type ProtocolEra,
} from './protocol/versions.js';
export {
  McpInProcessTransport,
  type McpInProcessSendOptions,
  type McpInProcessTransportOptions,
} from './transport/in-process.transport.js';
export {
  McpStdio,
  McpStdioLogger,
  McpStdioServer,
  type McpStdioServeOptions,
  type McpStdioServerOptions,
} from './transport/stdio.transport.js';
export {
  ResourceRepository,
  PromptRepository,
  type ResourceRepositoryOptions,
  type PromptRepositoryOptions,
  type McpResourceRepository,
  type McpPromptRepository,
  type McpResourcePage,
  type McpPromptPage,
} from './decorators/repository.decorator.js';
export type { McpRepositoryPageRequest } from './protocol/repositories.js';
export type { McpSessionState } from './protocol/context.js';
export type {
  McpOnSession,
  McpOnSessionClose,
  McpSessionClosed,
  McpSessionCloseReason,
  McpSessionConnection,
} from './engine/session-hooks.js';
export { McpSessionAdmin, type McpSessionSummary } from './admin/mcp-session-admin.js';
export type { McpAdminRoutesOptions } from './admin/mcp-admin.controller.js';
export type { McpShutdownOptions } from './interfaces/mcp-module-options.interface.js';
export {
  McpEvents,
  mcpEventName,
  type McpEvent,
  type McpEventBase,
  type McpEventType,
  type McpEventsOptions,
  type McpInteractionEvent,
  type McpListChangedEvent,
  type McpRequestEventFields,
  type McpRequestFinishedEvent,
  type McpRequestOutcome,
  type McpRequestStartedEvent,
  type McpResourceUpdatedEvent,
  type McpSessionClosedEvent,
  type McpSessionOpenedEvent,
} from './telemetry/events.js';
export type { McpTelemetryOptions } from './telemetry/options.js';
export { Skill, type InlineSkill, type SkillOptions, type SkillSource } from './decorators/skill.decorator.js';
export type { McpSkillsOptions } from './interfaces/mcp-skills-options.interface.js';
export {
  DIRECTORY_MIME_TYPE,
  SKILLS_EXTENSION,
  SkillDefinitionError,
  type SkillEntry,
  type SkillResourceEntry,
} from './protocol/skills/skill-entry.js';
export { AppView, McpApp, type AppViewOptions, type AppViewSource, type McpAppOptions } from './decorators/mcp-app.decorator.js';
export {
  UI_EXTENSION,
  UI_MIME_TYPE,
  appResult,
  type McpAppResult,
  type McpUiCsp,
  type McpUiPermissions,
  type McpUiResourceMeta,
  type McpUiVisibility,
} from './protocol/apps/apps.js';
export { type McpAskOptions } from './protocol/context.js';
export {
  InMemoryTaskStore,
  type McpTaskLimits,
  type McpTaskRecord,
  type McpTaskSignal,
  type McpTaskStatus,
  type McpTaskStore,
} from './protocol/tasks/task-store.js';
export { TASKS_EXTENSION } from './protocol/tasks/tasks.js';
export { type McpTasksOptions } from './tasks/mcp-tasks.js';
export type { McpExplorerOptions } from './explorer/explorer.controller.js';
export {
  catalogCoverage,
  lintCatalog,
  toolParameters,
  PORTABLE_NAME,
  SPEC_TOOL_NAME,
  type McpCatalog,
  type McpCatalogCoverage,
  type McpCatalogParameter,
  type McpCoverageCount,
  type McpLintFinding,
  type McpLintOptions,
  type McpToolSource,
} from './catalog/catalog.js';
export { renderCatalogMarkdown, renderGithubAnnotations } from './catalog/report.js';
