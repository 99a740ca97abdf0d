import type { INestApplicationContext } from '@nestjs/common';
import type { McpPrincipal } from '../auth/mcp-auth.interface.js';
import { McpTestClient } from '../testing/mcp-test-client.js';
import type { McpTestEra } from '../testing/interfaces.js';
import type { McpCatalog } from '../catalog/catalog.js';

/** The eras a catalog is taken on: the last handshake revision and the stateless one. */
export const CATALOG_ERAS: readonly McpTestEra[] = ['2025-11-25', '2026-07-28'];

/** Options of {@link collectCatalog}. */
export interface McpCollectOptions {
  /** The caller whose view to take (guard-aware lists hide what it may not call). */
  principal?: McpPrincipal;
  /** Request headers the app's guards read. */
  headers?: Record<string, string>;
}

/**
 * A catalog per protocol era, taken in process through the app's own McpModule (no port):
 * exactly what `tools/list`, `resources/list`, `resources/templates/list` and `prompts/list`
 * return to that caller, every page. Used by the CLI; not on the main entry, which never loads
 * the testing client.
 */
export async function collectCatalog(app: INestApplicationContext, options: McpCollectOptions = {}): Promise<Record<string, McpCatalog>> {
  const byEra: Record<string, McpCatalog> = {};
  for (const era of CATALOG_ERAS) {
    const client = await McpTestClient.create(app, { era, principal: options.principal, headers: options.headers, capabilities: {} });
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
  return byEra;
}
