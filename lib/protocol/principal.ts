// Who calls, and what their scopes cover: the protocol's own notion, which the auth layer fills.

/**
 * Who is calling, as far as authorization goes.
 *
 * @publicApi
 */
export interface McpPrincipal {
  /** A stable identifier (the token's `sub`, for example). Sessions and request states are bound to it. */
  id: string;
  /** Granted scopes. A scope also grants its sub-scopes: `tasks` covers `tasks:write`. */
  scopes?: string[];
  /** Anything else the verifier wants handlers to see (claims, tenant, roles). */
  claims?: Record<string, unknown>;
}

/** Whether the granted scopes cover every required one (a scope covers its `:`-sub-scopes). */
export function missingScopes(required: readonly string[], granted: readonly string[] | undefined): string[] {
  const have = granted ?? [];
  return required.filter((scope) => !have.some((g) => g === scope || scope.startsWith(`${g}:`)));
}

/**
 * Who an anonymous caller is for `limits.sessionsPerAddress`. One IPv6 host is usually given a
 * whole /64, so counting exact IPv6 addresses would let one host make as many sessions as it has
 * addresses: IPv6 callers are counted per /64 (an IPv4-mapped address counts as its IPv4).
 */
export function addressOwner(address: string | undefined): string {
  if (address === undefined) return 'unknown';
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  if (mapped) return mapped[1]!;
  if (!address.includes(':')) return address;
  const [head = '', tail = ''] = address.split('%')[0]!.toLowerCase().split('::');
  const left = head === '' ? [] : head.split(':');
  const right = tail === '' ? [] : tail.split(':');
  const groups = address.includes('::')
    ? [...left, ...Array<string>(Math.max(0, 8 - left.length - right.length)).fill('0'), ...right]
    : left;
  return `${groups
    .slice(0, 4)
    .map((g) => g.replace(/^0+(?=.)/, ''))
    .join(':')}::/64`;
}
