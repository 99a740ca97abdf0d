import type { JWTVerifyGetKey } from 'jose';
import type { IssuerMetadata } from './issuer-metadata.js';
import { loadJose, type Jose } from './jose.loader.js';
import type { McpJwtVerificationOptions } from './oauth-options.interface.js';
import { causeOf, McpTokenRefusal } from './oauth-refusal.js';

export const DEFAULT_JWT_ALGORITHMS = [
  'RS256',
  'RS384',
  'RS512',
  'PS256',
  'PS384',
  'PS512',
  'ES256',
  'ES384',
  'ES512',
  'EdDSA',
];

/** Refuses `none` and symmetric algorithms in an allow-list, at bootstrap. */
export function assertAsymmetric(algorithms: readonly string[], option: string): void {
  const bad = algorithms.filter((alg) => alg.toLowerCase() === 'none' || /^HS\d+$/i.test(alg));
  if (bad.length) {
    throw new Error(
      `McpModule: ${option} lists ${bad.map((a) => `"${a}"`).join(', ')}: only asymmetric algorithms are accepted (a token with "none" has no signature, and an HMAC key would be the issuer's public key, which anyone has). Remove them.`,
    );
  }
  if (algorithms.length === 0)
    throw new Error(
      `McpModule: ${option} is empty: list the algorithms your authorization server signs with (e.g. ["RS256"]).`,
    );
}

/** Claims only an OpenID Connect ID token carries (OIDC Core §2, §3.3.2.11), never an access token. */
const ID_TOKEN_CLAIMS = ['nonce', 'at_hash', 'c_hash', 's_hash'];

/**
 * An ID token says who logged in to a client; it is not a grant to call this resource. With
 * `jwt.audience` set to the client id (Entra ID, some Auth0 setups) its audience would pass, so it
 * is told apart by its claims.
 */
function refuseIdToken(payload: Record<string, unknown>): void {
  const found = ID_TOKEN_CLAIMS.filter((claim) => claim in payload);
  if (found.length) {
    throw McpTokenRefusal.token(
      `the token is an OpenID Connect ID token (it carries ${found.join(', ')}), not an access token: send the access token the authorization server issued for this resource.`,
    );
  }
}

export interface ResolvedJwtOptions {
  issuers: string[];
  audiences: string[];
  algorithms: string[];
  clockToleranceS: number;
  typ?: string;
  jwksUri?: string;
  jwks?: McpJwtVerificationOptions['jwks'];
  jwksCacheMs: number;
  jwksRefreshCooldownMs: number;
  fetchTimeoutMs: number;
}

/**
 * JWT access tokens: the issuer is checked before any key is fetched (only configured issuers'
 * key sets are ever requested), then signature, `iss`, `aud`, `exp`, `nbf` and `typ` by `jose`.
 */
export class JwtAccessTokenVerifier {
  private readonly keySets = new Map<string, Promise<JWTVerifyGetKey>>();
  /** Per issuer: the 503 of a failed JWKS fetch and until when it stands (jose retries a failure at once). */
  private readonly keysFailed = new Map<string, { refusal: McpTokenRefusal; until: number }>();

  constructor(
    private readonly options: ResolvedJwtOptions,
    private readonly metadata: IssuerMetadata,
  ) {
    assertAsymmetric(options.algorithms, 'auth.jwt.algorithms');
    if (options.jwksUri && options.issuers.length > 1) {
      throw new Error(
        "McpModule: auth.jwt.jwksUri serves one issuer, but several are accepted (auth.jwt.issuer or auth.authorizationServers). Give one issuer, or leave jwksUri out so each issuer's keys are discovered.",
      );
    }
  }

  /** The verified claims of `token`; a {@link McpTokenRefusal} naming the rule it broke. */
  async verify(token: string): Promise<Record<string, unknown>> {
    const jose = await loadJose();
    let issuer: unknown;
    try {
      issuer = jose.decodeJwt(token).iss;
    } catch {
      throw McpTokenRefusal.token('the access token is not a well-formed JWT.');
    }
    if (typeof issuer !== 'string' || !this.options.issuers.includes(issuer)) {
      throw McpTokenRefusal.token(
        `the token's issuer (iss) is not an accepted authorization server (accepted: ${this.options.issuers.join(', ')}).`,
      );
    }
    const failed = this.keysFailed.get(issuer);
    if (failed && failed.until > Date.now()) throw failed.refusal;
    const keys = await this.keysOf(jose, issuer);
    try {
      const { payload } = await jose.jwtVerify(token, keys, {
        issuer,
        audience: this.options.audiences,
        algorithms: this.options.algorithms,
        clockTolerance: this.options.clockToleranceS,
        requiredClaims: ['exp'],
        ...(this.options.typ ? { typ: this.options.typ } : {}),
      });
      refuseIdToken(payload);
      return payload as Record<string, unknown>;
    } catch (error) {
      if (error instanceof McpTokenRefusal) throw error;
      const refusal = this.refusal(jose, error);
      // A key set that could not be fetched is not asked again within the cooldown, whatever the
      // number of tokens naming this issuer.
      if (refusal.status === 503)
        this.keysFailed.set(issuer, { refusal, until: Date.now() + this.options.jwksRefreshCooldownMs });
      else this.keysFailed.delete(issuer);
      throw refusal;
    }
  }

  private keysOf(jose: Jose, issuer: string): Promise<JWTVerifyGetKey> {
    let keys = this.keySets.get(issuer);
    if (!keys) {
      keys = this.createKeySet(jose, issuer);
      this.keySets.set(issuer, keys);
      keys.catch(() => this.keySets.delete(issuer));
    }
    return keys;
  }

  private async createKeySet(jose: Jose, issuer: string): Promise<JWTVerifyGetKey> {
    if (this.options.jwks) return jose.createLocalJWKSet(this.options.jwks as Parameters<Jose['createLocalJWKSet']>[0]);
    const uri = this.options.jwksUri ?? (await this.metadata.endpoint(issuer, 'jwks_uri', 'auth.jwt.jwksUri'));
    // jose refetches on a kid it lacks at most once per cooldown, and shares one pending fetch.
    return jose.createRemoteJWKSet(new URL(uri), {
      timeoutDuration: this.options.fetchTimeoutMs,
      cooldownDuration: this.options.jwksRefreshCooldownMs,
      cacheMaxAge: this.options.jwksCacheMs,
    });
  }

  private refusal(jose: Jose, error: unknown): McpTokenRefusal {
    const { errors } = jose;
    const tolerance = `beyond the clock tolerance of ${this.options.clockToleranceS} s`;
    if (error instanceof errors.JWTExpired)
      return McpTokenRefusal.token(`the token has expired (exp is in the past, ${tolerance}).`);
    if (error instanceof errors.JWTClaimValidationFailed) {
      switch (error.claim) {
        case 'nbf':
          return McpTokenRefusal.token(`the token is not yet valid (nbf is in the future, ${tolerance}).`);
        case 'aud':
          return McpTokenRefusal.token(
            `the token's audience (aud) is not this resource (${this.options.audiences.join(', ')}). Request the token with resource=${this.options.audiences[0]} (RFC 8707).`,
          );
        case 'iss':
          return McpTokenRefusal.token(
            `the token's issuer (iss) is not an accepted authorization server (accepted: ${this.options.issuers.join(', ')}).`,
          );
        case 'typ':
          return McpTokenRefusal.token(`the token's type (typ) is not ${this.options.typ}.`);
        default:
          return McpTokenRefusal.token(`the token's "${error.claim}" claim failed validation (${error.reason}).`);
      }
    }
    if (error instanceof errors.JOSEAlgNotAllowed) {
      return McpTokenRefusal.token(
        `the token's signing algorithm is not allowed (allowed: ${this.options.algorithms.join(', ')}; never "none" or HMAC).`,
      );
    }
    if (error instanceof errors.JWKSNoMatchingKey || error instanceof errors.JWKSMultipleMatchingKeys) {
      return McpTokenRefusal.token("no key of the issuer's JWKS matches the token's key id (kid) and algorithm.");
    }
    if (error instanceof errors.JWSSignatureVerificationFailed)
      return McpTokenRefusal.token("the token's signature does not verify with the issuer's key.");
    if (
      error instanceof errors.JWKSTimeout ||
      error instanceof errors.JWKSInvalid ||
      !(error instanceof errors.JOSEError)
    ) {
      return McpTokenRefusal.unavailable(`the issuer's key set (JWKS) could not be fetched: ${causeOf(error)}.`);
    }
    if (error instanceof errors.JOSEError && /JSON Web Key Set|HTTP response/.test(error.message)) {
      return McpTokenRefusal.unavailable(`the issuer's key set (JWKS) could not be fetched: ${error.message}.`);
    }
    return McpTokenRefusal.token('the access token is not a well-formed signed JWT.');
  }
}
