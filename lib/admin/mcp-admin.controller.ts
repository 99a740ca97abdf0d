import { Controller, Get, NotFoundException, Param, VERSION_NEUTRAL, type Type } from '@nestjs/common';
import type { McpEndpointVersion } from '../mcp.module-definition.js';
import { McpSessionAdmin, type McpSessionSummary } from './mcp-session-admin.js';

/**
 * Where the read-only admin routes are served, and what protects them.
 *
 * @publicApi
 */
export interface McpAdminRoutesOptions {
  /** The routes' base path: `GET /<path>/sessions` and `GET /<path>/sessions/:id`. @default 'mcp-admin' */
  path?: string;
  /**
   * The app's class decorators for the admin controller, typically its guard:
   * `[UseGuards(AdminGuard)]`. Required: give `[]` only when a global guard (`APP_GUARD`)
   * already protects every route.
   */
  decorators: ClassDecorator[];
}

/** The read-only admin routes, as a class per McpModule so that its path is fixed when routes are mapped. */
export function createMcpAdminController(options: McpAdminRoutesOptions, version: McpEndpointVersion = VERSION_NEUTRAL): Type<unknown> {
  const path = (options.path ?? 'mcp-admin').replace(/^\/+|\/+$/g, '');

  @Controller({ path, version })
  class McpAdminController {
    constructor(private readonly admin: McpSessionAdmin) {}

    @Get('sessions')
    async sessions(): Promise<{ sessions: McpSessionSummary[] }> {
      return { sessions: await this.admin.list() };
    }

    @Get('sessions/:id')
    async session(@Param('id') id: string): Promise<McpSessionSummary> {
      const found = await this.admin.find(id);
      if (!found) throw new NotFoundException(`No live MCP session "${id}": it ended, expired, or never existed.`);
      return found;
    }
  }
  for (const decorate of options.decorators) decorate(McpAdminController);
  return McpAdminController;
}
