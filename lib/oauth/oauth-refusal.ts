/** The OAuth error codes a refusal carries (RFC 6750 §3.1, RFC 9449 §7.1 and §8). */
export type McpTokenErrorCode = 'invalid_request' | 'invalid_token' | 'invalid_dpop_proof' | 'use_dpop_nonce';

/**
 * A request the built-in verification refuses: 401 with the rule that failed (its
 * `error_description`), or 503 when the authorization server cannot be asked (never fail-open).
 * Descriptions are written by the server alone: no part of the token is ever echoed.
 */
export class McpTokenRefusal extends Error {
  constructor(
    readonly status: 401 | 503,
    readonly error: McpTokenErrorCode | undefined,
    readonly description: string,
    /** The challenge scheme the error belongs to. */
    readonly scheme: 'Bearer' | 'DPoP' = 'Bearer',
    readonly headers: Record<string, string> = {},
  ) {
    super(description);
    this.name = 'McpTokenRefusal';
  }

  /** 401 `invalid_token`: the token broke `rule`. */
  static token(rule: string, scheme: 'Bearer' | 'DPoP' = 'Bearer'): McpTokenRefusal {
    return new McpTokenRefusal(401, 'invalid_token', rule, scheme);
  }

  /** 401 `invalid_dpop_proof`: the DPoP proof broke `rule`. */
  static proof(rule: string): McpTokenRefusal {
    return new McpTokenRefusal(401, 'invalid_dpop_proof', rule, 'DPoP');
  }

  /** 503: `what` (the JWKS, the introspection endpoint, a store) could not answer. */
  static unavailable(what: string, retryAfterS = 5): McpTokenRefusal {
    return new McpTokenRefusal(503, undefined, what, 'Bearer', { 'Retry-After': String(retryAfterS) });
  }

  /** The JSON-RPC error message of the refusal. */
  get answer(): string {
    return this.status === 503
      ? `Service unavailable: the access token cannot be verified now: ${this.description} The request is refused rather than let through unverified; retry shortly.`
      : `Unauthorized: ${this.description}`;
  }
}

/** Text safe inside a quoted-string of WWW-Authenticate (RFC 9110 §5.6.4). */
export function quotable(text: string): string {
  return text.replace(/["\\\r\n]/g, "'");
}

/** Why a fetch failed, in a few words. */
export function causeOf(error: unknown): string {
  if (error instanceof Error) {
    if (error.name === 'TimeoutError' || error.name === 'AbortError') return 'no answer in time';
    const cause = (error as Error & { cause?: unknown }).cause;
    return cause instanceof Error ? `${error.message} (${cause.message})` : error.message;
  }
  return String(error);
}
