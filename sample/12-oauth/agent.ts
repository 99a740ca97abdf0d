import { calculateJwkThumbprint, exportJWK, generateKeyPair, SignJWT, type CryptoKey, type JWK } from 'jose';
import { createHash, randomUUID } from 'node:crypto';

/** A DPoP key pair of an agent (RFC 9449): proofs are signed with it, tokens are bound to it. */
export class DpopKey {
  private constructor(
    private readonly privateKey: CryptoKey,
    readonly publicJwk: JWK,
    /** The key's thumbprint: a bound token's `cnf.jkt`. */
    readonly thumbprint: string,
  ) {}

  static async generate(): Promise<DpopKey> {
    const { privateKey, publicKey } = await generateKeyPair('ES256');
    const publicJwk = await exportJWK(publicKey);
    return new DpopKey(privateKey, publicJwk, await calculateJwkThumbprint(publicJwk));
  }

  /** A proof for one request: `htm` and `htu` name it, `ath` binds it to the access token. */
  proof(
    htm: string,
    htu: string,
    options: { accessToken?: string; nonce?: string; iat?: number; jti?: string } = {},
  ): Promise<string> {
    const claims: Record<string, unknown> = { htm, htu, jti: options.jti ?? randomUUID() };
    if (options.accessToken) claims.ath = createHash('sha256').update(options.accessToken).digest('base64url');
    if (options.nonce) claims.nonce = options.nonce;
    return new SignJWT(claims)
      .setProtectedHeader({ alg: 'ES256', typ: 'dpop+jwt', jwk: this.publicJwk })
      .setIssuedAt(options.iat ?? Math.floor(Date.now() / 1000))
      .sign(this.privateKey);
  }
}

/**
 * An access token by the client-credentials grant, for `resource` (RFC 8707), bound to `dpop`'s
 * key when given.
 */
export async function clientCredentialsToken(
  tokenEndpoint: string,
  client: { clientId: string; clientSecret: string },
  request: { resource: string; scope: string; dpop?: DpopKey },
): Promise<string> {
  const headers: Record<string, string> = {
    'Content-Type': 'application/x-www-form-urlencoded',
    Authorization: `Basic ${Buffer.from(`${client.clientId}:${client.clientSecret}`).toString('base64')}`,
  };
  if (request.dpop) headers.DPoP = await request.dpop.proof('POST', tokenEndpoint);
  const response = await fetch(tokenEndpoint, {
    method: 'POST',
    headers,
    body: new URLSearchParams({
      grant_type: 'client_credentials',
      resource: request.resource,
      scope: request.scope,
    }).toString(),
  });
  const body = (await response.json()) as { access_token?: string; error?: string; error_description?: string };
  if (!response.ok || !body.access_token)
    throw new Error(
      `The token request failed: HTTP ${response.status} ${body.error ?? ''} ${body.error_description ?? ''}`,
    );
  return body.access_token;
}

/**
 * A `fetch` that sends `token` with the DPoP scheme and a fresh proof on every request, and
 * retries once with the server's nonce when it answers `use_dpop_nonce`: what an MCP client's
 * transport takes as its `fetch` to speak DPoP.
 */
export function dpopFetch(key: DpopKey, token: string, base: typeof fetch = fetch): typeof fetch {
  let nonce: string | undefined;
  const send = async (input: string | URL | Request, init: RequestInit | undefined): Promise<Response> => {
    const url = new URL(input instanceof Request ? input.url : input.toString());
    const method = (init?.method ?? (input instanceof Request ? input.method : 'GET')).toUpperCase();
    const headers = new Headers(init?.headers ?? (input instanceof Request ? input.headers : undefined));
    headers.set('Authorization', `DPoP ${token}`);
    headers.set('DPoP', await key.proof(method, `${url.origin}${url.pathname}`, { accessToken: token, nonce }));
    const response = await base(input, { ...init, headers });
    nonce = response.headers.get('dpop-nonce') ?? nonce;
    return response;
  };
  return async (input, init) => {
    const response = await send(input, init);
    if (response.status === 401 && /error="use_dpop_nonce"/.test(response.headers.get('www-authenticate') ?? '')) {
      await response.body?.cancel();
      return send(input, init);
    }
    return response;
  };
}
