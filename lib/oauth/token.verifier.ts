import type { IncomingHttpHeaders } from 'node:http';
import type { McpPrincipal } from '../protocol/principal.js';
import type { McpAuthOptions } from './oauth-options.interface.js';
import type { McpRedisClient } from '../redis/redis-client.js';
import {
  DEFAULT_DPOP_ALGORITHMS,
  DpopVerifier,
  MemoryDpopReplayStore,
  RedisDpopReplayStore,
  type McpRequestTarget,
} from './dpop.verifier.js';
import { IntrospectionVerifier } from './introspection.verifier.js';
import { IssuerMetadata } from './issuer-metadata.js';
import { DEFAULT_JWT_ALGORITHMS, JwtAccessTokenVerifier } from './jwt.verifier.js';
import { McpTokenRefusal } from './oauth-refusal.js';
import { MemoryIntrospectionCache, RedisIntrospectionCache } from './token-cache.js';

/** A numeric option's accepted range and what it means, for the bootstrap's error. */
type NumericRule = [
  option: string,
  value: number | undefined,
  min: number,
  max: number,
  integer: boolean,
  meaning: string,
];

/**
 * Every numeric option of the built-in verification, checked at bootstrap: a NaN, an infinite or
 * an absurd value (a tolerance of 1e9 s accepts expired tokens, a negative one refuses every
 * token) fails the bootstrap naming the option rather than silently weakening or breaking it.
 */
function assertNumericOptions(auth: McpAuthOptions): void {
  const { jwt, introspection, dpop } = auth;
  const rules: NumericRule[] = [
    [
      'auth.jwt.clockToleranceS',
      jwt?.clockToleranceS,
      0,
      600,
      false,
      'seconds of clock difference allowed on exp and nbf',
    ],
    ['auth.jwt.jwksCacheMs', jwt?.jwksCacheMs, 0, 86_400_000, true, 'how long a fetched JWKS is used'],
    [
      'auth.jwt.jwksRefreshCooldownMs',
      jwt?.jwksRefreshCooldownMs,
      0,
      3_600_000,
      true,
      'the least time between two JWKS or metadata fetches',
    ],
    ['auth.jwt.fetchTimeoutMs', jwt?.fetchTimeoutMs, 1, 120_000, true, 'how long a metadata or JWKS fetch may take'],
    [
      'auth.introspection.cacheTtlMs',
      introspection?.cacheTtlMs,
      0,
      86_400_000,
      true,
      'how long an active answer is reused',
    ],
    [
      'auth.introspection.cacheMaxEntries',
      introspection?.cacheMaxEntries,
      0,
      10_000_000,
      true,
      'answers held in memory',
    ],
    [
      'auth.introspection.timeoutMs',
      introspection?.timeoutMs,
      1,
      120_000,
      true,
      'how long the introspection request may take',
    ],
    [
      'auth.introspection.maxResponseBytes',
      introspection?.maxResponseBytes,
      256,
      16_777_216,
      true,
      'the largest introspection answer read',
    ],
    [
      'auth.dpop.proofMaxAgeS',
      dpop?.proofMaxAgeS,
      1,
      3_600,
      false,
      'how old a proof may be, and how long its jti is remembered',
    ],
    ['auth.dpop.clockSkewS', dpop?.clockSkewS, 0, 300, false, "seconds a proof's iat may lie in the future"],
    ['auth.dpop.nonceLifetimeS', dpop?.nonceLifetimeS, 1, 86_400, true, 'how long a DPoP nonce stays valid'],
    ['auth.dpop.replayMaxEntries', dpop?.replayMaxEntries, 1, 10_000_000, true, 'proof jtis remembered in memory'],
  ];
  for (const [option, value, min, max, integer, meaning] of rules) {
    if (value === undefined) continue;
    if (
      typeof value !== 'number' ||
      !Number.isFinite(value) ||
      value < min ||
      value > max ||
      (integer && !Number.isInteger(value))
    ) {
      throw new Error(
        `McpModule: ${option} is ${typeof value === 'number' ? String(value) : JSON.stringify(value)}; it must be ${integer ? 'an integer' : 'a finite number'} from ${min} to ${max} (${meaning}). Fix it, or leave it out for the default.`,
      );
    }
  }
}

/** What the built-in verification may share across instances. */
export interface McpTokenVerifierDeps {
  /** The module's Redis (a store view and its key prefix), when `redis` is configured. */
  redis?: { client: (store: string) => McpRedisClient; prefix: string };
  /** Signs DPoP nonces; every instance of one endpoint must share it (the request-state secret). */
  nonceSecret: Buffer;
}

/** What a verified request carries on: the principal and headers for the answer (a fresh `DPoP-Nonce`). */
export interface McpVerifiedToken {
  principal: McpPrincipal;
  headers?: Record<string, string>;
}

/** How {@link principalFromClaims} forms ids. */
export interface McpPrincipalIdOptions {
  /**
   * Qualify every id by its issuer (`<iss>#<sub>`): set when several authorization servers are
   * accepted, so one issuer's `alice` is never another's.
   */
  qualifyIssuer?: boolean;
}

/** The prefix of ids formed from `client_id` (a token without `sub`): a client never takes a user's id. */
export const CLIENT_ID_PREFIX = 'client:';

/**
 * The default claims mapping, scopes from `scope` or `scp`, and as id:
 * - `sub` when the token has one (a `sub` starting with `client:` is refused, that form names clients);
 * - else `client:<client_id>` (a client acting for itself, without `sub`), so a client named
 *   `alice` is never the user `alice`;
 * - with `qualifyIssuer` (several accepted authorization servers), either form prefixed by the
 *   issuer: `<iss>#<sub>` or `<iss>#client:<client_id>` (issuer identifiers have no `#`, so the
 *   form is unambiguous); a token without a string `iss` then has no id.
 * @publicApi
 */
export function principalFromClaims(
  claims: Record<string, unknown>,
  options: McpPrincipalIdOptions = {},
): McpPrincipal | undefined {
  let local: string;
  if (claims.sub !== undefined) {
    if (typeof claims.sub !== 'string' || claims.sub === '' || claims.sub.startsWith(CLIENT_ID_PREFIX))
      return undefined;
    local = claims.sub;
  } else {
    if (typeof claims.client_id !== 'string' || claims.client_id === '') return undefined;
    local = `${CLIENT_ID_PREFIX}${claims.client_id}`;
  }
  let id = local;
  if (options.qualifyIssuer) {
    if (typeof claims.iss !== 'string' || claims.iss === '' || claims.iss.includes('#')) return undefined;
    id = `${claims.iss}#${local}`;
  }
  const raw = claims.scope ?? claims.scp;
  const scopes = Array.isArray(raw) ? raw.map(String) : typeof raw === 'string' ? raw.split(' ').filter(Boolean) : [];
  return { id, scopes, claims };
}

/**
 * The DPoP key a token is bound to (`cnf.jkt`), undefined when it is unbound. A token bound by a
 * method this server cannot check (`x5t#S256` mTLS, `jwk`, `jku`, `kid`) or a malformed `cnf` is
 * refused: used as a plain bearer token, a stolen bound token would work without its key.
 */
function keyBindingOf(cnf: unknown): string | undefined {
  if (cnf === undefined) return undefined;
  if (typeof cnf !== 'object' || cnf === null || Array.isArray(cnf))
    throw McpTokenRefusal.token("the token's confirmation claim (cnf) is not a JSON object.");
  const methods = Object.keys(cnf);
  const other = methods.filter((method) => method !== 'jkt');
  if (other.length) {
    throw McpTokenRefusal.token(
      `the token is bound to a key by a confirmation method this resource cannot check (cnf.${other[0]}; only DPoP's cnf.jkt is supported).`,
    );
  }
  const jkt = (cnf as { jkt?: unknown }).jkt;
  if (typeof jkt !== 'string' || !/^[A-Za-z0-9_-]{43}$/.test(jkt))
    throw McpTokenRefusal.token("the token's DPoP binding (cnf.jkt) is not a SHA-256 JWK thumbprint.");
  return jkt;
}

const JWT_SHAPE = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*$/;
const CREDENTIALS = /^(Bearer|DPoP)\s+([A-Za-z0-9\-._~+/]+=*)\s*$/i;

/**
 * The built-in resource-server verification (`auth.jwt`, `auth.introspection`, `auth.dpop`):
 * used instead of `auth.verifyToken`. Every refusal is a {@link McpTokenRefusal} naming the rule.
 */
export class McpBuiltInTokenVerifier {
  private readonly jwt?: JwtAccessTokenVerifier;
  private readonly introspection?: IntrospectionVerifier;
  readonly dpop: DpopVerifier;
  private readonly dpopConfigured: boolean;
  /** Several issuers are accepted: default ids are qualified by the issuer. */
  private readonly qualifyIssuer: boolean;

  private constructor(
    private readonly auth: McpAuthOptions,
    deps: McpTokenVerifierDeps,
  ) {
    assertNumericOptions(auth);
    if (!URL.canParse(auth.resource))
      throw new Error(
        `McpModule: auth.resource is ${JSON.stringify(auth.resource)}; it must be this MCP endpoint's absolute URL, such as https://api.example.com/mcp.`,
      );
    const jwt = auth.jwt;
    const issuers = [jwt?.issuer ?? auth.authorizationServers].flat();
    this.qualifyIssuer = new Set(issuers).size > 1;
    const audiences = [jwt?.audience ?? auth.resource].flat();
    // An empty list would refuse every token, silently: a misconfiguration, said at bootstrap.
    if (issuers.length === 0 || issuers.some((issuer) => typeof issuer !== 'string' || issuer.trim() === '')) {
      throw new Error(
        `McpModule: ${jwt?.issuer !== undefined ? 'auth.jwt.issuer' : 'auth.authorizationServers'} must list the accepted issuers, each a non-empty string exactly as the authorization server writes its "iss".`,
      );
    }
    if (
      audiences.length === 0 ||
      audiences.some((audience) => typeof audience !== 'string' || audience.trim() === '')
    ) {
      throw new Error(
        `McpModule: ${jwt?.audience !== undefined ? 'auth.jwt.audience' : 'auth.resource'} must give the accepted audiences, each a non-empty string (this resource's URI, or the identifier the provider stamps in "aud").`,
      );
    }
    const clockToleranceS = jwt?.clockToleranceS ?? 30;
    const fetchTimeoutMs = jwt?.fetchTimeoutMs ?? 5_000;
    const metadata = new IssuerMetadata(fetchTimeoutMs, jwt?.jwksRefreshCooldownMs ?? 30_000);
    if (auth.verifyToken) {
      throw new Error(
        'McpModule: auth.verifyToken and the built-in verification (auth.jwt / auth.introspection) are both set. Keep one: the built-in verification replaces verifyToken.',
      );
    }
    if (!jwt && !auth.introspection) {
      throw new Error(
        "McpModule: auth.dpop needs auth.jwt or auth.introspection, which read the token's key binding (cnf.jkt). Add one of them.",
      );
    }
    if (jwt) {
      this.jwt = new JwtAccessTokenVerifier(
        {
          issuers,
          audiences,
          algorithms: jwt.algorithms ?? DEFAULT_JWT_ALGORITHMS,
          clockToleranceS,
          typ: jwt.typ,
          jwksUri: jwt.jwksUri,
          jwks: jwt.jwks,
          jwksCacheMs: jwt.jwksCacheMs ?? 600_000,
          jwksRefreshCooldownMs: jwt.jwksRefreshCooldownMs ?? 30_000,
          fetchTimeoutMs,
        },
        metadata,
      );
    }
    const introspection = auth.introspection;
    if (introspection) {
      const cache = deps.redis
        ? new RedisIntrospectionCache(deps.redis.client('the introspection cache'), deps.redis.prefix)
        : new MemoryIntrospectionCache(introspection.cacheMaxEntries ?? 10_000);
      this.introspection = new IntrospectionVerifier(
        {
          ...introspection,
          cacheTtlMs: introspection.cacheTtlMs ?? 60_000,
          timeoutMs: introspection.timeoutMs ?? 5_000,
          maxResponseBytes: introspection.maxResponseBytes ?? 65_536,
          issuers,
          audiences,
          clockToleranceS,
        },
        metadata,
        cache,
      );
    }
    const dpop = auth.dpop ?? {};
    this.dpopConfigured = auth.dpop !== undefined;
    const replays = deps.redis
      ? new RedisDpopReplayStore(deps.redis.client('the DPoP replay store'), deps.redis.prefix)
      : new MemoryDpopReplayStore(dpop.replayMaxEntries ?? 100_000);
    // A bound token is checked even without auth.dpop: the defaults apply.
    this.dpop = new DpopVerifier(
      {
        required: dpop.required ?? false,
        algorithms: dpop.algorithms ?? DEFAULT_DPOP_ALGORITHMS,
        proofMaxAgeS: dpop.proofMaxAgeS ?? 60,
        clockSkewS: dpop.clockSkewS ?? 5,
        nonce: dpop.nonce ?? false,
        nonceLifetimeS: dpop.nonceLifetimeS ?? 60,
      },
      new URL(auth.resource).origin,
      replays,
      deps.nonceSecret,
    );
  }

  /** The verifier `auth` asks for, or undefined when it asks for none (verifyToken, or the app's guard). */
  static create(auth: McpAuthOptions, deps: McpTokenVerifierDeps): McpBuiltInTokenVerifier | undefined {
    if (!auth.jwt && !auth.introspection && !auth.dpop) return undefined;
    return new McpBuiltInTokenVerifier(auth, deps);
  }

  /** The DPoP algorithms a challenge offers (`algs`), when DPoP is configured. */
  get dpopAlgorithms(): string[] | undefined {
    return this.dpopConfigured ? this.dpop.options.algorithms : undefined;
  }

  /** Whether every token must be DPoP-bound. */
  get dpopRequired(): boolean {
    return this.dpop.options.required;
  }

  /** The RFC 9728 fields this verification adds to the metadata document. */
  metadata(): Record<string, unknown> {
    if (!this.dpopConfigured) return {};
    return {
      dpop_signing_alg_values_supported: this.dpop.options.algorithms,
      dpop_bound_access_tokens_required: this.dpop.options.required,
    };
  }

  /**
   * Verifies the request's credentials: a {@link McpTokenRefusal} when it has none (status 401,
   * no error code), when they are malformed, or when a rule fails.
   */
  async verify(headers: IncomingHttpHeaders, target: McpRequestTarget | undefined): Promise<McpVerifiedToken> {
    const header = Array.isArray(headers.authorization) ? headers.authorization[0] : headers.authorization;
    if (header === undefined || !/^(Bearer|DPoP)(\s|$)/i.test(header)) {
      throw new McpTokenRefusal(
        401,
        undefined,
        'this MCP endpoint needs an access token.',
        this.dpopRequired ? 'DPoP' : 'Bearer',
      );
    }
    const match = CREDENTIALS.exec(header);
    if (!match)
      throw new McpTokenRefusal(
        401,
        'invalid_request',
        'the Authorization header is not one well-formed access token.',
      );
    const scheme = match[1].toLowerCase() === 'dpop' ? 'DPoP' : 'Bearer';
    const token = match[2];
    const claims = await this.claimsOf(token).catch((error: unknown) => {
      // The error goes on the challenge of the scheme the client used.
      throw scheme === 'DPoP' && error instanceof McpTokenRefusal && error.status === 401
        ? new McpTokenRefusal(401, error.error, error.description, 'DPoP', error.headers)
        : error;
    });
    const jkt = keyBindingOf(claims.cnf);
    if (jkt === undefined) {
      if (this.dpopRequired)
        throw McpTokenRefusal.token(
          'this resource accepts only DPoP-bound access tokens (cnf.jkt); request the token with a DPoP proof.',
          'DPoP',
        );
      if (scheme === 'DPoP')
        throw McpTokenRefusal.token(
          'the token was sent with the DPoP scheme but is not bound to a key (no cnf.jkt).',
          'DPoP',
        );
    } else {
      // RFC 9449 §7.1: a bound token sent as a bearer token is refused, whatever proof came along.
      if (scheme !== 'DPoP')
        throw McpTokenRefusal.token(
          'the token is DPoP-bound (cnf.jkt): send it as "Authorization: DPoP <token>" with a DPoP proof.',
          'DPoP',
        );
      await this.dpop.verify(headers.dpop, token, jkt, target);
    }
    return {
      principal: this.principalOf(claims),
      headers: this.dpopConfigured && this.dpop.options.nonce ? { 'DPoP-Nonce': this.dpop.currentNonce() } : undefined,
    };
  }

  private principalOf(claims: Record<string, unknown>): McpPrincipal {
    if (this.auth.principal) {
      const principal = this.auth.principal(claims);
      if (!principal) throw McpTokenRefusal.token('the claims mapping (auth.principal) refused the token.');
      // A principal without an id would bind sessions, tasks and requestStates to nobody: any token holder's.
      if (typeof principal.id !== 'string' || principal.id === '') {
        throw McpTokenRefusal.token(
          'the claims mapping (auth.principal) gave no principal id: it must return a non-empty string id.',
        );
      }
      return principal;
    }
    const principal = principalFromClaims(claims, { qualifyIssuer: this.qualifyIssuer });
    if (!principal) {
      throw McpTokenRefusal.token(
        this.qualifyIssuer
          ? 'the token names no subject to act as (sub, else client_id, and a string iss since several authorization servers are accepted; a sub may not begin with "client:").'
          : 'the token names no subject to act as (sub, else client_id; a sub may not begin with "client:").',
      );
    }
    return principal;
  }
  private claimsOf(token: string): Promise<Record<string, unknown>> {
    if (this.jwt && (JWT_SHAPE.test(token) || !this.introspection)) return this.jwt.verify(token);
    if (this.introspection) return this.introspection.verify(token);
    throw McpTokenRefusal.token(
      'the access token is not a JWT, and this resource has no introspection endpoint configured for opaque tokens.',
    );
  }
}
