import { Controller, Get, Injectable, Module, Next, Req, Res, VERSION_NEUTRAL } from '@nestjs/common';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { McpAuthenticator } from '../auth/mcp-authenticator.js';
import { isFastifyReply, nodeHttpOf } from './fastify.adapter.js';

/** The protected-resource documents of every McpModule of the app that has `auth` set. */
@Injectable()
export class McpMetadataDocuments {
  private readonly authenticators = new Set<McpAuthenticator>();

  add(auth: McpAuthenticator): void {
    this.authenticators.add(auth);
  }

  find(path: string): McpAuthenticator | undefined {
    for (const auth of this.authenticators) if (path.endsWith(auth.metadataPath)) return auth;
    return undefined;
  }
}

/**
 * Resource paths up to this many segments deep get their document (`/mcp`, `/api/v1/mcp`).
 * Named parameters are the one path syntax that Express (path-to-regexp) and Fastify
 * (find-my-way) both read the same way: a wildcard is written differently on each.
 */
const MAX_RESOURCE_PATH_SEGMENTS = 8;
const ROUTES = Array.from({ length: MAX_RESOURCE_PATH_SEGMENTS + 1 }, (_, depth) =>
  ['oauth-protected-resource', ...Array.from({ length: depth }, (_, i) => `:segment${i}`)].join('/'),
);

/**
 * RFC 9728 protected-resource metadata at `/.well-known/oauth-protected-resource{/path}`, where
 * clients discover which authorization server issues tokens for this MCP server. One controller
 * serves the documents of all McpModules (a route may be declared once on Fastify); requests for
 * another path fall through to the app's next route or its 404.
 */
@Controller({ path: '.well-known', version: VERSION_NEUTRAL })
export class McpMetadataController {
  constructor(private readonly documents: McpMetadataDocuments) {}

  @Get(ROUTES)
  metadata(@Req() request: IncomingMessage, @Res() response: ServerResponse, @Next() next: (err?: unknown) => void): void {
    const path = (request.url ?? '').split('?')[0].replace(/\/+$/, '');
    const auth = this.documents.find(path);
    if (!auth) return isFastifyReply(response) ? response.callNotFound() : next();
    const { res } = nodeHttpOf(request, response);
    const body = JSON.stringify(auth.metadata());
    res.writeHead(200, {
      'Content-Type': 'application/json',
      'Content-Length': Buffer.byteLength(body),
      'Access-Control-Allow-Origin': '*',
      'Cache-Control': 'public, max-age=3600',
    });
    res.end(body);
  }
}

const applied = new WeakSet<ClassDecorator>();

/**
 * Applies McpModule's `controllerDecorators` to the shared metadata controller, each decorator
 * once (a `UseGuards` applied twice would run its guard twice).
 */
export function decorateMcpMetadataController(decorators: readonly ClassDecorator[]): void {
  for (const decorate of decorators) {
    if (applied.has(decorate)) continue;
    applied.add(decorate);
    decorate(McpMetadataController);
  }
}

/** Imported by every McpModule; a static module, so its controller is mapped once per app. */
@Module({ controllers: [McpMetadataController], providers: [McpMetadataDocuments], exports: [McpMetadataDocuments] })
export class McpMetadataModule {}
