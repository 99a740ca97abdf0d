import {
  Controller,
  Get,
  Inject,
  Logger,
  Post,
  Req,
  Res,
  UseFilters,
  VERSION_NEUTRAL,
  type Type,
} from '@nestjs/common';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { MCP_HTTP_HANDLER } from '../common/mcp.constants.js';
import type { McpEndpointVersion } from './endpoint-version.js';
import { nodeHttpOf } from './fastify.adapter.js';
import type { McpHttpHandler } from './http-handler.js';
import type { ResolvedLegacySseOptions } from './legacy-sse.transport.js';
import { McpHttpExceptionFilter } from './mcp-http-exception.filter.js';

/**
 * The legacy HTTP+SSE routes (GET stream, POST messages), as a subclass per McpModule so that
 * their paths are fixed when routes are mapped; like the main endpoint it writes its own
 * responses and never throws.
 */
export function createLegacySseController(
  routes: ResolvedLegacySseOptions,
  version: McpEndpointVersion = VERSION_NEUTRAL,
  decorators: readonly ClassDecorator[] = [],
): Type<unknown> {
  @UseFilters(McpHttpExceptionFilter)
  @Controller({ version })
  class McpLegacySseController {
    private readonly logger = new Logger('McpModule');

    constructor(@Inject(MCP_HTTP_HANDLER) private readonly handler: McpHttpHandler) {}

    @Get(routes.path)
    stream(@Req() req: IncomingMessage, @Res() res: ServerResponse): void {
      this.run(req, res, 'stream');
    }

    @Post(routes.messagesPath)
    messages(@Req() req: IncomingMessage, @Res() res: ServerResponse): void {
      this.run(req, res, 'messages');
    }

    private run(request: IncomingMessage, response: ServerResponse, route: 'stream' | 'messages'): void {
      const { req, res, request: appRequest } = nodeHttpOf(request, response);
      this.handler.handleLegacySse(req, res, route, appRequest).catch((error: unknown) => {
        const err = error instanceof Error ? error : new Error(String(error));
        this.logger.error(`Unexpected failure while serving ${req.method} ${req.url}: ${err.message}`, err.stack);
      });
    }
  }
  for (const decorate of decorators) decorate(McpLegacySseController);
  return McpLegacySseController;
}
