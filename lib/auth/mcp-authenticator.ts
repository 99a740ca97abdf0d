import { Logger } from '@nestjs/common';
import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from 'node:http';
import { ErrorCode, failure } from '../protocol/json-rpc.js';
import type { McpRefusal } from '../engine/sink.js';
import { missingScopes, principalFromUser, type McpAuthOptions, type McpPrincipal } from './mcp-auth.interface.js';
import type { McpRequestTarget } from '../oauth/dpop.verifier.js';
import { McpTokenRefusal, quotable } from '../oauth/oauth-refusal.js';
import type { McpBuiltInTokenVerifier } from '../oauth/token.verifier.js';

export type AuthOutcome = { ok: true; principal?: McpPrincipal } | { ok: false };

/**
 * Who a request authenticates as, or the 401 (503 when the authorization server cannot be asked)
 * it gets; nothing written yet. `description` is the `error_description` of the rule that failed,
 * `scheme` the challenge it belongs to, `headers` go on the answer (`DPoP-Nonce`, `Retry-After`).
 */
export type AuthDecision =
  | { ok: true; principal?: McpPrincipal; headers?: Record<string, string> }
  | {
      ok: false;
      status: 401 | 503;
      error?: string;
      message: string;
      description?: string;
      scheme?: 'Bearer' | 'DPoP';
      headers?: Record<string, string>;
    };

/**
 * The WWW-Authenticate `error_description` of each error code (RFC 6750 §3): fixed texts, so
 * nothing a client sent (a token) is ever echoed back.
 */
const ERROR_DESCRIPTIONS: Record<string, string> = {
  invalid_request: 'The Authorization header is not a well-formed bearer token',
  invalid_token: 'The access token is invalid, expired, or not issued for this resource',
};

/** The messages of a refused request: what failed and how to get through, never the token. */
export const AUTH_MESSAGES = {
  missing:
    'Unauthorized: this MCP endpoint needs a bearer token. Send "Authorization: Bearer <token>"; the resource_metadata URL in the WWW-Authenticate header names the authorization server that issues tokens for it.',
  malformed:
    'Unauthorized: the Authorization header is not a well-formed bearer token. Send "Authorization: Bearer <token>" with one token.',
  invalid: (resource: string) =>
    `Unauthorized: the bearer token was refused: it is invalid, expired, or not issued for this resource (${resource}). Get a new token from the authorization server named in the resource_metadata URL.`,
};

/**
 * The message of a 401 or 403 that the app's own guard raised on the MCP endpoint (passport's
 * `AuthGuard`, a custom `CanActivate`): what was refused and what to send, with the guard's own
 * message when it says more than the status name (passport's bare "Unauthorized" does not).
 */
export function guardRefusalMessage(
  status: number,
  guardMessage: string | undefined,
  bearerSent: boolean,
  resource: string | undefined,
): string {
  const said =
    guardMessage && !/^(Unauthorized|Forbidden|Forbidden resource)$/i.test(guardMessage.trim())
      ? ` The app's guard said: ${guardMessage}`
      : '';
  if (status === 403)
    return `Forbidden: the app's guard refused this request to the MCP endpoint (HTTP 403): the caller is authenticated but not allowed.${said}`;
  if (status !== 401) return guardMessage ?? `HTTP ${status}`;
  if (!resource)
    return `Unauthorized: the app's guard refused this request to the MCP endpoint (HTTP 401). Send the credentials the app's authentication expects (e.g. "Authorization: Bearer <token>").${said}`;
  return `${bearerSent ? AUTH_MESSAGES.invalid(resource) : AUTH_MESSAGES.missing}${said}`;
}

/**
 * Authenticates MCP requests and writes the bearer challenges of RFC 6750 / RFC 9728: 401 with
 * `resource_metadata` (and the supported scopes) when the token is missing or invalid, 403 with
 * `error="insufficient_scope"` naming every scope a call needs.
 */
export class McpAuthenticator {
  readonly metadataUrl: string;
  /** Where RFC 9728 puts the document: `/.well-known/oauth-protected-resource` + the resource's path. */
  readonly metadataPath: string;
  private readonly logger = new Logger('McpModule');
  private warnedNoUser = false;

  constructor(
    private readonly options: McpAuthOptions,
    /** The built-in verification (`auth.jwt`, `auth.introspection`, `auth.dpop`), used instead of `verifyToken`. */
    private readonly verifier?: McpBuiltInTokenVerifier,
  ) {
    const url = new URL(options.resource);
    const path = url.pathname.replace(/\/+$/, '');
    this.metadataPath = `/.well-known/oauth-protected-resource${path}`;
    this.metadataUrl = `${url.origin}${this.metadataPath}`;
  }

  /** The canonical URI of this resource server (`auth.resource`). */
  get resource(): string {
    return this.options.resource;
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
    return { ...document, ...this.verifier?.metadata() };
  }

  /**
   * The principal the app's own authentication put on `request` (`auth.principalFrom`, else
   * {@link principalFromUser} of `request.user`), for a module without `verifyToken`.
   */
  principalOf(request: unknown): McpPrincipal | undefined {
    const read =
      this.options.principalFrom ?? ((r: unknown) => principalFromUser((r as { user?: unknown } | undefined)?.user));
    return read(request) ?? undefined;
  }

  /**
   * Who a request authenticates as: `verifyToken` on its bearer token, else the principal the
   * app's guards left on `appRequest` (the request they saw: Fastify's request, Express's `req`).
   */
  async decide(headers: IncomingHttpHeaders, appRequest: unknown, target?: McpRequestTarget): Promise<AuthDecision> {
    if (this.verifier) return this.decideBuiltIn(headers, target);
    const header = Array.isArray(headers.authorization) ? headers.authorization[0] : headers.authorization;
    if (!this.options.verifyToken) {
      const principal = this.principalOf(appRequest);
      if (principal) return { ok: true, principal };
      if (!carriesBearer(header)) return { ok: false, status: 401, message: AUTH_MESSAGES.missing };
      this.warnNoUser();
      return { ok: false, status: 401, error: 'invalid_token', message: AUTH_MESSAGES.invalid(this.options.resource) };
    }
    const match = header === undefined ? null : /^Bearer\s+([A-Za-z0-9\-._~+/]+=*)\s*$/i.exec(header);
    if (!match) {
      return carriesBearer(header)
        ? { ok: false, status: 401, error: 'invalid_request', message: AUTH_MESSAGES.malformed }
        : { ok: false, status: 401, message: AUTH_MESSAGES.missing };
    }
    let principal: McpPrincipal | null | undefined;
    try {
      principal = await this.options.verifyToken(match[1], appRequest);
    } catch {
      principal = null;
    }
    if (!principal)
      return { ok: false, status: 401, error: 'invalid_token', message: AUTH_MESSAGES.invalid(this.options.resource) };
    return { ok: true, principal };
  }

  async authenticate(req: IncomingMessage, res: ServerResponse, appRequest: unknown = req): Promise<AuthOutcome> {
    const url = (req as IncomingMessage & { originalUrl?: string }).originalUrl ?? req.url ?? '/';
    const decision = await this.decide(req.headers, appRequest, { method: req.method ?? 'GET', url });
    if (decision.ok) {
      for (const [name, value] of Object.entries(decision.headers ?? {})) res.setHeader(name, value);
      return decision;
    }
    if (decision.status === 503) {
      const body = JSON.stringify(failure(null, ErrorCode.ServerBusy, decision.message));
      res.writeHead(503, {
        ...decision.headers,
        'Content-Type': 'application/json',
        'Content-Length': Buffer.byteLength(body),
      });
      res.end(body);
    } else {
      this.challenge(res, decision.status, decision.error, decision.message, undefined, null, decision);
    }
    return { ok: false };
  }

  private async decideBuiltIn(
    headers: IncomingHttpHeaders,
    target: McpRequestTarget | undefined,
  ): Promise<AuthDecision> {
    try {
      return { ok: true, ...(await this.verifier!.verify(headers, target)) };
    } catch (error) {
      if (!(error instanceof McpTokenRefusal)) throw error;
      const { status, error: code, description, scheme, headers: extra } = error;
      return { ok: false, status, error: code, message: error.answer, description, scheme, headers: extra };
    }
  }

  /** The 403 `insufficient_scope` answer when the principal lacks a scope the call needs. */
  scopeRefusal(
    required: readonly string[] | undefined,
    principal: McpPrincipal | undefined,
    id: string | number | null,
  ): McpRefusal | undefined {
    if (!required?.length) return undefined;
    const missing = missingScopes(required, principal?.scopes);
    if (missing.length === 0) return undefined;
    return this.challengeAnswer(
      403,
      'insufficient_scope',
      `Forbidden: this call needs the scope(s) ${required.join(', ')}; the token lacks ${missing.join(', ')}.`,
      required,
      id,
    );
  }

  challenge(
    res: ServerResponse,
    status: 401 | 403,
    error: string | undefined,
    message: string,
    scopes: readonly string[] | undefined = this.options.scopesSupported,
    id: string | number | null = null,
    refusal?: { description?: string; scheme?: 'Bearer' | 'DPoP'; headers?: Record<string, string> },
  ): void {
    const answer = this.challengeAnswer(status, error, message, scopes, id);
    if (refusal)
      answer.headers = { ...refusal.headers, 'WWW-Authenticate': this.challengeHeader(error, scopes, refusal) };
    const body = JSON.stringify(answer.body);
    res.writeHead(status, {
      ...answer.headers,
      'Content-Type': 'application/json',
      'Content-Length': Buffer.byteLength(body),
    });
    res.end(body);
  }

  /**
   * The `WWW-Authenticate` value of a challenge (RFC 6750 §3): error (if any), scopes, metadata URL.
   * With DPoP configured a `DPoP` challenge (RFC 9449 §7.1) with its `algs` follows, or replaces
   * the Bearer one when DPoP is required; the error goes on the scheme it concerns.
   */
  challengeHeader(
    error: string | undefined,
    scopes: readonly string[] | undefined = this.options.scopesSupported,
    refusal: { description?: string; scheme?: 'Bearer' | 'DPoP' } = {},
  ): string {
    const required = this.verifier?.dpopRequired ?? false;
    const algs =
      this.verifier?.dpopAlgorithms ?? (refusal.scheme === 'DPoP' ? this.verifier?.dpop.options.algorithms : undefined);
    // RFC 6750 §3 parameters: the error (if any), then, where the client learns where to go, scopes and metadata URL.
    const params = (code: string | undefined, locate: boolean): string[] => {
      const parts = [];
      if (code) parts.push(`error="${code}"`);
      if (locate && scopes?.length) parts.push(`scope="${scopes.join(' ')}"`);
      if (locate) parts.push(`resource_metadata="${this.metadataUrl}"`);
      const description = code ? (refusal.description ?? ERROR_DESCRIPTIONS[code]) : undefined;
      if (description) parts.push(`error_description="${quotable(description)}"`);
      return parts;
    };
    const challenges = [];
    if (!required) challenges.push(`Bearer ${params(refusal.scheme === 'DPoP' ? undefined : error, true).join(', ')}`);
    if (algs)
      challenges.push(
        `DPoP ${[...params(refusal.scheme === 'DPoP' || required ? error : undefined, required), `algs="${algs.join(' ')}"`].join(', ')}`,
      );
    return challenges.join(', ');
  }

  private challengeAnswer(
    status: 401 | 403,
    error: string | undefined,
    message: string,
    scopes: readonly string[] | undefined,
    id: string | number | null,
  ): McpRefusal {
    return {
      status,
      headers: { 'WWW-Authenticate': this.challengeHeader(error, scopes) },
      body: failure(id, ErrorCode.InvalidRequest, message),
    };
  }

  /**
   * A bearer token arrived but no guard authenticated the request: the app's guard did not run
   * on the endpoint (a `@Public()` on it, a guard that skips MCP), or it lets a bad token through
   * as anonymous. The client is told its token was refused; the developer reads why here, once.
   */
  private warnNoUser(): void {
    if (this.warnedNoUser) return;
    this.warnedNoUser = true;
    this.logger.warn(
      "A request to the MCP endpoint carried a bearer token, but no guard authenticated it (auth.principalFrom, or request.user, gave no principal), so it was answered 401 invalid_token. If the token is valid, the app's auth guard did not run on the endpoint: do not mark the endpoint public (controllerDecorators), or give McpModule auth.verifyToken to check tokens itself.",
    );
  }
}

/**
 * Whether an Authorization header attempts the Bearer scheme. RFC 6750 §3.1: a request with no
 * credentials, or with another scheme (`Basic ...`), gets a challenge without an error code.
 */
export function carriesBearer(header: string | undefined): boolean {
  return header !== undefined && /^Bearer(\s|$)/i.test(header);
}
