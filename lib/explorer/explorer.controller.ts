import { Controller, Get, Inject, Req, Res, VERSION_NEUTRAL, type Type } from '@nestjs/common';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { ResolvedMcpOptions } from '../interfaces/mcp-module-options.interface.js';
import type { McpEndpointVersion } from '../mcp.module-definition.js';
import { MCP_RESOLVED_OPTIONS } from '../mcp.constants.js';
import { nodeHttpOf } from '../transport/fastify.adapter.js';
import { OriginPolicy } from '../transport/origin-policy.js';
import { EXPLORER_CSP, explorerPage } from './explorer-page.js';

/**
 * Options of the explorer page (`McpModule.forRoot({ explorer: { path } })`).
 *
 * @publicApi
 */
export interface McpExplorerOptions {
  /** The page's path, relative to any global prefix, like the endpoint's. @default '<endpoint path>/explorer' */
  path?: string;
}

/** The page's path, or null when the explorer is off. */
export function resolveExplorerPath(option: boolean | McpExplorerOptions | undefined, endpoint: string): string | null {
  if (!option) return null;
  const path = (option === true ? undefined : option.path) ?? `${endpoint}/explorer`;
  return path.replace(/^\/+|\/+$/g, '');
}

const HEADERS = {
  'Content-Type': 'text/html; charset=utf-8',
  'Content-Security-Policy': EXPLORER_CSP,
  'Cache-Control': 'no-store',
  'X-Content-Type-Options': 'nosniff',
  'X-Frame-Options': 'DENY',
  'Referrer-Policy': 'no-referrer',
  'Cross-Origin-Opener-Policy': 'same-origin',
  'Cross-Origin-Resource-Policy': 'same-origin',
};

/**
 * A controller per McpModule serving its explorer page beside the endpoint, under the same
 * version and the app's controller decorators. The Host and Origin checks are the endpoint's
 * (DNS rebinding protection), so a page the endpoint would refuse is never served either.
 */
export function createExplorerController(
  pagePath: string,
  endpointPath: string,
  version: McpEndpointVersion = VERSION_NEUTRAL,
  decorators: readonly ClassDecorator[] = [],
): Type<unknown> {
  @Controller({ path: pagePath, version })
  class McpExplorerController {
    private readonly policy: OriginPolicy;

    constructor(@Inject(MCP_RESOLVED_OPTIONS) options: ResolvedMcpOptions) {
      this.policy = new OriginPolicy({ allowedOrigins: options.allowedOrigins, allowedHosts: options.allowedHosts });
    }

    @Get()
    page(@Req() request: IncomingMessage, @Res() response: ServerResponse): void {
      const { req, res } = nodeHttpOf(request, response);
      const verdict = this.policy.check(req);
      if (!verdict.ok) {
        res.writeHead(403, { 'Content-Type': 'text/plain; charset=utf-8', 'Cache-Control': 'no-store' });
        res.end(`${verdict.reason}\n`);
        return;
      }
      const body = explorerPage(endpointOf(req, pagePath, endpointPath));
      res.writeHead(200, { ...HEADERS, 'Content-Length': Buffer.byteLength(body) });
      res.end(body);
    }
  }
  for (const decorate of decorators) decorate(McpExplorerController);
  return McpExplorerController;
}

/**
 * The endpoint's URL path as the browser reaches it: whatever global prefix and URI version came
 * before the page's own path come before the endpoint's too.
 */
function endpointOf(req: IncomingMessage, pagePath: string, endpointPath: string): string {
  const path = ((req as { originalUrl?: string }).originalUrl ?? req.url ?? '').split('?')[0].replace(/\/+$/, '');
  const suffix = `/${pagePath}`.toLowerCase();
  const base = path.toLowerCase().endsWith(suffix) ? path.slice(0, path.length - suffix.length) : '';
  return `${base}/${endpointPath}`;
}
