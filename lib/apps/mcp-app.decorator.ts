import { SetMetadata } from '@nestjs/common';
import type { McpUiResourceMeta, McpUiVisibility } from './apps.js';

/** Metadata key of `@McpApp()`. */
export const MCP_APP_METADATA = 'mcp:app';
/** Metadata key of `@AppView()`. */
export const MCP_APP_VIEW_METADATA = 'mcp:app-view';

/**
 * How a view's resource is declared (`@AppView()`, or `view` of `@McpApp()`).
 *
 * @publicApi
 */
export interface AppViewOptions extends McpUiResourceMeta {
  /** The view's `ui://` URI, e.g. `ui://orders/dashboard`. */
  uri: string;
  /** A short identifier shown in resource lists. @default the URI's path */
  name?: string;
  title?: string;
  description?: string;
}

/**
 * A view given with its tool: the HTML inline or from a file (read once at bootstrap, e.g. a
 * single-file Vite build).
 *
 * @publicApi
 */
export interface AppViewSource extends AppViewOptions {
  /** The HTML document. */
  html?: string;
  /** Path of the HTML document (absolute, or relative to the working directory). */
  file?: string;
}

/**
 * Options of `@McpApp()`.
 *
 * @publicApi
 */
export interface McpAppOptions {
  /** The `ui://` URI of the view rendering this tool's results (served by `view`, an `@AppView()` method or a `@Resource()`). */
  resourceUri?: string;
  /**
   * Who may call the tool. `['app']` makes it app-only: callable by the view, hidden from the
   * model, and invisible to clients that do not declare MCP Apps. @default ['model', 'app']
   */
  visibility?: McpUiVisibility;
  /** The view itself, served at `view.uri` (then `resourceUri` may be left out). */
  view?: AppViewSource;
}

/**
 * Links a `@Tool()` to an MCP Apps view (`io.modelcontextprotocol/ui`): the tool's listing
 * carries `_meta.ui.resourceUri` (and `visibility`), and a host that supports MCP Apps renders
 * the view next to the result. Return {@link appResult} so the view gets `structuredContent`
 * and every other client a text result.
 *
 * @example
 * ```ts
 * @Tool({ description: 'Open orders, as a dashboard' })
 * @McpApp({ view: { uri: 'ui://orders/dashboard', file: 'views/dashboard.html', csp: { connectDomains: ['https://api.example.com'] } } })
 * dashboard() { return appResult({ orders }, `${orders.length} open orders`); }
 *
 * @Tool({ description: 'Mark an order shipped (from the dashboard)' })
 * @McpApp({ resourceUri: 'ui://orders/dashboard', visibility: ['app'] })
 * ship(@Args() input: ShipDto) { ... }
 * ```
 * @publicApi
 */
export function McpApp(options: McpAppOptions): MethodDecorator {
  return (target, propertyKey, descriptor) => {
    SetMetadata(MCP_APP_METADATA, { ...options })(target, propertyKey, descriptor);
    return descriptor;
  };
}

/**
 * Serves a provider method's return value (an HTML document) as an MCP Apps view at a `ui://`
 * URI, with the MCP Apps MIME type and the CSP, permissions and domain in `_meta.ui`. The method
 * runs per read, through the Nest pipeline (guards, interceptors), so it can render with the
 * app's own template engine.
 *
 * @publicApi
 */
export function AppView(options: AppViewOptions): MethodDecorator {
  return (target, propertyKey, descriptor) => {
    SetMetadata(MCP_APP_VIEW_METADATA, { ...options })(target, propertyKey, descriptor);
    return descriptor;
  };
}
