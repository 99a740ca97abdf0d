import type { IncomingMessage } from 'node:http';

export interface OriginPolicyOptions {
  /** Origins allowed to call the endpoint (`'*'` allows any). */
  allowedOrigins?: readonly string[];
  /** Host header values allowed (`'*'` allows any); host names or host:port. */
  allowedHosts?: readonly string[];
}

const LOOPBACK_HOSTS = new Set(['localhost', '127.0.0.1', '[::1]', '::1']);

function isLoopbackAddress(address: string | undefined): boolean {
  if (!address) return false;
  return address === '::1' || address.startsWith('127.') || address.startsWith('::ffff:127.');
}

function hostName(hostHeader: string): string {
  if (hostHeader.startsWith('[')) {
    const end = hostHeader.indexOf(']');
    return end === -1 ? hostHeader : hostHeader.slice(0, end + 1);
  }
  const colon = hostHeader.indexOf(':');
  return (colon === -1 ? hostHeader : hostHeader.slice(0, colon)).toLowerCase();
}

/**
 * The host a client behind the app's reverse proxy asked for: the first `X-Forwarded-Host`, read
 * only when the app trusts the connecting peer as its proxy (Express's `trust proxy` setting, the
 * same rule as Express's `req.host`). Anyone can send the header; only a trusted proxy's counts.
 */
function forwardedHost(req: IncomingMessage): string | undefined {
  const header = req.headers['x-forwarded-host'];
  if (!header) return undefined;
  const trust = (req as { app?: { get?(setting: string): unknown } }).app?.get?.('trust proxy fn');
  if (typeof trust !== 'function' || !trust(req.socket?.remoteAddress, 0)) return undefined;
  const first = (Array.isArray(header) ? header[0] : header).split(',')[0].trim();
  return first || undefined;
}

/**
 * Reached on a loopback address, not through a trusted proxy. Asked only when a rule needs it:
 * the local address is a system call per read.
 */
function onLoopback(req: IncomingMessage, forwarded: string | undefined): boolean {
  return !forwarded && isLoopbackAddress(req.socket?.localAddress);
}

export type OriginVerdict = { ok: true } | { ok: false; reason: string };

const ALLOWED: OriginVerdict = { ok: true };

/**
 * DNS-rebinding protection. A server reached on a loopback address accepts only loopback Host and
 * Origin names unless configured otherwise; elsewhere a browser Origin must match the Host (same
 * origin) unless it is explicitly allowed. Clients that send no Origin (all non-browser ones) pass.
 */
export class OriginPolicy {
  private readonly origins?: Set<string>;
  private readonly hosts?: Set<string>;
  private readonly anyOrigin: boolean;
  private readonly anyHost: boolean;

  constructor(options: OriginPolicyOptions) {
    this.anyOrigin = options.allowedOrigins?.includes('*') ?? false;
    this.anyHost = options.allowedHosts?.includes('*') ?? false;
    if (options.allowedOrigins) this.origins = new Set(options.allowedOrigins.map((o) => o.toLowerCase()));
    if (options.allowedHosts) this.hosts = new Set(options.allowedHosts.map((h) => h.toLowerCase()));
  }

  check(req: IncomingMessage): OriginVerdict {
    // Through a trusted proxy, the public host is the one to check (allowedHosts, same origin):
    // the loopback socket is the proxy's hop, not where browsers reach the server.
    const forwarded = forwardedHost(req);
    const host = forwarded ?? req.headers.host;
    if (!this.anyHost) {
      if (this.hosts) {
        if (!host || !(this.hosts.has(host.toLowerCase()) || this.hosts.has(hostName(host)))) {
          return { ok: false, reason: `Host "${host ?? ''}" is not in the allowedHosts list of this MCP endpoint.` };
        }
      } else if (host && !LOOPBACK_HOSTS.has(hostName(host)) && onLoopback(req, forwarded)) {
        return {
          ok: false,
          reason: `Host "${host}" is not a loopback name; this endpoint listens on loopback. Add it to allowedHosts to accept it, or, behind a reverse proxy that sends X-Forwarded-Host, let the app trust the proxy (app.set('trust proxy', 'loopback')).`,
        };
      }
    }
    const origin = req.headers.origin;
    if (origin === undefined || this.anyOrigin) return ALLOWED;
    if (this.origins?.has(origin.toLowerCase())) return ALLOWED;
    let url: URL;
    try {
      url = new URL(origin);
    } catch {
      return { ok: false, reason: `Origin "${origin}" is not a valid origin.` };
    }
    if (!this.origins) {
      if (
        onLoopback(req, forwarded)
          ? LOOPBACK_HOSTS.has(url.hostname)
          : host !== undefined && url.host === host.toLowerCase()
      ) {
        return ALLOWED;
      }
    }
    return {
      ok: false,
      reason: `Origin "${origin}" is not allowed to call this MCP endpoint. Add it to allowedOrigins to accept it.`,
    };
  }
}
