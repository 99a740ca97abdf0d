import type { IncomingMessage, ServerResponse } from 'node:http';
import { ErrorCode, failure } from '../protocol/json-rpc.js';
import type { McpRefusal } from '../engine/sink.js';
import { missingScopes, principalFromUser, type McpAuthOptions, type McpPrincipal } from './mcp-auth.interface.js';

export type AuthOutcome = { ok: true; principal?: McpPrincipal } | { ok: false };

/**
 * Authenticates MCP requests and writes the bearer challenges of RFC 6750 / RFC 9728: 401 with
 * `resource_metadata` (and the supported scopes) when the token is missing or invalid, 403 with
 * `error="insufficient_scope"` naming every scope a call needs.
 */
export class McpAuthenticator {
  readonly metadataUrl: string;
  readonly metadataPath: string;

  constructor(private readonly options: McpAuthOptions) {
    const url = new URL(options.resource);
    const path = url.pathname.replace(/\/+$/, '');
    this.metadataPath = `/.well-known/oauth-protected-resource${path}`;
    this.metadataUrl = `${url.origin}${this.metadataPath}`;
  }

  /** The RFC 9728 protected-resource metadata document. */
  metadata(): Record<string, unknown> {
    const document: Record<string, unknown> = {
      resource: this.options.resource,
      authorization_servers: this.options.authorizationServers,
      bearer_methods_supported: ['header'],
    };
    if (this.options.scopesSupported) document.scopes_supported = this.options.scopesSupported;
    if (this.options.resourceName) document.resource_name = this.options.resourceName;
    return document;
  }

  async authenticate(req: IncomingMessage, res: ServerResponse): Promise<AuthOutcome> {
    if (!this.options.verifyToken) {
      const principal = (this.options.principalFrom ?? ((r) => principalFromUser((r as { user?: unknown }).user)))(req) ?? undefined;
      if (principal) return { ok: true, principal };
      this.challenge(res, 401, undefined, 'Unauthorized: this MCP endpoint needs a bearer token.');
      return { ok: false };
    }
    const header = req.headers.authorization;
    const match = header === undefined ? null : /^Bearer\s+([A-Za-z0-9\-._~+/]+=*)\s*$/i.exec(header);
    if (!match) {
      const bearer = carriesBearer(header);
      this.challenge(
        res,
        401,
        bearer ? 'invalid_request' : undefined,
        !bearer
          ? 'Unauthorized: send "Authorization: Bearer <token>" (see the resource_metadata URL in WWW-Authenticate).'
          : 'Unauthorized: the Authorization header is not a well-formed bearer token.',
      );
      return { ok: false };
    }
    let principal: McpPrincipal | null | undefined;
    try {
      principal = await this.options.verifyToken(match[1], req);
    } catch {
      principal = null;
    }
    if (!principal) {
      this.challenge(res, 401, 'invalid_token', 'Unauthorized: the bearer token is invalid, expired, or not issued for this resource.');
      return { ok: false };
    }
    return { ok: true, principal };
  }

  /** The 403 `insufficient_scope` answer when the principal lacks a scope the call needs. */
  scopeRefusal(required: readonly string[] | undefined, principal: McpPrincipal | undefined, id: string | number | null): McpRefusal | undefined {
    if (!required?.length) return undefined;
    const missing = missingScopes(required, principal?.scopes);
    if (missing.length === 0) return undefined;
    return this.challengeAnswer(403, 'insufficient_scope', `Forbidden: this call needs the scope(s) ${required.join(', ')}; the token lacks ${missing.join(', ')}.`, required, id);
  }

  challenge(
    res: ServerResponse,
    status: 401 | 403,
    error: string | undefined,
    message: string,
    scopes: readonly string[] | undefined = this.options.scopesSupported,
    id: string | number | null = null,
  ): void {
    const answer = this.challengeAnswer(status, error, message, scopes, id);
    const body = JSON.stringify(answer.body);
    res.writeHead(status, { ...answer.headers, 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(body) });
    res.end(body);
  }

  /** A bearer challenge (RFC 6750 §3): the header names the error (if any), scopes and metadata URL. */
  private challengeAnswer(status: 401 | 403, error: string | undefined, message: string, scopes: readonly string[] | undefined, id: string | number | null): McpRefusal {
    const parts = [];
    if (error) parts.push(`error="${error}"`);
    if (scopes?.length) parts.push(`scope="${scopes.join(' ')}"`);
    parts.push(`resource_metadata="${this.metadataUrl}"`);
    return { status, headers: { 'WWW-Authenticate': `Bearer ${parts.join(', ')}` }, body: failure(id, ErrorCode.InvalidRequest, message) };
  }
}

/**
 * Whether an Authorization header attempts the Bearer scheme. RFC 6750 §3.1: a request with no
 * credentials, or with another scheme (`Basic ...`), gets a challenge without an error code.
 */
export function carriesBearer(header: string | undefined): boolean {
  return header !== undefined && /^Bearer(\s|$)/i.test(header);
}
