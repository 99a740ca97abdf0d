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
/** @deprecated The former name of {@link MCP_DISPATCHER}: the same token. */
export const MCP_SERVER = MCP_DISPATCHER;
export const MCP_HTTP_HANDLER = Symbol.for('nestjs-model-context:MCP_HTTP_HANDLER');
export const MCP_SESSION_STORE = Symbol.for('nestjs-model-context:MCP_SESSION_STORE');
export const MCP_NOTIFICATION_BUS = Symbol.for('nestjs-model-context:MCP_NOTIFICATION_BUS');
export const MCP_AUTHENTICATOR = Symbol.for('nestjs-model-context:MCP_AUTHENTICATOR');
export const MCP_LEGACY_SSE = Symbol.for('nestjs-model-context:MCP_LEGACY_SSE');

/** Parameter kinds of the module's parameter decorators (kept clear of Nest's RouteParamtypes). */
export enum McpParamtype {
  ARGS = 100,
  CONTEXT = 101,
  REQUEST = 102,
  /** Hidden trailing parameter through which the execution layer reaches the call. */
  CALL = 103,
}
export const MCP_EXPLORER = Symbol.for('nestjs-model-context:MCP_EXPLORER');
