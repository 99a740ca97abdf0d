export const MCP_RESOURCE_METADATA = 'mcp:resource';
export const MCP_RESOURCE_TEMPLATE_METADATA = 'mcp:resource-template';
export const MCP_PROMPT_METADATA = 'mcp:prompt';
export const MCP_RESOURCE_REPOSITORY_METADATA = 'mcp:resource-repository';
export const MCP_PROMPT_REPOSITORY_METADATA = 'mcp:prompt-repository';
/** A list: one method may complete several arguments. */
export const MCP_COMPLETE_METADATA = 'mcp:complete';
/** Nest's own route-arguments key: sharing it lets `createParamDecorator` decorators work on tools. */
export const MCP_PARAM_ARGS_METADATA = '__routeArguments__';
export const MCP_DEFAULT_PATH = 'mcp';
// DI tokens come from the global symbol registry and metadata keys are strings: an app that loads
// both the ESM and the CommonJS build (an ESM app whose CommonJS dependency requires this package,
// Jest mixing both) gets two copies of this module, and the tokens and keys must still match.
export const MCP_ENDPOINT_PATH = Symbol.for('nestjs-model-context:MCP_ENDPOINT_PATH');
export const MCP_ENDPOINT_VERSION = Symbol.for('nestjs-model-context:MCP_ENDPOINT_VERSION');
export const MCP_RESOLVED_OPTIONS = Symbol.for('nestjs-model-context:MCP_RESOLVED_OPTIONS');
export const MCP_MODULE_ID = Symbol.for('nestjs-model-context:MCP_MODULE_ID');
/** The McpDispatcher of one McpModule, provided and logged under this one name. */
export const MCP_DISPATCHER = Symbol.for('nestjs-model-context:McpDispatcher');
export const MCP_HTTP_HANDLER = Symbol.for('nestjs-model-context:MCP_HTTP_HANDLER');
export const MCP_SESSION_STORE = Symbol.for('nestjs-model-context:MCP_SESSION_STORE');
export const MCP_NOTIFICATION_BUS = Symbol.for('nestjs-model-context:MCP_NOTIFICATION_BUS');
export const MCP_AUTHENTICATOR = Symbol.for('nestjs-model-context:MCP_AUTHENTICATOR');
export const MCP_LEGACY_SSE = Symbol.for('nestjs-model-context:MCP_LEGACY_SSE');
// The slices of the resolved module options: each class injects only the one it reads, and the
// module cuts them from the resolved options once.
/** The resolved `limits` (ResolvedMcpLimits). */
export const MCP_LIMITS = Symbol.for('nestjs-model-context:MCP_LIMITS');
/** The resolved `sessions` (ResolvedMcpSessionOptions). */
export const MCP_SESSION_OPTIONS = Symbol.for('nestjs-model-context:MCP_SESSION_OPTIONS');
/** The resolved `shutdown` (ResolvedMcpShutdownOptions). */
export const MCP_SHUTDOWN_OPTIONS = Symbol.for('nestjs-model-context:MCP_SHUTDOWN_OPTIONS');
/** What every transport reads: `maxBodyBytes` and `defaultLogLevel` (McpTransportSettings). */
export const MCP_TRANSPORT_SETTINGS = Symbol.for('nestjs-model-context:MCP_TRANSPORT_SETTINGS');
/** The `allowedOrigins` / `allowedHosts` check (OriginPolicy), shared by the endpoint and the pages beside it. */
export const MCP_ORIGIN_POLICY = Symbol.for('nestjs-model-context:MCP_ORIGIN_POLICY');
/** `auth` (McpAuthOptions), null without it. */
export const MCP_AUTH_OPTIONS = Symbol.for('nestjs-model-context:MCP_AUTH_OPTIONS');
/** The providers `include` limits the walks to (McpScanScope). */
export const MCP_SCAN_SCOPE = Symbol.for('nestjs-model-context:MCP_SCAN_SCOPE');
/** The requestState HMAC key (a Buffer): the option's, or the one shared through Redis. */
export const MCP_REQUEST_STATE_SECRET = Symbol.for('nestjs-model-context:MCP_REQUEST_STATE_SECRET');
/** The options slice the packs share (McpFeatureOptions): cache hints, error exposure, repository bounds. */
export const MCP_FEATURE_OPTIONS = Symbol.for('nestjs-model-context:McpFeatureOptions');
/** Items per page of the lists (`pageSize`). */
export const MCP_PAGE_SIZE = Symbol.for('nestjs-model-context:MCP_PAGE_SIZE');
/** How DTOs become JSON Schemas (`schemas`), as the DtoCompiler every walk shares. */
export const MCP_DTO_COMPILER = Symbol.for('nestjs-model-context:MCP_DTO_COMPILER');

/** The modules whose providers are walked: `include`, or every module when it is absent. */
export interface McpScanScope {
  include?: Function[];
}

/** Parameter kinds of the module's parameter decorators (kept clear of Nest's RouteParamtypes). */
export enum McpParamtype {
  ARGS = 100,
  CONTEXT = 101,
  REQUEST = 102,
  /** Hidden trailing parameter through which the execution layer reaches the call. */
  CALL = 103,
}
export const MCP_EXPLORER = Symbol.for('nestjs-model-context:MCP_EXPLORER');
