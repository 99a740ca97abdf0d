import { Controller, Get, Inject, Req, Res, VERSION_NEUTRAL, type Type } from '@nestjs/common';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { McpEndpointVersion } from '../transport/endpoint-version.js';
import { MCP_ORIGIN_POLICY } from '../common/mcp.constants.js';
import { nodeHttpOf } from '../transport/fastify.adapter.js';
import type { OriginPolicy } from '../transport/origin-policy.js';
import { EXPLORER_CSP, explorerPage } from './explorer-page.js';

/**
 * Options of the explorer page (`McpModule.forRoot({ explorer: { path } })`).
 *
 * @publicApi
 */
export interface McpExplorerOptions {
  /** The page's path, relative to any global prefix, like the endpoint's. @default '<endpoint path>/explorer' */
  path?: string;
  /**
   * Serve the page through Nest's router with exactly these class decorators (the app's guards,
   * interceptors, `@Public()`-style markers) instead of beside it. By default the page is
   * public, like the protected-resource metadata: a browser opening it cannot send a bearer
   * token, and the page holds nothing to protect (its calls carry the token pasted in it and
   * pass the endpoint's auth). The endpoint's `controllerDecorators` never apply to it.
   */
  decorators?: ClassDecorator[];
}

/** The explorer as McpModule serves it: its path, and the decorators that put it behind Nest's router. */
export interface ResolvedExplorer {
  path: string;
  /** Undefined: served beside the router, public. */
  decorators?: readonly ClassDecorator[];
}

/** The page's path and how it is served, or null when the explorer is off. */
export function resolveExplorer(
  option: boolean | McpExplorerOptions | undefined,
  endpoint: string,
): ResolvedExplorer | null {
  if (!option) return null;
  const given = option === true ? {} : option;
  if (given.decorators !== undefined && !Array.isArray(given.decorators)) {
    throw new Error(
      'McpModule explorer.decorators must be an array of class decorators, e.g. { explorer: { decorators: [UseGuards(DevOnlyGuard)] } }; leave it out to serve the page publicly.',
    );
  }
  const path = (given.path ?? `${endpoint}/explorer`).replace(/^\/+|\/+$/g, '');
  return given.decorators ? { path, decorators: given.decorators } : { path };
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
 * Writes the page for the endpoint at `endpointUrl`, behind the endpoint's Host and Origin checks
 * (DNS rebinding protection): a page the endpoint would refuse is never served either.
 */
export function writeExplorerPage(
  req: IncomingMessage,
  res: ServerResponse,
  policy: OriginPolicy,
  endpointUrl: string,
): void {
  const verdict = policy.check(req);
  if (!verdict.ok) {
    res.writeHead(403, { 'Content-Type': 'text/plain; charset=utf-8', 'Cache-Control': 'no-store' });
    res.end(`${verdict.reason}\n`);
    return;
  }
  const body = explorerPage(endpointUrl);
  res.writeHead(200, { ...HEADERS, 'Content-Length': Buffer.byteLength(body) });
  res.end(body);
}

/**
 * The explorer behind Nest's router (`explorer.decorators` given): a controller per McpModule,
 * under the endpoint's version and exactly the decorators the app gave for the page.
 */
export function createExplorerController(
  pagePath: string,
  endpointPath: string,
  version: McpEndpointVersion = VERSION_NEUTRAL,
  decorators: readonly ClassDecorator[] = [],
): Type<unknown> {
  @Controller({ path: pagePath, version })
  class McpExplorerController {
    // The endpoint's Host/Origin policy.
    constructor(@Inject(MCP_ORIGIN_POLICY) private readonly policy: OriginPolicy) {}

    @Get()
    page(@Req() request: IncomingMessage, @Res() response: ServerResponse): void {
      const { req, res } = nodeHttpOf(request, response);
      writeExplorerPage(req, res, this.policy, endpointOf(req, pagePath, endpointPath));
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
