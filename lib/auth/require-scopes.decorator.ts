import { SetMetadata } from '@nestjs/common';

export const MCP_REQUIRED_SCOPES = 'mcp:required-scopes';

/**
 * OAuth scopes a caller's token must grant to call this tool (on a method) or every tool of a
 * provider (on a class). Without them the call is refused with HTTP 403 and a
 * `WWW-Authenticate: Bearer error="insufficient_scope", scope="..."` challenge naming every
 * needed scope. Needs McpModule's `auth` option.
 *
 * @publicApi
 */
export function RequireScopes(...scopes: string[]): MethodDecorator & ClassDecorator {
  return SetMetadata(MCP_REQUIRED_SCOPES, scopes);
}

/** Scopes declared on the method and on its class, merged. */
export function requiredScopesOf(owner: Function, method: Function): string[] | undefined {
  const merged = [
    ...((Reflect.getMetadata(MCP_REQUIRED_SCOPES, owner) as string[] | undefined) ?? []),
    ...((Reflect.getMetadata(MCP_REQUIRED_SCOPES, method) as string[] | undefined) ?? []),
  ];
  return merged.length ? [...new Set(merged)] : undefined;
}
