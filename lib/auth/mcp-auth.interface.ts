import type { McpPrincipal } from '../protocol/principal.js';
// The `auth` options live with the verification that reads them (oauth/ sits below auth/).
export type { McpAuthOptions } from '../oauth/oauth-options.interface.js';
export type { McpPrincipal };
export { missingScopes } from '../protocol/principal.js';

/**
 * A passport-style `request.user` turned into a principal: `id` from `sub`, `id`, `userId` or
 * `username` (the first present), `scopes` from `scopes` (an array), `scope` (space-separated, as
 * OAuth writes it) or `scp`, and the whole user object as `claims`.
 *
 * @publicApi
 */
export function principalFromUser(user: unknown): McpPrincipal | undefined {
  if (typeof user !== 'object' || user === null) return undefined;
  const record = user as Record<string, unknown>;
  const id = record.sub ?? record.id ?? record.userId ?? record.username;
  if (typeof id !== 'string' && typeof id !== 'number') return undefined;
  const raw = record.scopes ?? record.scope ?? record.scp;
  const scopes = Array.isArray(raw)
    ? raw.map(String)
    : typeof raw === 'string'
      ? raw.split(' ').filter(Boolean)
      : undefined;
  return { id: String(id), scopes, claims: record };
}
