import {
  Controller,
  Delete,
  Get,
  Inject,
  Logger,
  Patch,
  Post,
  Put,
  Req,
  Res,
  UseFilters,
  VERSION_NEUTRAL,
  type Type,
} from '@nestjs/common';
import type { McpEndpointVersion } from './endpoint-version.js';
import { McpHttpExceptionFilter } from './mcp-http-exception.filter.js';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { MCP_HTTP_HANDLER } from '../common/mcp.constants.js';
import type { McpHttpHandler } from './http-handler.js';
import { nodeHttpOf } from './fastify.adapter.js';

/**
 * The MCP endpoint: POST for messages, GET for a legacy session's stream, DELETE to end a legacy
 * session. It writes the response itself (`@Res()`), so global interceptors cannot reshape
 * protocol messages, and it never throws, so global exception filters never see protocol errors.
 * Guards on the route (an auth guard, for example) still apply. On Fastify the parameters are
 * Fastify's request and reply; the handler writes to the Node request and response under them,
 * and reads the principal from Fastify's request, where the app's guards set `user`.
 */
@UseFilters(McpHttpExceptionFilter)
export class McpController {
  private readonly logger = new Logger('McpModule');

  constructor(@Inject(MCP_HTTP_HANDLER) private readonly handler: McpHttpHandler) {}

  @Post()
  post(@Req() req: IncomingMessage, @Res() res: ServerResponse): void {
    this.run(req, res);
  }

  @Get()
  get(@Req() req: IncomingMessage, @Res() res: ServerResponse): void {
    this.run(req, res);
  }

  @Delete()
  delete(@Req() req: IncomingMessage, @Res() res: ServerResponse): void {
    this.run(req, res);
  }

  /**
   * PUT and PATCH: the endpoint exists, so the handler answers 405 with `Allow` and a JSON-RPC
   * error, not the framework's 404 "Cannot PUT". Not `@All()`: Fastify refuses it next to the
   * GET route's implicit HEAD, and OPTIONS belongs to the app's CORS handling.
   */
  @Put()
  put(@Req() req: IncomingMessage, @Res() res: ServerResponse): void {
    this.run(req, res);
  }

  @Patch()
  patch(@Req() req: IncomingMessage, @Res() res: ServerResponse): void {
    this.run(req, res);
  }

  private run(request: IncomingMessage, response: ServerResponse): void {
    const { req, res, request: appRequest } = nodeHttpOf(request, response);
    this.handler.handle(req, res, appRequest)?.catch((error: unknown) => {
      const err = error instanceof Error ? error : new Error(String(error));
      this.logger.error(`Unexpected failure while serving ${req.method} ${req.url}: ${err.message}`, err.stack);
    });
  }
}

/**
 * A subclass per McpModule fixes the route path and version, which must be known when routes are
 * mapped, and carries the app's own class decorators without touching other modules' endpoints.
 */
export function createMcpController(
  path: string,
  version: McpEndpointVersion = VERSION_NEUTRAL,
  decorators: readonly ClassDecorator[] = [],
): Type<McpController> {
  @Controller({ path, version })
  class McpEndpointController extends McpController {}
  for (const decorate of decorators) decorate(McpEndpointController);
  return McpEndpointController;
}
