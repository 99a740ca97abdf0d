import type { McpPrincipal } from '../protocol/principal.js';

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

/** A JSON Web Key Set as the issuer publishes it (`{ keys: [...] }`). */
export interface McpJsonWebKeySet {
  keys: Array<Record<string, unknown>>;
}

/**
 * Built-in verification of JWT access tokens (RFC 9068) with `jose`: signature against the
 * issuer's JWKS, issuer, audience (this resource, RFC 8707), `exp`/`nbf`, allowed algorithms.
 *
 * @publicApi
 */
export interface McpJwtVerificationOptions {
  /**
   * The accepted issuers (`iss`), exactly as the authorization server writes them.
   * @default auth.authorizationServers
   */
  issuer?: string | string[];
  /**
   * Where the issuer publishes its keys. Without it (and without `jwks`) the `jwks_uri` is read
   * from the issuer's metadata (RFC 8414 `/.well-known/oauth-authorization-server`, then OpenID
   * discovery `/.well-known/openid-configuration`). Only with a single issuer.
   */
  jwksUri?: string;
  /** A fixed key set (no fetching at all): for keys delivered with the configuration. */
  jwks?: McpJsonWebKeySet;
  /**
   * The audiences (`aud`) a token must name one of: this resource's canonical URI unless the
   * provider stamps another identifier (Auth0's API identifier, Entra ID's `api://<app-id>`).
   * @default auth.resource
   */
  audience?: string | string[];
  /**
   * Signature algorithms accepted. Asymmetric only: `none` and the HMAC family (`HS*`) are refused
   * at bootstrap, so a token "signed" with the issuer's public key as an HMAC secret never verifies.
   * @default ['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512', 'ES256', 'ES384', 'ES512', 'EdDSA']
   */
  algorithms?: string[];
  /**
   * Seconds of clock difference allowed on `exp` and `nbf`.
   * @default 30
   */
  clockToleranceS?: number;
  /** The JWS `typ` a token must carry, e.g. `at+jwt` (RFC 9068); any when unset. */
  typ?: string;
  /**
   * How long a fetched JWKS is used before it is fetched again.
   * @default 600000 (10 minutes)
   */
  jwksCacheMs?: number;
  /**
   * The least time between two JWKS fetches triggered by a `kid` the cached set lacks: forged
   * `kid`s make the server fetch at most once per this interval, whatever their number. A failed
   * metadata or JWKS fetch is also not retried within it (requests meanwhile get its 503).
   * @default 30000
   */
  jwksRefreshCooldownMs?: number;
  /**
   * How long a metadata or JWKS fetch may take before the request is answered 503.
   * @default 5000
   */
  fetchTimeoutMs?: number;
}

/**
 * Opaque access tokens checked at the authorization server's RFC 7662 introspection endpoint.
 *
 * @publicApi
 */
export interface McpIntrospectionOptions {
  /** The introspection endpoint; else `introspection_endpoint` of the first authorization server's metadata. */
  endpoint?: string;
  /** This resource server's client id at the authorization server (HTTP Basic authentication). */
  clientId?: string;
  /** Its client secret (HTTP Basic authentication, RFC 7662 §2.1). */
  clientSecret?: string;
  /** Other headers for the introspection request (a bearer token of this resource server, for example). */
  headers?: Record<string, string>;
  /**
   * How long an active answer is reused; never past the token's `exp`.
   * @default 60000
   */
  cacheTtlMs?: number;
  /**
   * Answers held in memory (oldest dropped first). With `redis` the cache is in Redis instead,
   * each entry expiring with the token.
   * @default 10000
   */
  cacheMaxEntries?: number;
  /**
   * How long the introspection request may take before the request is answered 503.
   * @default 5000
   */
  timeoutMs?: number;
  /**
   * The largest introspection answer read, in bytes; a longer one is refused (503) rather than
   * held in memory.
   * @default 65536
   */
  maxResponseBytes?: number;
}

/**
 * DPoP (RFC 9449): a token bound to a key (`cnf.jkt`) is accepted only with a proof signed by that
 * key for this very request.
 *
 * @publicApi
 */
export interface McpDpopOptions {
  /**
   * Refuse tokens not bound to a key (every caller must use DPoP).
   * @default false
   */
  required?: boolean;
  /**
   * Proof signature algorithms accepted (asymmetric only), advertised as
   * `dpop_signing_alg_values_supported` and in the challenge's `algs`.
   * @default ['ES256', 'ES384', 'ES512', 'PS256', 'PS384', 'PS512', 'RS256', 'EdDSA']
   */
  algorithms?: string[];
  /**
   * How old (by its `iat`) a proof may be; also how long its `jti` is remembered to refuse replays.
   * @default 60
   */
  proofMaxAgeS?: number;
  /**
   * Seconds a proof's `iat` may lie in the future (client clock ahead).
   * @default 5
   */
  clockSkewS?: number;
  /**
   * Require server-issued nonces (`DPoP-Nonce`, `use_dpop_nonce`): a proof is then fresh by the
   * server's clock, not the client's. Nonces are HMACs of a time slot under the request-state
   * secret, so every instance sharing it accepts them.
   * @default false
   */
  nonce?: boolean;
  /**
   * How long a nonce stays valid (it is accepted for one more such period after it is replaced).
   * @default 60
   */
  nonceLifetimeS?: number;
  /**
   * Proof `jti`s remembered in memory (without `redis`); when full of live entries, proofs are
   * refused with 503 rather than a replay let through.
   * @default 100000
   */
  replayMaxEntries?: number;
}

/**
 * Maps verified claims (a JWT's payload, an introspection answer) to the principal; it must give a
 * non-empty string `id` (else the token is refused).
 * @default id `sub`, else `client:<client_id>`, as `<iss>#<that>` when several issuers are accepted; scopes from `scope` (space-separated) or `scp`, all claims as `claims`
 */
export type McpClaimsMapper = (claims: Record<string, unknown>) => McpPrincipal | null | undefined;
