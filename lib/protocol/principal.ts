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

