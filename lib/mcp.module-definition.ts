import { ConfigurableModuleBuilder, VERSION_NEUTRAL } from '@nestjs/common';
import type { McpModuleOptions } from './interfaces/mcp-module-options.interface.js';
import { MCP_DEFAULT_PATH } from './common/mcp.constants.js';
import type { McpLegacySseOptions } from './transport/legacy-sse.transport.js';
import type { McpEndpointVersion } from './transport/endpoint-version.js';
import type { McpAdminRoutesOptions } from './admin/mcp-admin.controller.js';
import type { McpExplorerOptions } from './explorer/explorer.controller.js';

export type { McpEndpointVersion };

/**
 * Options that shape the module itself and so must be known synchronously, even with
 * `forRootAsync()`: routes are fixed when the module is defined.
 *
 * @publicApi
 */
export interface McpModuleExtras {
  /** The endpoint path, relative to any global prefix. @default 'mcp' */
  path: string;
  /** Register the module globally. @default false */
  isGlobal: boolean;
  /**
   * The endpoint's version under the app's versioning (`app.enableVersioning()`). Version-neutral
   * by default: with URI versioning and a global prefix `api`, the endpoint is `/api/mcp`; give
   * `endpointVersion: '1'` for `/api/v1/mcp`. (Not `version`: that is the server's version.) The full URL is logged when the app starts listening.
   * @default VERSION_NEUTRAL
   */
  endpointVersion: McpEndpointVersion;
  /**
   * The app's own class decorators, applied to the endpoint's controller (and the legacy SSE
   * routes), so that the app's conventions reach it: `@SkipThrottle()`, `@ApiExcludeController()`,
   * `@UseGuards(...)`. Not `@Public()` when the app's guard authenticates MCP: a guard that skips
   * the endpoint sets no `request.user`, and every request is then 401. The protected-resource
   * metadata and the explorer page are served beside the router and take none of these.
   * @default []
   */
  controllerDecorators: ClassDecorator[];
  /**
   * Also serve the legacy HTTP+SSE transport of protocol revision 2024-11-05, for clients that
   * speak only it: `GET /sse` opens a session's event stream, whose first `endpoint` event names
   * the URL to POST its messages to (`/messages?sessionId=…`). Off by default. `true` uses those
   * routes; give `{ path, messagesPath }` for others. Same Origin/Host checks, auth, body and
   * session limits as Streamable HTTP; sessions live in the process holding the stream.
   * @default false
   */
  legacySse: boolean | McpLegacySseOptions;
  /**
   * Serve the read-only admin routes of {@link McpSessionAdmin}: `GET /mcp-admin/sessions` and
   * `GET /mcp-admin/sessions/:id` (no state, no tokens). Off by default. The app protects them
   * with its own guard, passed as a class decorator: `{ decorators: [UseGuards(AdminGuard)] }`.
   * @default false
   */
  adminRoutes: false | McpAdminRoutesOptions;
  /**
   * Serve the explorer page beside the endpoint (`/mcp/explorer` for `/mcp`): a development page,
   * like Swagger UI, that lists the catalog, renders a form per input schema and calls tools through
   * the endpoint with a bearer token pasted in it. Off by default; meant for development. One
   * self-contained HTML page (no CDN), a strict Content-Security-Policy, the endpoint's Host and
   * Origin checks. Public: served beside Nest's router (a browser opening it has no token; its
   * calls carry the pasted one through the endpoint's auth), unless `explorer.decorators` puts it
   * behind the router. Follows the global prefix and URI versioning.
   * @default false
   */
  explorer: boolean | McpExplorerOptions;
}

export const {
  ConfigurableModuleClass: McpConfigurableModule,
  MODULE_OPTIONS_TOKEN: MCP_MODULE_OPTIONS,
  OPTIONS_TYPE: MCP_OPTIONS_TYPE,
  ASYNC_OPTIONS_TYPE: MCP_ASYNC_OPTIONS_TYPE,
} = new ConfigurableModuleBuilder<McpModuleOptions>({ moduleName: 'Mcp' })
  .setClassMethodName('forRoot')
  .setFactoryMethodName('createMcpOptions')
  .setExtras<McpModuleExtras>(
    {
      path: MCP_DEFAULT_PATH,
      isGlobal: false,
      endpointVersion: VERSION_NEUTRAL,
      controllerDecorators: [],
      legacySse: false,
      adminRoutes: false,
      explorer: false,
    },
    (definition, extras) => ({
      ...definition,
      global: extras.isGlobal,
    }),
  )
  .build();

/** @publicApi */
export type McpModuleAsyncOptions = typeof MCP_ASYNC_OPTIONS_TYPE;
/** @publicApi */
export type McpModuleForRootOptions = typeof MCP_OPTIONS_TYPE;
