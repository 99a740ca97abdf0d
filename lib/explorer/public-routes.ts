import { Inject, Injectable } from '@nestjs/common';
import { ApplicationConfig, HttpAdapterHost } from '@nestjs/core';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { McpAuthenticator } from '../auth/mcp-authenticator.js';
import { writeExplorerPage, type ResolvedExplorer } from './explorer.controller.js';
import {
  MCP_AUTHENTICATOR,
  MCP_ENDPOINT_PATH,
  MCP_ENDPOINT_VERSION,
  MCP_EXPLORER,
  MCP_ORIGIN_POLICY,
} from '../common/mcp.constants.js';
import type { McpEndpointVersion } from '../transport/endpoint-version.js';
import { nodeHttpOf } from '../transport/fastify.adapter.js';
import { routeBases } from '../transport/route-bases.js';
import type { OriginPolicy } from '../transport/origin-policy.js';

/** The members of Nest's Express and Fastify adapters these routes use. */
interface RouteAdapter {
  get(path: string, handler: (req: unknown, res: unknown) => void): unknown;
  getInstance(): object;
}

/** Paths served beside the router on each HTTP server, with who serves them (one route per path). */
const served = new WeakMap<object, Map<string, string>>();

/**
 * Path characters that Express's path-to-regexp and Fastify's find-my-way both take literally.
 * Others (`:`, `*`, `(`...) are pattern syntax on one of them.
 */
const LITERAL_PATH = /^[A-Za-z0-9\-._~%/@]*$/;

/**
 * The routes McpModule serves beside Nest's router, on the HTTP server itself: no global prefix,
 * version, guard, interceptor or filter of the app reaches them. They are public by nature:
 *
 * - the RFC 9728 protected-resource metadata, exactly where the bearer challenge says
 *   (`/.well-known/oauth-protected-resource` + the path of `auth.resource`), since a client reads
 *   it before it has any token, and a global prefix or auth guard would hide it;
 * - the explorer page (unless `explorer.decorators` puts it behind the router), which a browser
 *   opens without a token and whose calls carry the pasted token through the endpoint's auth.
 */
@Injectable()
export class McpPublicRoutes {
  constructor(
    private readonly adapterHost: HttpAdapterHost,
    private readonly config: ApplicationConfig,
    @Inject(MCP_AUTHENTICATOR) private readonly auth: McpAuthenticator | null,
    @Inject(MCP_ENDPOINT_PATH) private readonly path: string,
    @Inject(MCP_ENDPOINT_VERSION) private readonly version: McpEndpointVersion,
    @Inject(MCP_ORIGIN_POLICY) private readonly policy: OriginPolicy,
    @Inject(MCP_EXPLORER) private readonly explorer: ResolvedExplorer | null,
  ) {}

  /** Called from McpModule's `configure()`: before Nest maps its routes and its 404 handler. */
  register(): void {
    const adapter = this.adapterHost?.httpAdapter as RouteAdapter | undefined;
    if (!adapter || typeof adapter.get !== 'function') return;
    if (this.auth) this.serveMetadata(adapter, this.auth);
    const explorer = this.explorer;
    if (explorer && !explorer.decorators) {
      for (const base of routeBases(this.config, this.version)) {
        const endpoint = `${base}/${this.path}`;
        serve(adapter, `${base}/${explorer.path}`, `the explorer of the MCP endpoint ${endpoint}`, (req, res) =>
          writeExplorerPage(req, res, this.policy, endpoint),
        );
      }
    }
  }

  private serveMetadata(adapter: RouteAdapter, auth: McpAuthenticator): void {
    const path = auth.metadataPath;
    if (!LITERAL_PATH.test(path)) {
      throw new Error(
        `McpModule auth.resource "${auth.resource}" has a path that cannot be a route on both Express and Fastify (${path}): use letters, digits and "-", ".", "_", "~", "@" in its path.`,
      );
    }
    const body = JSON.stringify(auth.metadata());
    serve(adapter, path, `the protected-resource metadata of ${auth.resource}`, (_req, res) => {
      res.writeHead(200, {
        'Content-Type': 'application/json',
        'Content-Length': Buffer.byteLength(body),
        'Access-Control-Allow-Origin': '*',
        'Cache-Control': 'public, max-age=3600',
      });
      res.end(body);
    });
  }
}

/**
 * Adds a GET route on the HTTP server (HEAD comes with it on both platforms). The same owner
 * twice is one route (two McpModules for one resource); two owners of one path fail the
 * bootstrap, naming both, where Fastify would refuse the second route and Express would hide it.
 */
function serve(
  adapter: RouteAdapter,
  path: string,
  owner: string,
  write: (req: IncomingMessage, res: ServerResponse) => void,
): void {
  const instance = adapter.getInstance();
  let paths = served.get(instance);
  if (!paths) served.set(instance, (paths = new Map()));
  const existing = paths.get(path);
  if (existing === owner) return;
  if (existing !== undefined)
    throw new Error(
      `McpModule cannot serve ${owner} at ${path}: ${existing} is already there. Give the second McpModule another path (or auth.resource).`,
    );
  paths.set(path, owner);
  adapter.get(path, (request, response) => {
    const { req, res } = nodeHttpOf(request, response);
    write(req, res);
  });
}
