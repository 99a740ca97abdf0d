import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import { McpStoreUnavailableError } from '../protocol/errors.js';
import type { McpRedisClient } from '../redis/redis-client.js';
import { assertAsymmetric } from './jwt.verifier.js';
import { loadJose } from './jose.loader.js';
import { McpTokenRefusal } from './oauth-refusal.js';

export const DEFAULT_DPOP_ALGORITHMS = ['ES256', 'ES384', 'ES512', 'PS256', 'PS384', 'PS512', 'RS256', 'EdDSA'];

/** Proof `jti`s already used, each remembered for the proof's lifetime. */
export interface DpopReplayStore {
  /** True when `key` was unseen (and is now taken), false on a replay. */
  consume(key: string, ttlMs: number): Promise<boolean>;
}

/**
 * In memory, bounded. Every entry lives the same window, so insertion order is expiry order:
 * expired entries are swept from the front, and a store full of live entries refuses (503)
 * rather than forgetting one and letting its replay through.
 */
export class MemoryDpopReplayStore implements DpopReplayStore {
  private readonly seen = new Map<string, number>();

  constructor(private readonly maxEntries: number) {}

  async consume(key: string, ttlMs: number): Promise<boolean> {
    const now = Date.now();
    for (const [first, expiresAt] of this.seen) {
      if (expiresAt > now) break;
      this.seen.delete(first);
    }
    const known = this.seen.get(key);
    if (known !== undefined && known > now) return false;
    if (this.seen.size >= this.maxEntries) {
      throw new McpStoreUnavailableError(
        `Service unavailable: the DPoP replay store holds ${this.maxEntries} live proofs (auth.dpop.replayMaxEntries). Raise the bound, or configure redis to share it across instances.`,
        1,
      );
    }
    this.seen.set(key, now + ttlMs);
    return true;
  }
}

/** In Redis (`SET NX PX`): a proof used on one instance is refused on every other. */
export class RedisDpopReplayStore implements DpopReplayStore {
  constructor(
    private readonly client: McpRedisClient,
    private readonly prefix: string,
  ) {}

  async consume(key: string, ttlMs: number): Promise<boolean> {
    return (
      (await this.client.call(
        'SET',
        `${this.prefix}oauth:dpop:${key}`,
        '1',
        'PX',
        Math.max(1, Math.ceil(ttlMs)),
        'NX',
      )) === 'OK'
    );
  }
}

export interface ResolvedDpopOptions {
  required: boolean;
  algorithms: string[];
  proofMaxAgeS: number;
  clockSkewS: number;
  nonce: boolean;
  nonceLifetimeS: number;
}

/** Where and how the request was made: what a proof's `htm` and `htu` must name. */
export interface McpRequestTarget {
  method: string;
  /** The request's path (and query), as the HTTP request line carries it. */
  url: string;
}

/**
 * DPoP proofs (RFC 9449 §4.3 and §7.1): one `DPoP` header, a `dpop+jwt` signed by its embedded
 * public key, that key's thumbprint equal to the token's `cnf.jkt`, `htm`/`htu` naming this
 * request, `iat` inside the window, `ath` the token's hash, the server's nonce when nonces are
 * on, and a `jti` never seen within the window.
 */
export class DpopVerifier {
  constructor(
    readonly options: ResolvedDpopOptions,
    /** The origin this resource is reached at (from `auth.resource`): `htu` is checked against it. */
    private readonly origin: string,
    private readonly replays: DpopReplayStore,
    private readonly nonceSecret: Buffer,
  ) {
    assertAsymmetric(options.algorithms, 'auth.dpop.algorithms');
  }

  /** The nonce a client must put in its next proofs (while nonces are on). */
  currentNonce(now = Date.now()): string {
    return this.nonceFor(Math.floor(now / 1000 / this.options.nonceLifetimeS));
  }

  /** Checks the proof of a request carrying a token bound to `jkt`; a refusal names the failed rule. */
  async verify(
    proofHeader: string | string[] | undefined,
    token: string,
    jkt: string,
    target: McpRequestTarget | undefined,
  ): Promise<void> {
    if (proofHeader === undefined)
      throw McpTokenRefusal.proof(
        'the access token is DPoP-bound (cnf.jkt) but the request carries no DPoP proof header.',
      );
    if (Array.isArray(proofHeader) || proofHeader.includes(','))
      throw McpTokenRefusal.proof('the request carries more than one DPoP proof.');
    if (!target) throw McpTokenRefusal.proof('a DPoP proof can only be checked on an HTTP request.');
    const jose = await loadJose();
    let header: Record<string, unknown>;
    try {
      header = jose.decodeProtectedHeader(proofHeader) as Record<string, unknown>;
    } catch {
      throw McpTokenRefusal.proof('the DPoP proof is not a well-formed JWS.');
    }
    if (header.typ !== 'dpop+jwt') throw McpTokenRefusal.proof('the DPoP proof\'s typ is not "dpop+jwt".');
    if (typeof header.alg !== 'string' || !this.options.algorithms.includes(header.alg)) {
      throw McpTokenRefusal.proof(
        `the DPoP proof's algorithm is not allowed (allowed: ${this.options.algorithms.join(', ')}).`,
      );
    }
    const jwk = header.jwk as Record<string, unknown> | undefined;
    if (typeof jwk !== 'object' || jwk === null || 'd' in jwk || 'k' in jwk)
      throw McpTokenRefusal.proof("the DPoP proof's header has no public key (jwk).");
    let payload: Record<string, unknown>;
    try {
      ({ payload } = await jose.jwtVerify(proofHeader, jose.EmbeddedJWK, {
        algorithms: this.options.algorithms,
        typ: 'dpop+jwt',
      }));
    } catch {
      throw McpTokenRefusal.proof("the DPoP proof's signature does not verify with the key in its header.");
    }
    if (
      (await jose.calculateJwkThumbprint(jwk as Parameters<typeof jose.calculateJwkThumbprint>[0], 'sha256')) !== jkt
    ) {
      throw McpTokenRefusal.proof(
        'the DPoP proof is signed by a key other than the one the access token is bound to (cnf.jkt).',
      );
    }
    if (payload.htm !== target.method)
      throw McpTokenRefusal.proof(`the DPoP proof is for another HTTP method (htm must be ${target.method}).`);
    // Only the path of the request line counts: an absolute-form target (`POST http://other/mcp`)
    // must not let a proof made for another server pass here.
    const expected = normalizedUri(new URL(new URL(target.url, 'http://localhost').pathname, this.origin).href);
    if (typeof payload.htu !== 'string' || normalizedUri(payload.htu) !== expected)
      throw McpTokenRefusal.proof(`the DPoP proof is for another URL (htu must be ${expected}).`);
    const now = Date.now() / 1000;
    if (typeof payload.iat !== 'number') throw McpTokenRefusal.proof('the DPoP proof has no iat.');
    if (payload.iat < now - this.options.proofMaxAgeS - this.options.clockSkewS) {
      throw McpTokenRefusal.proof(`the DPoP proof is too old (iat more than ${this.options.proofMaxAgeS} s ago).`);
    }
    if (payload.iat > now + this.options.clockSkewS)
      throw McpTokenRefusal.proof(
        `the DPoP proof's iat is in the future (beyond ${this.options.clockSkewS} s of clock skew).`,
      );
    if (payload.ath !== createHash('sha256').update(token).digest('base64url'))
      throw McpTokenRefusal.proof("the DPoP proof's ath is not the hash of this access token.");
    if (this.options.nonce && !this.validNonce(payload.nonce)) {
      throw new McpTokenRefusal(
        401,
        'use_dpop_nonce',
        'the DPoP proof must carry the nonce of the DPoP-Nonce header.',
        'DPoP',
        { 'DPoP-Nonce': this.currentNonce() },
      );
    }
    if (typeof payload.jti !== 'string' || payload.jti.length === 0 || payload.jti.length > 256)
      throw McpTokenRefusal.proof('the DPoP proof has no usable jti.');
    const key = createHash('sha256').update(`${jkt}:${payload.jti}`).digest('base64url');
    let fresh: boolean;
    try {
      fresh = await this.replays.consume(key, (this.options.proofMaxAgeS + 2 * this.options.clockSkewS) * 1000);
    } catch (error) {
      throw McpTokenRefusal.unavailable(
        `the DPoP replay store cannot answer: ${error instanceof Error ? error.message : String(error)}`,
      );
    }
    if (!fresh)
      throw McpTokenRefusal.proof(
        `the DPoP proof was already used (its jti is replayed within the ${this.options.proofMaxAgeS} s window).`,
      );
  }

  private nonceFor(slot: number): string {
    const mac = createHmac('sha256', this.nonceSecret).update(`dpop-nonce:${slot}`).digest('base64url').slice(0, 22);
    return `${slot.toString(36)}.${mac}`;
  }

  private validNonce(nonce: unknown): boolean {
    if (typeof nonce !== 'string') return false;
    const slot = Number.parseInt(nonce.split('.')[0] ?? '', 36);
    const current = Math.floor(Date.now() / 1000 / this.options.nonceLifetimeS);
    if (slot !== current && slot !== current - 1) return false;
    const expected = Buffer.from(this.nonceFor(slot));
    const given = Buffer.from(nonce);
    return expected.length === given.length && timingSafeEqual(expected, given);
  }
}

/** RFC 9449 §4.3: `htu` is compared without query and fragment, after URI normalisation. */
function normalizedUri(value: string): string {
  try {
    const url = new URL(value);
    return `${url.protocol}//${url.host}${url.pathname}`;
  } catch {
    return '';
  }
}
