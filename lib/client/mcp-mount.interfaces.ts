import type { McpContext } from '../protocol/context.js';
import type { McpClientCaller } from './mcp-client.interfaces.js';

/**
 * One upstream mounted into this app's MCP endpoint: its tools, resources, resource templates and
 * prompts appear in this endpoint's lists under `prefix`, and calls go through this app's
 * pipeline (guards, scopes, throttles, interceptors, McpEvents, spans) before they are forwarded.
 *
 * @publicApi
 */
export interface McpMountOptions {
  /** The McpClientModule client whose server is mounted. */
  client: string;
  /** Put before every tool and prompt name (and resource name), e.g. `everything_`. */
  prefix: string;
  /** Only these upstream names (tools and prompts, before prefixing). */
  include?: string[];
  /** Never these upstream names; an excluded capability is unknown on every path. */
  exclude?: string[];
  /** Mount the upstream's resources and templates (their URIs are kept as they are). @default true */
  resources?: boolean;
  /** Mount the upstream's prompts. @default true */
  prompts?: boolean;
  /**
   * Method decorators applied to every mounted capability, as for `McpRegistry.addTool`:
   * `UseGuards(...)`, `RequireScopes(...)`, `Throttle(...)`, `McpTimeout(...)`.
   */
  decorators?: MethodDecorator[];
  /**
   * Who a forwarded call is for, when the client's `auth` presents the caller (`pass-through`,
   * `token-exchange`). By default: the authenticated principal's id and the request's bearer token.
   */
  caller?: (ctx: McpContext) => McpClientCaller | undefined;
}

/** Options of `McpMountModule.forRoot()`. @publicApi */
export interface McpMountModuleOptions {
  mounts: McpMountOptions[];
}
