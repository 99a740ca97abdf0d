/**
 * `nestjs-model-context/client`: MCP clients for an app's providers, built on the official
 * `@modelcontextprotocol/client` (an optional peer, loaded when a client first connects).
 */
export { McpClientModule, InjectMcpClient, getMcpClientToken } from './mcp-client.module.js';
export { McpClients } from './mcp-clients.js';
export { McpClient, type McpUpstreamInfo } from './mcp-client.js';
export { McpClientError, type McpClientErrorKind } from './mcp-client.error.js';
export { McpClientHealthIndicator, type McpClientHealthDetails } from './mcp-client.health.js';
export type {
  McpClientAuth,
  McpClientCallOptions,
  McpClientCaller,
  McpClientEra,
  McpClientHttpTransport,
  McpClientInProcessTransport,
  McpClientModuleAsyncOptions,
  McpClientModuleOptions,
  McpClientOptions,
  McpClientPage,
  McpClientRetryOptions,
  McpClientStdioTransport,
  McpClientTransportOptions,
  McpOAuthClient,
  McpToolTypes,
  McpTypedToolResult,
} from './mcp-client.interfaces.js';
export { McpMountModule } from './mcp-mount.module.js';
export type { McpMountModuleOptions, McpMountOptions } from './mcp-mount.interfaces.js';
