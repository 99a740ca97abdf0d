import type { McpPrincipal } from '../protocol/principal.js';
import type {
  McpClaimsMapper,
  McpDpopOptions,
  McpIntrospectionOptions,
  McpJwtVerificationOptions,
} from '../oauth/oauth-options.interface.js';

export type { McpPrincipal };
export { missingScopes } from '../protocol/principal.js';

/**
 * The MCP server as an OAuth 2.1 resource server (RFC 9728 protected-resource metadata, bearer
 * challenges, audience-checked tokens).
 *
 * @publicApi
 */
export interface McpAuthOptions {
  /**
   * This server's canonical URI, the audience tokens must be issued for, e.g.
   * `https://api.example.com/mcp`. Also the `resource` of the metadata document.
   */
  resource: string;
  /** Authorization servers that issue tokens for this resource (at least one). */
  authorizationServers: string[];
  /** Scopes this resource understands; advertised and sent in 401 challenges. */
  scopesSupported?: string[];
  /** A human-readable name for the metadata document. */
  resourceName?: string;
  /**
   * Verifies a bearer token (signature, expiry, and that its audience is `resource`) and returns
   * the principal, or null when the token is invalid. Without it the principal is read from the
   * request after the app's own guard ran (`request.user`, as passport sets it).
   */
  verifyToken?: (
    token: string,
    request: unknown,
  ) => McpPrincipal | null | undefined | Promise<McpPrincipal | null | undefined>;
  /**
   * Reads the principal from a request the app's own guard authenticated: the request that guard
   * saw (Express's `req`, Fastify's request), where it set `user`.
   * @default (request) => principalFromUser(request.user)
   */
  principalFrom?: (request: unknown) => McpPrincipal | null | undefined;
  /**
   * Built-in verification of JWT access tokens (signature against the issuer's JWKS, issuer,
   * audience = `resource`, expiry, algorithms); used instead of `verifyToken`. Needs `jose`.
   */
  jwt?: McpJwtVerificationOptions;
  /** Built-in verification of opaque access tokens by RFC 7662 introspection; used instead of `verifyToken`. */
  introspection?: McpIntrospectionOptions;
  /**
   * DPoP (RFC 9449) for tokens bound to a key (`cnf.jkt`), which are always checked by the built-in
   * verification; this option sets its rules, requires DPoP for all tokens (`required`) and
   * advertises it in the metadata document and the challenges. Needs `jwt` or `introspection`.
   */
  dpop?: McpDpopOptions;
  /**
   * Maps the verified claims (JWT payload, introspection answer) of the built-in verification to
   * the principal; null, or a principal without a non-empty string `id`, refuses the token. The
   * default id is `sub`, else `client:<client_id>`, qualified as `<iss>#…` when several issuers
   * are accepted.
   * @default {@link principalFromClaims}
   */
  principal?: McpClaimsMapper;
}

/**
 * A passport-style `request.user` turned into a principal: `id` from `sub`, `id`, `userId` or
 * `username` (the first present), `scopes` from `scopes` (an array), `scope` (space-separated, as
 * OAuth writes it) or `scp`, and the whole user object as `claims`.
 *
 * @publicApi
 */
export function principalFromUser(user: unknown): McpPrincipal | undefined {
  if (typeof user !== 'object' || user === null) return undefined;
  const record = user as Record<string, unknown>;
  const id = record.sub ?? record.id ?? record.userId ?? record.username;
  if (typeof id !== 'string' && typeof id !== 'number') return undefined;
  const raw = record.scopes ?? record.scope ?? record.scp;
  const scopes = Array.isArray(raw)
    ? raw.map(String)
    : typeof raw === 'string'
      ? raw.split(' ').filter(Boolean)
      : undefined;
  return { id: String(id), scopes, claims: record };
}
