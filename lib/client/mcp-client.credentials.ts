import { createHash } from 'node:crypto';
import type { McpClientAuth, McpClientCaller, McpOAuthClient } from './mcp-client.interfaces.js';
import { McpClientError } from './mcp-client.error.js';
import { AUDIENCE_MISMATCH, NO_CALLER, TOKEN_FAILED } from './mcp-client.messages.js';
import { readCapped } from '../common/read-capped.js';

/** Refresh this long before a token's stated expiry, so a token never expires on the wire. */
const EXPIRY_SKEW_MS = 30_000;
/** Largest token endpoint answer read: a token response is a few kilobytes. */
const MAX_TOKEN_RESPONSE_BYTES = 64 * 1024;
const TOKEN_EXCHANGE = 'urn:ietf:params:oauth:grant-type:token-exchange';
const ACCESS_TOKEN_TYPE = 'urn:ietf:params:oauth:token-type:access_token';

interface CachedToken {
  token: string;
  expiresAt: number;
}

/**
 * The headers one upstream gets per request: the static ones, plus a bearer token that depends on
 * the auth mode. Tokens of `token-exchange` are cached per caller id AND per the caller's token,
 * so an exchanged token can only ever be presented for the very token it was exchanged for.
 */
export class McpClientCredentials {
  private readonly cache = new Map<string, CachedToken>();
  private readonly pending = new Map<string, Promise<CachedToken>>();

  constructor(
    private readonly client: string,
    private readonly headers: Record<string, string>,
    private readonly auth: McpClientAuth | undefined,
    private readonly maxEntries: number,
    private readonly timeoutMs: number,
  ) {}

  /** True when each caller needs a connection (and a token) of its own. */
  get perCaller(): boolean {
    return this.auth?.type === 'pass-through' || this.auth?.type === 'token-exchange';
  }

  /** The pool key of the connection a call uses: one shared, or one per caller. */
  connectionKey(caller: McpClientCaller | undefined): string {
    if (!this.perCaller) return '';
    if (!caller) throw new McpClientError('credentials', this.client, NO_CALLER(this.client, this.auth!.type));
    return `caller:${caller.id}`;
  }

  /** Checks what can be checked before connecting (caller given, audience matches). */
  check(caller: McpClientCaller | undefined): void {
    if (!this.auth || !this.perCaller) return;
    if (!caller || typeof caller.token !== 'string' || caller.token === '')
      throw new McpClientError('credentials', this.client, NO_CALLER(this.client, this.auth.type));
    if (this.auth.type === 'pass-through') {
      const audiences = audiencesOf(caller.token);
      if (!audiences.includes(this.auth.audience)) {
        throw new McpClientError(
          'credentials',
          this.client,
          AUDIENCE_MISMATCH(
            this.client,
            this.auth.audience,
            audiences.length
              ? audiences.map((a) => `"${a}"`).join(', ')
              : 'no audience it states (not a JWT with "aud")',
          ),
        );
      }
    }
  }

  /** Headers for one HTTP request made for `caller`. */
  async headersFor(caller: McpClientCaller | undefined): Promise<Record<string, string>> {
    const auth = this.auth;
    if (!auth) return this.headers;
    this.check(caller);
    switch (auth.type) {
      case 'pass-through':
        return { ...this.headers, authorization: `Bearer ${caller!.token}` };
      case 'client-credentials':
        return {
          ...this.headers,
          authorization: `Bearer ${await this.token('', () => this.grant(auth, { grant_type: 'client_credentials' }))}`,
        };
      case 'token-exchange': {
        const key = `${caller!.id}\u0000${createHash('sha256').update(caller!.token).digest('base64url')}`;
        const params: Record<string, string> = {
          grant_type: TOKEN_EXCHANGE,
          subject_token: caller!.token,
          subject_token_type: auth.subjectTokenType ?? ACCESS_TOKEN_TYPE,
          requested_token_type: ACCESS_TOKEN_TYPE,
        };
        return { ...this.headers, authorization: `Bearer ${await this.token(key, () => this.grant(auth, params))}` };
      }
    }
  }

  /** Forgets every token (e.g. after the upstream refused one with 401). */
  forget(caller: McpClientCaller | undefined): void {
    if (!caller) {
      this.cache.delete('');
      return;
    }
    for (const key of this.cache.keys()) if (key.startsWith(`${caller.id}\u0000`)) this.cache.delete(key);
  }

  private async token(key: string, fetchToken: () => Promise<CachedToken>): Promise<string> {
    const cached = this.cache.get(key);
    if (cached && cached.expiresAt > Date.now()) return cached.token;
    let pending = this.pending.get(key);
    if (!pending) {
      pending = fetchToken().finally(() => this.pending.delete(key));
      this.pending.set(key, pending);
    }
    const fresh = await pending;
    this.cache.delete(key);
    if (this.cache.size >= this.maxEntries) this.cache.delete(this.cache.keys().next().value!);
    this.cache.set(key, fresh);
    return fresh.token;
  }

  private async grant(oauth: McpOAuthClient, params: Record<string, string>): Promise<CachedToken> {
    const body = new URLSearchParams(params);
    if (oauth.scope) body.set('scope', oauth.scope);
    if (oauth.resource) body.set('resource', oauth.resource);
    if (oauth.audience) body.set('audience', oauth.audience);
    const basic = Buffer.from(
      `${encodeURIComponent(oauth.clientId)}:${encodeURIComponent(oauth.clientSecret)}`,
    ).toString('base64');
    const grant = params.grant_type === TOKEN_EXCHANGE ? 'token exchange' : params.grant_type;
    let answer: Record<string, unknown>;
    let status: number;
    try {
      const response = await fetch(oauth.tokenEndpoint, {
        method: 'POST',
        headers: {
          'content-type': 'application/x-www-form-urlencoded',
          accept: 'application/json',
          authorization: `Basic ${basic}`,
        },
        body,
        signal: AbortSignal.timeout(this.timeoutMs),
        redirect: 'error',
      });
      status = response.status;
      answer = JSON.parse(
        await readCapped(
          response,
          MAX_TOKEN_RESPONSE_BYTES,
          () => `the token endpoint's answer passed ${MAX_TOKEN_RESPONSE_BYTES} bytes`,
        ),
      ) as Record<string, unknown>;
    } catch (error) {
      throw new McpClientError(
        'credentials',
        this.client,
        TOKEN_FAILED(this.client, grant, error instanceof Error ? error.message : String(error)),
        undefined,
        undefined,
        { cause: error },
      );
    }
    if (status !== 200 || typeof answer.access_token !== 'string') {
      // The authorization server's own error code and description; never the request (it holds the caller's token).
      const detail =
        typeof answer.error === 'string'
          ? `${answer.error}${typeof answer.error_description === 'string' ? `: ${answer.error_description}` : ''}`
          : 'no access_token in the answer';
      throw new McpClientError(
        'credentials',
        this.client,
        TOKEN_FAILED(this.client, grant, `HTTP ${status}, ${detail}`),
      );
    }
    const lifetimeMs =
      typeof answer.expires_in === 'number' && answer.expires_in > 0 ? answer.expires_in * 1000 : 60_000;
    return {
      token: answer.access_token,
      expiresAt: Date.now() + Math.max(0, lifetimeMs - Math.min(EXPIRY_SKEW_MS, lifetimeMs / 10)),
    };
  }
}

/** The `aud` of a JWT, unverified: the app verified the token when it let the caller in. */
function audiencesOf(token: string): string[] {
  const parts = token.split('.');
  if (parts.length !== 3) return [];
  try {
    const payload = JSON.parse(Buffer.from(parts[1]!, 'base64url').toString('utf8')) as { aud?: unknown };
    if (typeof payload.aud === 'string') return [payload.aud];
    if (Array.isArray(payload.aud)) return payload.aud.filter((a): a is string => typeof a === 'string');
  } catch {
    // Not a JWT: it states no audience, so it is never passed through.
  }
  return [];
}
