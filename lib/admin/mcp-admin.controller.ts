import {
  Controller,
  Get,
  NotFoundException,
  Param,
  Res,
  ServiceUnavailableException,
  VERSION_NEUTRAL,
  type Type,
} from '@nestjs/common';
import { McpStoreUnavailableError } from '../protocol/errors.js';
import type { McpEndpointVersion } from '../transport/endpoint-version.js';
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
export function createMcpAdminController(
  options: McpAdminRoutesOptions,
  version: McpEndpointVersion = VERSION_NEUTRAL,
): Type<unknown> {
  const path = (options.path ?? 'mcp-admin').replace(/^\/+|\/+$/g, '');

  @Controller({ path, version })
  class McpAdminController {
    constructor(private readonly admin: McpSessionAdmin) {}

    @Get('sessions')
    async sessions(@Res({ passthrough: true }) res: HeaderSetter): Promise<{ sessions: McpSessionSummary[] }> {
      return { sessions: await whileStoreAnswers(res, () => this.admin.list()) };
    }

    @Get('sessions/:id')
    async session(@Param('id') id: string, @Res({ passthrough: true }) res: HeaderSetter): Promise<McpSessionSummary> {
      const found = await whileStoreAnswers(res, () => this.admin.find(id));
      if (!found) throw new NotFoundException(`No live MCP session "${id}": it ended, expired, or never existed.`);
      return found;
    }
  }
  for (const decorate of options.decorators) decorate(McpAdminController);
  return McpAdminController;
}

/** The reply's header setter: Express's `res.header` and Fastify's `reply.header` alike. */
interface HeaderSetter {
  header(name: string, value: string): unknown;
}

/**
 * Runs a read of the session store; an unreachable store (Redis) answers 503 with its
 * `Retry-After` and the reason, as the MCP endpoint does, rather than a bare 500.
 */
async function whileStoreAnswers<T>(res: HeaderSetter, read: () => Promise<T>): Promise<T> {
  try {
    return await read();
  } catch (error) {
    if (!(error instanceof McpStoreUnavailableError)) throw error;
    res.header('Retry-After', String(error.retryAfterS));
    throw new ServiceUnavailableException(error.message);
  }
}
