import type { INestApplicationContext } from '@nestjs/common';
import type { McpPrincipal } from '../auth/mcp-auth.interface.js';
import { McpRegistry } from '../discovery/mcp.registry.js';
import { McpTestClient } from '../testing/mcp-test-client.js';
import type { McpTestEra } from '../testing/interfaces.js';
import type { McpCatalog, McpToolSource } from '../catalog/catalog.js';
import type { ToolRuntime } from '../protocol/catalog.js';

/** The eras a catalog is taken on: the last handshake revision and the stateless one. */
export const CATALOG_ERAS: readonly McpTestEra[] = ['2025-11-25', '2026-07-28'];

/** Options of {@link collectCatalog}. */
export interface McpCollectOptions {
  /** The caller whose view to take (guard-aware lists hide what it may not call). */
  principal?: McpPrincipal;
  /** The app-shaped user object its guards read on `request.user`. */
  user?: unknown;
  /** Authenticate through the endpoint's own guards and auth with `headers` (a real bearer token). */
  authenticate?: boolean;
  /** Request headers the app's guards read. */
  headers?: Record<string, string>;
}

/** Catalog entries the caller was not shown, by kind (names, URIs, URI templates). */
export interface McpHiddenEntries {
  tools: string[];
  resources: string[];
  resourceTemplates: string[];
  prompts: string[];
}

/** What {@link collectCatalog} found: the lists per era, what they left out, where tools come from. */
export interface McpCollected {
  byEra: Record<string, McpCatalog>;
  /** Registered entries missing from the caller's lists on any era: its guards or scopes hid them. */
  hidden: McpHiddenEntries;
  toolSources: Record<string, McpToolSource>;
}

/**
 * A catalog per protocol era, taken in process through the app's own McpModule (no port):
 * exactly what `tools/list`, `resources/list`, `resources/templates/list` and `prompts/list`
 * return to that caller, every page; and which registered entries they did not show it. Used by
 * the CLI; not on the main entry, which never loads the testing client.
 */
export async function collectCatalog(
  app: INestApplicationContext,
  options: McpCollectOptions = {},
): Promise<McpCollected> {
  const byEra: Record<string, McpCatalog> = {};
  for (const era of CATALOG_ERAS) {
    const client = await McpTestClient.create(app, { era, ...options, capabilities: {} });
    try {
      const caps = client.serverCapabilities;
      byEra[era] = {
        tools: caps.tools ? await client.listTools() : [],
        resources: caps.resources ? await client.listResources() : [],
        resourceTemplates: caps.resources ? await client.listResourceTemplates() : [],
        prompts: caps.prompts ? await client.listPrompts() : [],
      } as McpCatalog;
    } finally {
      await client.close();
    }
  }
  const registry = app.get(McpRegistry, { strict: false });
  const toolSources: Record<string, McpToolSource> = {};
  for (const name of registry.toolNames()) toolSources[name] = registry.toolSource(name) ?? 'tool';
  return { byEra, hidden: hiddenEntries(registry, Object.values(byEra)), toolSources };
}

/**
 * Entries the registry serves that a list left out. App-only tools (MCP Apps `visibility:
 * ["app"]`) are left out of every model's list by design, so they do not count.
 */
function hiddenEntries(registry: McpRegistry, catalogs: McpCatalog[]): McpHiddenEntries {
  const missing = (all: string[], listed: (catalog: McpCatalog) => unknown[]): string[] =>
    all.filter((key) => catalogs.some((catalog) => !listed(catalog).includes(key)));
  return {
    tools: missing(
      registry
        .tools()
        .filter((tool) => !appOnly(tool))
        .map((tool) => tool.name),
      (c) => c.tools.map((t) => t.name),
    ),
    resources: missing(
      registry.resources().map((r) => r.uri),
      (c) => c.resources.map((r) => r.uri),
    ),
    resourceTemplates: missing(
      registry.resourceTemplates().map((t) => t.uriTemplate),
      (c) => c.resourceTemplates.map((t) => t.uriTemplate),
    ),
    prompts: missing(
      registry.prompts().map((p) => p.name),
      (c) => c.prompts.map((p) => p.name),
    ),
  };
}

function appOnly(tool: ToolRuntime): boolean {
  const visibility = (tool.descriptors.legacy._meta as { ui?: { visibility?: unknown } } | undefined)?.ui?.visibility;
  return Array.isArray(visibility) && !visibility.includes('model');
}
