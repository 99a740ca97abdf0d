import { causeOf, McpTokenRefusal } from './oauth-refusal.js';

/**
 * Authorization-server metadata, fetched once per issuer (RFC 8414, then OpenID Connect
 * discovery) and kept for the life of the process (only configured issuers are ever asked, so it
 * holds one document each). A failed fetch is remembered for `failureCooldownMs`: every request
 * meanwhile gets the same 503 without a fetch, so forged tokens cannot make the server hammer an
 * authorization server that is failing.
 */
export class IssuerMetadata {
  private readonly documents = new Map<string, Promise<Record<string, unknown>>>();

  constructor(
    private readonly timeoutMs: number,
    private readonly failureCooldownMs: number,
  ) {}

  /** The metadata of `issuer`; a 503 refusal when it cannot be fetched. */
  get(issuer: string): Promise<Record<string, unknown>> {
    let document = this.documents.get(issuer);
    if (!document) {
      document = this.fetch(issuer);
      this.documents.set(issuer, document);
      document.catch(() => {
        if (this.failureCooldownMs <= 0) return void this.documents.delete(issuer);
        setTimeout(() => this.documents.delete(issuer), this.failureCooldownMs).unref();
      });
    }
    return document;
  }

  /** A URL from the issuer's metadata (`jwks_uri`, `introspection_endpoint`); `option` sets it instead. */
  async endpoint(issuer: string, field: string, option: string): Promise<string> {
    const value = (await this.get(issuer))[field];
    if (typeof value !== 'string') {
      throw McpTokenRefusal.unavailable(
        `the metadata of authorization server ${issuer} has no ${field}; set ${option}.`,
      );
    }
    return value;
  }

  private async fetch(issuer: string): Promise<Record<string, unknown>> {
    const url = new URL(issuer);
    const path = url.pathname.replace(/\/+$/, '');
    const candidates = [
      `${url.origin}/.well-known/oauth-authorization-server${path}`,
      `${url.origin}${path}/.well-known/openid-configuration`,
    ];
    const failures: string[] = [];
    for (const candidate of candidates) {
      let response: Response;
      try {
        response = await fetch(candidate, {
          headers: { Accept: 'application/json' },
          signal: AbortSignal.timeout(this.timeoutMs),
          redirect: 'error',
        });
      } catch (error) {
        throw McpTokenRefusal.unavailable(
          `the metadata of authorization server ${issuer} could not be fetched from ${candidate}: ${causeOf(error)}.`,
        );
      }
      if (!response.ok) {
        await response.body?.cancel();
        failures.push(`${candidate}: HTTP ${response.status}`);
        continue;
      }
      const document = (await response.json().catch(() => undefined)) as Record<string, unknown> | undefined;
      // RFC 8414 §3.3: a document naming another issuer must not be used.
      if (document?.issuer !== issuer) {
        failures.push(`${candidate}: its "issuer" is not ${issuer}`);
        continue;
      }
      return document;
    }
    throw McpTokenRefusal.unavailable(
      `no usable metadata for authorization server ${issuer} (${failures.join('; ')}).`,
    );
  }
}
