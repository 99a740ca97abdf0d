import { Controller, Get, Inject, Next, Optional, Req, Res, VERSION_NEUTRAL, type Type } from '@nestjs/common';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { McpAuthenticator } from '../auth/mcp-authenticator.js';
import { MCP_AUTHENTICATOR } from '../mcp.constants.js';

/**
 * RFC 9728 protected-resource metadata at `/.well-known/oauth-protected-resource{/path}`, where
 * clients discover which authorization server issues tokens for this MCP server. Requests for
 * another path fall through, so several McpModules can each publish their own document.
 */
export class McpMetadataController {
  constructor(@Optional() @Inject(MCP_AUTHENTICATOR) private readonly auth?: McpAuthenticator | null) {}

  @Get(['oauth-protected-resource', 'oauth-protected-resource/*path'])
  metadata(@Req() req: IncomingMessage, @Res() res: ServerResponse, @Next() next: (err?: unknown) => void): void {
    const path = (req.url ?? '').split('?')[0].replace(/\/+$/, '');
    if (!this.auth || !path.endsWith(this.auth.metadataPath)) return next();
    const body = JSON.stringify(this.auth.metadata());
    res.writeHead(200, {
      'Content-Type': 'application/json',
      'Content-Length': Buffer.byteLength(body),
      'Access-Control-Allow-Origin': '*',
      'Cache-Control': 'public, max-age=3600',
    });
    res.end(body);
  }
}

/** A subclass per McpModule, version-neutral, with the app's own class decorators (see createMcpController). */
export function createMcpMetadataController(decorators: readonly ClassDecorator[] = []): Type<McpMetadataController> {
  @Controller({ path: '.well-known', version: VERSION_NEUTRAL })
  class McpProtectedResourceController extends McpMetadataController {}
  for (const decorate of decorators) decorate(McpProtectedResourceController);
  return McpProtectedResourceController;
}
