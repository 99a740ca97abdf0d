import { map, type Observable } from 'rxjs';
import type { ResourceRuntime, ToolRuntime } from '../protocol/catalog.js';
import type { McpContext } from '../protocol/context.js';
import { ToolError } from '../protocol/errors.js';
import { isObject } from '../protocol/dispatcher.js';
import type { JsonObject } from '../protocol/mcp-types.js';
import type { ResourceDescriptor } from '../protocol/resource-contents.js';

/*
 * MCP Apps (`io.modelcontextprotocol/ui`, SEP-1865, stable 2026-01-26): a tool links a `ui://`
 * resource holding an HTML view (`text/html;profile=mcp-app`) through `_meta.ui.resourceUri`;
 * the view's CSP, permissions and domain travel in `_meta.ui` of the resource's contents; a tool
 * whose `_meta.ui.visibility` leaves out "model" is callable by the view only.
 */

/** The extension identifier. */
export const UI_EXTENSION = 'io.modelcontextprotocol/ui';
/** The MIME type of an MCP App HTML view. */
export const UI_MIME_TYPE = 'text/html;profile=mcp-app';

/**
 * Origins a view may reach; each list maps to CSP directives the host builds (empty or omitted
 * means none: the host's restrictive default).
 *
 * @publicApi
 */
export interface McpUiCsp {
  /** `connect-src`: fetch, XHR, WebSocket. */
  connectDomains?: string[];
  /** `img-src`, `script-src`, `style-src`, `font-src`, `media-src`. */
  resourceDomains?: string[];
  /** `frame-src`: nested iframes. */
  frameDomains?: string[];
  /** `base-uri`. */
  baseUriDomains?: string[];
}

/**
 * Browser capabilities a view asks for (the iframe's `allow` attribute); hosts may refuse them.
 *
 * @publicApi
 */
export interface McpUiPermissions {
  camera?: Record<string, never>;
  microphone?: Record<string, never>;
  geolocation?: Record<string, never>;
  clipboardWrite?: Record<string, never>;
}

/**
 * What a view's resource declares in `_meta.ui`.
 *
 * @publicApi
 */
export interface McpUiResourceMeta {
  csp?: McpUiCsp;
  permissions?: McpUiPermissions;
  /** A dedicated sandbox origin for the view; its format is host-specific. */
  domain?: string;
  /** Ask the host for (true) or against (false) a visible border and background. */
  prefersBorder?: boolean;
}

/** Who may call a tool: the model (`"model"`), the view (`"app"`), or both (the default). @publicApi */
export type McpUiVisibility = Array<'model' | 'app'>;

/**
 * A tool result carrying the data a view renders (`structuredContent`) and the text every other
 * client (and the model) gets (`content`).
 *
 * @publicApi
 */
export interface McpAppResult<T extends object> {
  content: Array<{ type: 'text'; text: string }>;
  structuredContent: T;
  _meta?: JsonObject;
}

/**
 * Builds a tool result for an MCP App: `data` goes to the view as `structuredContent`; `text`
 * is what a client without the extension shows and what the model reads.
 *
 * @example
 * ```ts
 * return appResult({ orders }, `${orders.length} open orders, ${late} late.`);
 * ```
 * @publicApi
 */
export function appResult<T extends object>(data: T, text: string, meta?: JsonObject): McpAppResult<T> {
  const result: McpAppResult<T> = { content: [{ type: 'text', text }], structuredContent: data };
  if (meta !== undefined) result._meta = meta;
  return result;
}

/**
 * Whether a client's capabilities declare MCP Apps for the HTML profile: the extension's settings
 * must list `text/html;profile=mcp-app` in `mimeTypes`, which the extension makes REQUIRED. A
 * bare `io.modelcontextprotocol/ui: {}` (some clients send it on every connection) is not support.
 */
export function supportsApps(clientCapabilities: JsonObject): boolean {
  const extensions = clientCapabilities.extensions;
  const settings = isObject(extensions) ? extensions[UI_EXTENSION] : undefined;
  return isObject(settings) && Array.isArray(settings.mimeTypes) && settings.mimeTypes.includes(UI_MIME_TYPE);
}

/** Why a `ui://` view URI cannot be served, or undefined. */
export function viewUriProblem(uri: string): string | undefined {
  if (typeof uri !== 'string' || !uri.startsWith('ui://') || uri.length <= 'ui://'.length)
    return 'it must start with "ui://" and name the view, e.g. "ui://orders/dashboard"';
  if (/[\u0000-\u0020\u007f]/.test(uri)) return 'it contains whitespace or control characters';
  return undefined;
}

/** The `_meta.ui` of a view resource: only the fields the extension defines, copied. */
export function resourceUiMeta(meta: McpUiResourceMeta): JsonObject {
  const ui: JsonObject = {};
  if (meta.csp) {
    const csp: JsonObject = {};
    for (const key of ['connectDomains', 'resourceDomains', 'frameDomains', 'baseUriDomains'] as const)
      if (meta.csp[key]) csp[key] = [...meta.csp[key]!];
    ui.csp = csp;
  }
  if (meta.permissions) {
    const permissions: JsonObject = {};
    for (const key of ['camera', 'microphone', 'geolocation', 'clipboardWrite'] as const)
      if (meta.permissions[key]) permissions[key] = {};
    ui.permissions = permissions;
  }
  if (meta.domain !== undefined) ui.domain = meta.domain;
  if (meta.prefersBorder !== undefined) ui.prefersBorder = meta.prefersBorder;
  return ui;
}

/** What a view resource is built from. */
export interface ViewDefinition extends McpUiResourceMeta {
  uri: string;
  name: string;
  title?: string;
  description?: string;
  /** Produces the HTML: a string, bytes, or `{ html }`; run per read (a provider method goes through the Nest pipeline). */
  render(ctx: McpContext): Observable<unknown>;
  requiredScopes?: readonly string[];
  authorize?: ResourceRuntime['authorize'];
}

/** A view as a resource: the MCP Apps MIME type, and `_meta.ui` on the listing and on every read. */
export function viewResource(view: ViewDefinition): ResourceRuntime {
  const ui = resourceUiMeta(view);
  const descriptor: ResourceDescriptor = { uri: view.uri, name: view.name, mimeType: UI_MIME_TYPE };
  if (view.title !== undefined) descriptor.title = view.title;
  if (view.description !== undefined) descriptor.description = view.description;
  if (Object.keys(ui).length) descriptor._meta = { ui };
  return {
    uri: view.uri,
    name: view.name,
    descriptor,
    mimeType: UI_MIME_TYPE,
    requiredScopes: view.requiredScopes,
    authorize: view.authorize,
    read: (ctx) =>
      view.render(ctx).pipe(
        map((value) => {
          const html =
            typeof value === 'string'
              ? value
              : value instanceof Uint8Array
                ? Buffer.from(value).toString('utf8')
                : (value as { html?: unknown } | null)?.html;
          if (typeof html !== 'string') {
            throw new ToolError(
              `View ${view.uri} rendered ${value === null ? 'null' : typeof value}; a view returns its HTML document as a string.`,
            );
          }
          const content: JsonObject = { uri: view.uri, mimeType: UI_MIME_TYPE, text: html };
          if (Object.keys(ui).length) content._meta = { ui };
          return { contents: [content] };
        }),
      ),
  };
}

/** `_meta.ui` of a tool linked to a view. */
export function toolUiMeta(resourceUri: string, visibility: McpUiVisibility | undefined): JsonObject {
  return visibility ? { resourceUri, visibility: [...visibility] } : { resourceUri };
}

/**
 * An app-only tool (`visibility` without "model"): a caller whose client did not declare MCP
 * Apps finds it in no list and calls it as an unknown tool on every path (tools/call, tasks,
 * durable jobs), so a plain client (and its model) never sees it.
 */
export function appOnlyTool(runtime: ToolRuntime): ToolRuntime {
  return { ...runtime, visibleTo: supportsApps };
}
