import { exportJWK, generateKeyPair, type JWK } from 'jose';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import Provider, { type ClientMetadata } from 'oidc-provider';

/** A client of the authorization server: an agent getting tokens with client credentials. */
export interface AgentClient {
  clientId: string;
  clientSecret: string;
  /** The scopes it may be granted. */
  scope: string;
}

export interface AuthorizationServerOptions {
  /** Loopback port; 0 picks a free one. */
  port?: number;
  agents: AgentClient[];
  /** Scopes every resource server understands. */
  scopes: string[];
  /** Resources whose tokens are opaque (checked by introspection); the others get JWT access tokens. */
  opaqueResources?: string[];
  /** The client the MCP server uses at the introspection endpoint. */
  resourceServer?: { clientId: string; clientSecret: string };
}

/** A running authorization server (oidc-provider) on loopback. */
export interface AuthorizationServer {
  issuer: string;
  tokenEndpoint: string;
  /** The signing key (private JWK): only for tests that forge tokens "signed by the issuer". */
  signingKey: JWK;
  /** Requests served, by path (`/jwks`, `/token/introspection`, ...). */
  served: Map<string, number>;
  close(): Promise<void>;
}

/**
 * oidc-provider issuing client-credentials access tokens for a resource indicator (RFC 8707):
 * JWTs signed with ES256 (or opaque ones for `opaqueResources`), DPoP-bound when the token request
 * carries a DPoP proof (RFC 9449), with metadata (RFC 8414 / OpenID discovery), JWKS and
 * introspection (RFC 7662).
 */
export async function startAuthorizationServer(options: AuthorizationServerOptions): Promise<AuthorizationServer> {
  const { privateKey } = await generateKeyPair('ES256', { extractable: true });
  const signingKey = { ...(await exportJWK(privateKey)), kid: 'sample-es256', alg: 'ES256', use: 'sig' };
  const served = new Map<string, number>();
  let handler: (req: IncomingMessage, res: ServerResponse) => void = (_req, res) => res.writeHead(503).end();
  const server: Server = createServer((req, res) => {
    const path = new URL(req.url ?? '/', 'http://x').pathname;
    served.set(path, (served.get(path) ?? 0) + 1);
    handler(req, res);
  });
  await new Promise<void>((resolve) => server.listen(options.port ?? 0, '127.0.0.1', resolve));
  const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const opaque = new Set(options.opaqueResources ?? []);
  const clients: ClientMetadata[] = options.agents.map((agent) => ({
    client_id: agent.clientId,
    client_secret: agent.clientSecret,
    grant_types: ['client_credentials'],
    redirect_uris: [],
    response_types: [],
    scope: agent.scope,
    id_token_signed_response_alg: 'ES256',
  }));
  if (options.resourceServer) {
    clients.push({
      client_id: options.resourceServer.clientId,
      client_secret: options.resourceServer.clientSecret,
      grant_types: [],
      redirect_uris: [],
      response_types: [],
      id_token_signed_response_alg: 'ES256',
    });
  }
  const provider = new Provider(issuer, {
    clients,
    jwks: { keys: [signingKey] },
    scopes: options.scopes,
    ttl: { ClientCredentials: 600 },
    features: {
      devInteractions: { enabled: false },
      clientCredentials: { enabled: true },
      introspection: {
        enabled: true,
        allowedPolicy: async (ctx) => ctx.oidc.client?.clientId === options.resourceServer?.clientId,
      },
      dPoP: { enabled: true },
      resourceIndicators: {
        enabled: true,
        defaultResource: () => undefined as unknown as string,
        getResourceServerInfo: (_ctx, resource) => ({
          scope: options.scopes.join(' '),
          audience: resource,
          accessTokenTTL: 600,
          ...(opaque.has(resource)
            ? { accessTokenFormat: 'opaque' as const }
            : { accessTokenFormat: 'jwt' as const, jwt: { sign: { alg: 'ES256' } } }),
        }),
      },
    },
  });
  const callback = provider.callback();
  // Koa answers its own errors (ctx.onerror): the promise of a request never rejects.
  handler = (req, res) => void callback(req, res);
  return {
    issuer,
    tokenEndpoint: `${issuer}/token`,
    signingKey,
    served,
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.close((error) => (error ? reject(error) : resolve()));
        server.closeAllConnections();
      }),
  };
}
