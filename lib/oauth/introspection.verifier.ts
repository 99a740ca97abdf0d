import { Logger } from '@nestjs/common';
import { createHash } from 'node:crypto';
import type { IssuerMetadata } from './issuer-metadata.js';
import type { McpIntrospectionOptions } from './oauth-options.interface.js';
import { causeOf, McpTokenRefusal } from './oauth-refusal.js';
import type { IntrospectionCache } from './token-cache.js';
import { readCapped } from '../common/read-capped.js';

export interface ResolvedIntrospectionOptions extends Required<
  Pick<McpIntrospectionOptions, 'cacheTtlMs' | 'timeoutMs' | 'maxResponseBytes'>
> {
  endpoint?: string;
  clientId?: string;
  clientSecret?: string;
  headers?: Record<string, string>;
  issuers: string[];
  audiences: string[];
  clockToleranceS: number;
}

/**
 * The `token_type` values of an access token: the schemes of RFC 6749 §7.1 (Bearer, DPoP) and the
 * RFC 8693 type identifier. A refresh or ID token's type is refused.
 */
const ACCESS_TOKEN_TYPES = new Set(['bearer', 'dpop', 'access_token', 'urn:ietf:params:oauth:token-type:access_token']);

/** RFC 6749 §2.3.1: client credentials are form-encoded before Basic encoding. */
function basic(id: string, secret: string): string {
  const encode = (value: string) => encodeURIComponent(value).replace(/%20/g, '+');
  return `Basic ${Buffer.from(`${encode(id)}:${encode(secret)}`).toString('base64')}`;
}

/**
 * Opaque access tokens, asked of the authorization server (RFC 7662). Only `active: true` answers
 * are cached, never past the token's `exp`; when the endpoint cannot answer the request is
 * refused with 503, never let through.
 */
export class IntrospectionVerifier {
  private readonly logger = new Logger('McpModule');
  private lastEndpointWarning = Number.NEGATIVE_INFINITY;

  constructor(
    private readonly options: ResolvedIntrospectionOptions,
    private readonly metadata: IssuerMetadata,
    private readonly cache: IntrospectionCache,
  ) {
    if (options.clientSecret !== undefined && options.clientId === undefined) {
      throw new Error(
        'McpModule: auth.introspection.clientSecret is set without clientId: give both (HTTP Basic authentication at the introspection endpoint).',
      );
    }
  }

  async verify(token: string): Promise<Record<string, unknown>> {
    const key = createHash('sha256').update(token).digest('base64url');
    const cached = await this.cache.get(key).catch((error: unknown) => {
      // A cache that cannot answer only costs an introspection call.
      this.logger.warn(
        `The introspection cache could not be read (${causeOf(error)}); asking the authorization server instead.`,
      );
      return undefined;
    });
    if (cached) return this.check(cached);
    const claims = this.check(await this.introspect(token));
    const ttl = this.ttlOf(claims);
    if (ttl > 0) {
      await this.cache
        .set(key, claims, ttl)
        .catch((error: unknown) =>
          this.logger.warn(`The introspection cache could not be written (${causeOf(error)}).`),
        );
    }
    return claims;
  }

  private ttlOf(claims: Record<string, unknown>): number {
    const untilExp = typeof claims.exp === 'number' ? claims.exp * 1000 - Date.now() : Infinity;
    return Math.min(this.options.cacheTtlMs, untilExp);
  }

  private async introspect(token: string): Promise<Record<string, unknown>> {
    const endpoint =
      this.options.endpoint ??
      (await this.metadata.endpoint(this.options.issuers[0], 'introspection_endpoint', 'auth.introspection.endpoint'));
    const headers: Record<string, string> = {
      'Content-Type': 'application/x-www-form-urlencoded',
      Accept: 'application/json',
      ...this.options.headers,
    };
    if (this.options.clientId !== undefined)
      headers.Authorization = basic(this.options.clientId, this.options.clientSecret ?? '');
    // The endpoint's URL is internal configuration: it goes to the log, never into an answer.
    let response: Response;
    try {
      response = await fetch(endpoint, {
        method: 'POST',
        headers,
        body: new URLSearchParams({ token, token_type_hint: 'access_token' }).toString(),
        signal: AbortSignal.timeout(this.options.timeoutMs),
        redirect: 'error',
      });
    } catch (error) {
      this.endpointWarning(
        `The introspection endpoint ${endpoint} did not answer (${causeOf(error)}); requests with opaque tokens are answered 503 meanwhile.`,
      );
      throw McpTokenRefusal.unavailable('the introspection endpoint did not answer.');
    }
    if (response.status === 400) {
      // RFC 7662 §2.3 / RFC 6749 §5.2: the server would not introspect this token (an
      // unsupported_token_type, a malformed token): a fault of the token, not an outage.
      await response.body?.cancel();
      throw McpTokenRefusal.token(
        'the authorization server would not introspect the token (HTTP 400): it is not an access token it issued.',
      );
    }
    if (response.status !== 200) {
      await response.body?.cancel();
      this.endpointWarning(
        `The introspection endpoint ${endpoint} answered HTTP ${response.status}${response.status === 401 || response.status === 403 ? ': check auth.introspection.clientId and clientSecret' : ''}.`,
      );
      throw McpTokenRefusal.unavailable(`the introspection endpoint answered HTTP ${response.status}.`);
    }
    const body = await readCapped(response, this.options.maxResponseBytes, (bytes, announced) =>
      announced
        ? `it announces ${bytes} bytes, more than auth.introspection.maxResponseBytes (${this.options.maxResponseBytes})`
        : `it is longer than auth.introspection.maxResponseBytes (${this.options.maxResponseBytes} bytes)`,
    ).catch((error: unknown) => {
      this.endpointWarning(
        `The introspection endpoint ${endpoint} sent an answer that could not be read: ${causeOf(error)}.`,
      );
      throw McpTokenRefusal.unavailable(`the introspection endpoint's answer could not be read: ${causeOf(error)}.`);
    });
    let answer: unknown;
    try {
      answer = JSON.parse(body);
    } catch {
      answer = undefined;
    }
    if (typeof answer !== 'object' || answer === null || Array.isArray(answer)) {
      this.endpointWarning(`The introspection endpoint ${endpoint} answered something other than a JSON object.`);
      throw McpTokenRefusal.unavailable('the introspection endpoint answered something other than a JSON object.');
    }
    return answer as Record<string, unknown>;
  }

  /**
   * Endpoint trouble goes to the log (with its URL, which answers never carry) at most once per
   * 30 s: an outage, or forged tokens, would otherwise write a line per request.
   */
  private endpointWarning(message: string): void {
    const now = Date.now();
    if (now - this.lastEndpointWarning < 30_000) return;
    this.lastEndpointWarning = now;
    this.logger.warn(message);
  }

  /** The rules an introspection answer must meet, cached or fresh. */
  private check(claims: Record<string, unknown>): Record<string, unknown> {
    if (claims.active !== true) {
      throw McpTokenRefusal.token(
        'the authorization server reports the token as not active (introspection "active": false): it is revoked, expired or unknown.',
      );
    }
    for (const claim of ['exp', 'nbf', 'iat']) {
      const value = claims[claim];
      if (value !== undefined && (typeof value !== 'number' || !Number.isFinite(value))) {
        throw McpTokenRefusal.token(
          `the introspection answer's ${claim} is not a number of seconds, so the token's lifetime cannot be checked.`,
        );
      }
    }
    if (
      claims.token_type !== undefined &&
      !(typeof claims.token_type === 'string' && ACCESS_TOKEN_TYPES.has(claims.token_type.toLowerCase()))
    ) {
      throw McpTokenRefusal.token(
        'the authorization server reports the token as another kind than an access token (introspection "token_type").',
      );
    }
    const now = Date.now() / 1000;
    const tolerance = this.options.clockToleranceS;
    if (typeof claims.exp === 'number' && claims.exp < now - tolerance)
      throw McpTokenRefusal.token(
        `the token has expired (exp is in the past, beyond the clock tolerance of ${tolerance} s).`,
      );
    if (typeof claims.nbf === 'number' && claims.nbf > now + tolerance)
      throw McpTokenRefusal.token(
        `the token is not yet valid (nbf is in the future, beyond the clock tolerance of ${tolerance} s).`,
      );
    if (claims.iss !== undefined && !this.options.issuers.includes(claims.iss as string)) {
      throw McpTokenRefusal.token(
        `the token's issuer (iss) is not an accepted authorization server (accepted: ${this.options.issuers.join(', ')}).`,
      );
    }
    if (claims.aud !== undefined) {
      const audiences = Array.isArray(claims.aud) ? claims.aud : [claims.aud];
      if (!audiences.some((aud) => this.options.audiences.includes(aud as string))) {
        throw McpTokenRefusal.token(
          `the token's audience (aud) is not this resource (${this.options.audiences.join(', ')}). Request the token with resource=${this.options.audiences[0]} (RFC 8707).`,
        );
      }
    }
    return claims;
  }
}
