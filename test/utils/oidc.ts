/**
 * A real OAuth 2.0 authorization server for the client's credential tests: `oidc-provider`
 * (a devDependency) on a free port, with the client credentials grant, JWT access tokens per
 * resource (RFC 8707), and the RFC 8693 token exchange grant registered on it. It counts what it
 * issued, so tests see caching from the server's side.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createLocalJWKSet, decodeJwt, jwtVerify } from 'jose';
import Provider, { errors } from 'oidc-provider';

const TOKEN_EXCHANGE = 'urn:ietf:params:oauth:grant-type:token-exchange';
/** The audience of tokens callers present to the app (the gateway). */
export const APP_AUDIENCE = 'urn:test:gateway';
/** The audience of the upstream MCP server. */
export const UPSTREAM_AUDIENCE = 'urn:test:upstream';

export interface TestAuthServer {
  issuer: string;
  tokenEndpoint: string;
  /** Token exchanges done, by the subject's `sub`. */
  exchanges: Map<string, number>;
  /** Client credentials grants done, by client id. */
  clientGrants: Map<string, number>;
  /** A client credentials token of `clientId` (a principal: its `sub` is the client id) for `audience`. */
  tokenFor(clientId: string, audience?: string): Promise<string>;
  close(): Promise<void>;
}

const CLIENTS = ['gateway', 'alice', 'bob', 'mallory'];

export async function startAuthServer(options: { ttlSeconds?: number } = {}): Promise<TestAuthServer> {
  const server: Server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const exchanges = new Map<string, number>();
  const clientGrants = new Map<string, number>();
  const ttl = options.ttlSeconds ?? 300;
  const provider = new Provider(issuer, {
    clients: CLIENTS.map((id) => ({
      client_id: id,
      client_secret: `${id}-secret`,
      grant_types: ['client_credentials', TOKEN_EXCHANGE],
      response_types: [],
      redirect_uris: [],
    })),
    features: {
      devInteractions: { enabled: false },
      clientCredentials: { enabled: true },
      resourceIndicators: {
        enabled: true,
        defaultResource: () => APP_AUDIENCE,
        useGrantedResource: () => true,
        getResourceServerInfo: (_ctx: unknown, resource: string) => {
          if (resource !== APP_AUDIENCE && resource !== UPSTREAM_AUDIENCE) throw new errors.InvalidTarget();
          return { scope: 'mcp', audience: resource, accessTokenTTL: ttl, accessTokenFormat: 'jwt' };
        },
      },
    },
    ttl: { ClientCredentials: ttl, AccessToken: ttl },
    // The exchange handler below names the subject on the context; its token carries it.
    extraTokenClaims: (ctx: { exchangeSubject?: string; oidc?: { client?: { clientId: string } } }) =>
      ctx.exchangeSubject ? { on_behalf_of: ctx.exchangeSubject, act: { sub: ctx.oidc?.client?.clientId } } : undefined,
  });
  // The typings' listener type knows no params on the context; the grant's params are there at runtime.
  provider.on('grant.success', (ctx: any) => {
    if (ctx.oidc.params.grant_type === 'client_credentials')
      clientGrants.set(ctx.oidc.client.clientId, (clientGrants.get(ctx.oidc.client.clientId) ?? 0) + 1);
  });
  const jwks = async () => createLocalJWKSet((await (await fetch(`${issuer}/jwks`)).json()) as { keys: [] });

  // RFC 8693: the subject token must be one this server issued for the app; the new token is for
  // the requested resource, with the subject as `sub` and the exchanging client as `act`.
  provider.registerGrantType(
    TOKEN_EXCHANGE,
    async (ctx: any) => {
      const { params, client } = ctx.oidc;
      let subject: Record<string, unknown>;
      try {
        ({ payload: subject } = await jwtVerify(params.subject_token, await jwks(), {
          issuer,
          audience: APP_AUDIENCE,
        }));
      } catch (error) {
        throw new errors.InvalidGrant(`subject_token rejected: ${(error as Error).message}`);
      }
      const resource = params.resource ?? params.audience;
      if (resource !== UPSTREAM_AUDIENCE) throw new errors.InvalidTarget('only the upstream may be asked for');
      const sub = String(subject.sub);
      exchanges.set(sub, (exchanges.get(sub) ?? 0) + 1);
      ctx.exchangeSubject = sub;
      const token = new provider.ClientCredentials({ client, scope: 'mcp' });
      // A resource server as the resource-indicator hook returns one (the typings want a full instance).
      token.resourceServer = {
        scope: 'mcp',
        audience: UPSTREAM_AUDIENCE,
        accessTokenTTL: ttl,
        accessTokenFormat: 'jwt',
      } as any;
      const value = await token.save();
      ctx.body = {
        access_token: value,
        issued_token_type: 'urn:ietf:params:oauth:token-type:access_token',
        token_type: 'Bearer',
        expires_in: token.expiration,
      };
    },
    [
      'subject_token',
      'subject_token_type',
      'requested_token_type',
      'resource',
      'audience',
      'scope',
      'actor_token',
      'actor_token_type',
    ],
  );
  const callback = provider.callback();
  // Koa answers its own errors (ctx.onerror): the promise of a request never rejects.
  server.on('request', (req, res) => void callback(req, res));

  return {
    issuer,
    tokenEndpoint: `${issuer}/token`,
    exchanges,
    clientGrants,
    async tokenFor(clientId, audience = APP_AUDIENCE) {
      const response = await fetch(`${issuer}/token`, {
        method: 'POST',
        headers: {
          'content-type': 'application/x-www-form-urlencoded',
          authorization: `Basic ${Buffer.from(`${clientId}:${clientId}-secret`).toString('base64')}`,
        },
        body: new URLSearchParams({ grant_type: 'client_credentials', resource: audience, scope: 'mcp' }),
      });
      const body = (await response.json()) as { access_token?: string; error_description?: string };
      if (!body.access_token)
        throw new Error(`the test authorization server refused a token for ${clientId}: ${JSON.stringify(body)}`);
      return body.access_token;
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** The claims of a JWT, unverified (the test reads what the upstream received). */
export function claimsOf(bearer: string | null | undefined): Record<string, unknown> {
  if (!bearer) return {};
  return decodeJwt(bearer.replace(/^Bearer /, '')) as Record<string, unknown>;
}
