import { Catch, HttpException, Inject, Optional, type ArgumentsHost, type ExceptionFilter } from '@nestjs/common';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { McpAuthenticator, carriesBearer, guardRefusalMessage } from '../auth/mcp-authenticator.js';
import { MCP_AUTHENTICATOR } from '../common/mcp.constants.js';
import { httpExceptionMessage } from '../protocol/errors.js';
import { ErrorCode, failure } from '../protocol/json-rpc.js';
import { nodeHttpOf } from './fastify.adapter.js';

/**
 * Guards on the MCP route (an app's passport AuthGuard, a throttler) throw HttpExceptions before
 * the endpoint runs. This filter, scoped to the MCP controller, answers them the way MCP clients
 * expect: a JSON-RPC error body and, for 401/403 with auth configured, the bearer challenge that
 * points clients at the protected-resource metadata.
 */
@Catch(HttpException)
export class McpHttpExceptionFilter implements ExceptionFilter {
  constructor(@Optional() @Inject(MCP_AUTHENTICATOR) private readonly auth?: McpAuthenticator | null) {}

  catch(exception: HttpException, host: ArgumentsHost): void {
    const { req, res } = nodeHttpOf(
      host.switchToHttp().getRequest<IncomingMessage>(),
      host.switchToHttp().getResponse<ServerResponse>(),
    );
    if (res.headersSent) return void res.end();
    const status = exception.getStatus();
    const guardMessage = httpExceptionMessage(exception);
    const bearer = carriesBearer(req?.headers?.authorization);
    if (status === 401 || status === 403) {
      const message = guardRefusalMessage(status, guardMessage, bearer, this.auth?.resource);
      // RFC 6750 §3.1: a request that carried no credentials gets a challenge without an error code.
      if (this.auth)
        return this.auth.challenge(
          res,
          status,
          status === 403 ? 'insufficient_scope' : bearer ? 'invalid_token' : undefined,
          message,
        );
      return this.write(res, status, message);
    }
    this.write(res, status, guardMessage ?? exception.message);
  }

  private write(res: ServerResponse, status: number, message: string): void {
    const body = JSON.stringify(failure(null, ErrorCode.InvalidRequest, message));
    res.writeHead(status, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(body) });
    res.end(body);
  }
}
