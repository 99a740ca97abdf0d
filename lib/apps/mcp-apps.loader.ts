import { Injectable, Logger } from '@nestjs/common';
import { readFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import { of } from 'rxjs';
import {
  MCP_APP_METADATA,
  MCP_APP_VIEW_METADATA,
  type AppViewOptions,
  type McpAppOptions,
} from './mcp-app.decorator.js';
import type { ToolRuntime } from '../protocol/catalog.js';
import {
  UI_EXTENSION,
  UI_MIME_TYPE,
  appOnlyTool,
  toolUiMeta,
  viewResource,
  viewUriProblem,
  type ViewDefinition,
} from './apps.js';
import { resourceCall } from '../discovery/capability-calls.js';
import { McpMethodLoader } from '../discovery/mcp-method.loader.js';
import type { ToolDefinition } from '../tools/tool-runtime.factory.js';

function appOptionsOf(method: unknown): McpAppOptions | undefined {
  return typeof method === 'function'
    ? (Reflect.getMetadata(MCP_APP_METADATA, method) as McpAppOptions | undefined)
    : undefined;
}

function linkedUri(app: McpAppOptions): string | undefined {
  return app.resourceUri ?? app.view?.uri;
}

/** A `@Tool()` with `@McpApp()` lists `_meta.ui` (resource URI, visibility) beside any `_meta` it declares. */
function withAppMeta<T extends Pick<ToolDefinition, '_meta'>>(definition: T, method: unknown): T {
  const app = appOptionsOf(method);
  const uri = app && linkedUri(app);
  if (!app || uri === undefined) return definition;
  return { ...definition, _meta: { ...definition._meta, ui: toolUiMeta(uri, app.visibility) } };
}

/** An app-only `@McpApp()` tool is hidden from, and unknown to, clients without MCP Apps. */
function withAppVisibility(runtime: ToolRuntime, method: unknown): ToolRuntime {
  const visibility = appOptionsOf(method)?.visibility;
  return visibility && !visibility.includes('model') ? appOnlyTool(runtime) : runtime;
}

/**
 * Serves the module's MCP Apps views (`@AppView()` methods and `view` of `@McpApp()`) as `ui://`
 * resources, declares the extension when there are any, and checks at bootstrap that every
 * linked URI is served.
 */
@Injectable()
export class McpAppsLoader extends McpMethodLoader {
  readonly kind = 'apps';

  amendTool<T extends Pick<ToolDefinition, '_meta'>>(definition: T, method: unknown): T {
    return withAppMeta(definition, method);
  }

  amendToolRuntime(runtime: ToolRuntime, method: unknown): ToolRuntime {
    return withAppVisibility(runtime, method);
  }
  private readonly logger = new Logger('McpModule');
  private readonly links: Array<{ uri: string; site: string }> = [];

  protected marks(method: Function): boolean {
    return Reflect.hasMetadata(MCP_APP_METADATA, method) || Reflect.hasMetadata(MCP_APP_VIEW_METADATA, method);
  }

  async settle(): Promise<void> {
    let found = false;
    for (const loaded of this.found) {
      const { method, site, prototype, methodName } = loaded;
      const app = appOptionsOf(method);
      const view =
        typeof method === 'function'
          ? (Reflect.getMetadata(MCP_APP_VIEW_METADATA, method) as AppViewOptions | undefined)
          : undefined;
      if (app) {
        found = true;
        const uri = linkedUri(app);
        if (uri === undefined)
          throw new Error(`${site}: @McpApp() needs "resourceUri" (the ui:// view of this tool) or "view".`);
        this.links.push({ uri, site });
        if (app.view) await this.serveInlineView(app.view, site);
      }
      if (view) {
        found = true;
        const instance = this.instanceOf(loaded, 'an @AppView() method');
        const invoke = resourceCall(
          view.uri,
          this.handlers.gated(
            {
              key: `resource:${view.uri}`,
              label: `view "${view.uri}"`,
              owner: prototype.constructor,
              method: method as Function,
            },
            this.handlers.create(instance, methodName),
          ),
        );
        this.serve(
          {
            ...view,
            name: view.name ?? nameOf(view.uri),
            render: (ctx) => invoke(ctx),
            ...this.accessOf(instance, loaded, view.uri),
          },
          site,
        );
      }
    }
    if (found) this.host!.declareExtension(UI_EXTENSION, { mimeTypes: [UI_MIME_TYPE] });
  }

  /** Every view a tool links to must exist ("Resource MUST exist on the server"): checked once everything is registered. */
  ready(): void {
    for (const { uri, site } of this.links) {
      if (!this.registry.resource(uri)) {
        throw new Error(
          `${site}: @McpApp() links to ${uri}, which nothing serves. Give it "view" ({ uri, html } or { uri, file }), or serve the URI with an @AppView() method.`,
        );
      }
    }
  }

  private async serveInlineView(view: McpAppOptions['view'] & object, site: string): Promise<void> {
    if ((view.html === undefined) === (view.file === undefined))
      throw new Error(
        `${site}: the "view" of @McpApp() needs exactly one of "html" (the document) or "file" (its path).`,
      );
    // A view linked from several tools is served once.
    if (this.registry.resource(view.uri)) return;
    let html = view.html;
    if (html === undefined) {
      const path = resolve(view.file!);
      html = await readFile(path, 'utf8').catch((error: unknown) => {
        throw new Error(
          `${site}: cannot read the view file ${path} of ${view.uri}: ${error instanceof Error ? error.message : String(error)}`,
        );
      });
    }
    const document = html;
    this.serve({ ...view, name: view.name ?? nameOf(view.uri), render: () => of(document) }, site);
  }

  private serve(view: ViewDefinition, site: string): void {
    const problem = viewUriProblem(view.uri);
    if (problem !== undefined)
      throw new Error(`${site}: invalid MCP Apps view URI ${JSON.stringify(view.uri)}: ${problem}.`);
    this.registry.registerResource(viewResource(view), site);
    this.logger.log(`Serving MCP Apps view ${view.uri}`);
  }
}

function nameOf(uri: string): string {
  return uri.slice('ui://'.length).replace(/[^A-Za-z0-9_.-]+/g, '_');
}
