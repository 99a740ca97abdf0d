import type { Provider } from '@nestjs/common';
import {
  MCP_AUTH_OPTIONS,
  MCP_DISPATCHER,
  MCP_DTO_COMPILER,
  MCP_LIMITS,
  MCP_ORIGIN_POLICY,
  MCP_PAGE_SIZE,
  MCP_REQUEST_STATE_SECRET,
  MCP_RESOLVED_OPTIONS,
  MCP_SCAN_SCOPE,
  MCP_SESSION_OPTIONS,
  MCP_SHUTDOWN_OPTIONS,
  MCP_TRANSPORT_SETTINGS,
  type McpScanScope,
} from './common/mcp.constants.js';
import type { ResolvedMcpOptions } from './interfaces/mcp-module-options.interface.js';
import type { McpTransportSettings } from './transport/transport-settings.js';
import { OriginPolicy } from './transport/origin-policy.js';
import { dtoCompilerFor } from './discovery/dto-compiler.js';
import { McpRegistry } from './discovery/mcp.registry.js';
import type { McpDispatcher } from './protocol/dispatcher.js';
import { MCP_REDIS, requestStateSecret, type McpRedisBackend } from './redis/redis-backend.js';
import { MCP_TELEMETRY_OPTIONS } from './telemetry/options.js';
import { MCP_EVENTS_OPTIONS } from './telemetry/events.js';
import { MCP_SERVER_NAMES } from './telemetry/observability.providers.js';
import type { McpServerNames } from './telemetry/observer.js';
import { toolRunBy } from './tool-sets/discovery-names.js';

/** One slice of the resolved options under its own token. */
const slice = <T>(provide: symbol, cut: (options: ResolvedMcpOptions) => T): Provider => ({
  provide,
  useFactory: cut,
  inject: [MCP_RESOLVED_OPTIONS],
});

/**
 * The resolved options cut into the slices the classes inject: each class sees only what it
 * reads, and the options flow one way, from the module down. An absent slice is null (a factory
 * gives Nest a value). @internal
 */
export const optionSliceProviders: Provider[] = [
  slice(MCP_LIMITS, (options) => options.limits),
  slice(MCP_SESSION_OPTIONS, (options) => options.sessions),
  slice(MCP_SHUTDOWN_OPTIONS, (options) => options.shutdown),
  slice(MCP_TRANSPORT_SETTINGS, (options): McpTransportSettings => ({
    maxBodyBytes: options.maxBodyBytes,
    defaultLogLevel: options.defaultLogLevel,
  })),
  slice(
    MCP_ORIGIN_POLICY,
    (options) => new OriginPolicy({ allowedOrigins: options.allowedOrigins, allowedHosts: options.allowedHosts }),
  ),
  slice(MCP_AUTH_OPTIONS, (options) => options.auth ?? null),
  slice(MCP_SCAN_SCOPE, (options): McpScanScope => (options.include ? { include: options.include as Function[] } : {})),
  slice(MCP_PAGE_SIZE, (options) => options.pageSize),
  slice(MCP_DTO_COMPILER, (options) => dtoCompilerFor(options.schemas.nullableOptionals)),
  slice(MCP_TELEMETRY_OPTIONS, (options) => options.telemetry ?? null),
  slice(MCP_EVENTS_OPTIONS, (options) => options.events ?? null),
  {
    provide: MCP_REQUEST_STATE_SECRET,
    useFactory: (options: ResolvedMcpOptions, redis: McpRedisBackend | null): Buffer =>
      requestStateSecret(options, redis),
    inject: [MCP_RESOLVED_OPTIONS, MCP_REDIS],
  },
  {
    // Telemetry labels with the server's names; the module knows where they are (the dispatcher's
    // methods, the registry, the tools packs add), so telemetry imports none of them.
    provide: MCP_SERVER_NAMES,
    useFactory: serverNames,
    inject: [MCP_DISPATCHER, McpRegistry],
  },
];

/** What this server has, looked up per request: capabilities added or toggled at run time count as they are. */
function serverNames(server: McpDispatcher, registry: McpRegistry): McpServerNames {
  return {
    method: (era, method) => server.hasMethod(era, method),
    tool: (name) => registry.tool(name)?.name,
    runsTool: toolRunBy,
    prompt: (name) => registry.prompt(name)?.name ?? repositoryLabel(registry.promptRepositoryFor(name)?.namePrefix),
    resource: (uri) =>
      registry.resource(uri)?.uri ??
      repositoryLabel(registry.resourceRepositoryFor(uri)?.uriPrefix) ??
      registry.resourceTemplates().find((template) => template.template.match(uri) !== null)?.uriTemplate,
  };
}

function repositoryLabel(prefix: string | undefined): string | undefined {
  return prefix === undefined ? undefined : `${prefix}*`;
}
