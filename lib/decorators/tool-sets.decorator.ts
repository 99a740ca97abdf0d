import { SetMetadata } from '@nestjs/common';

/** @internal */
export const MCP_TOOL_SETS_METADATA = 'mcp:tool-sets';

/**
 * Puts every `@Tool()` of a provider class into these tool sets (names defined in
 * `McpModule.forRoot({ toolSets })`), on top of the sets each `@Tool({ sets })` names.
 *
 * @example
 * ```ts
 * @ToolSets('billing')
 * @Injectable()
 * export class InvoiceTools { ... }
 * ```
 * @publicApi
 */
export function ToolSets(...sets: string[]): ClassDecorator {
  return SetMetadata(MCP_TOOL_SETS_METADATA, Object.freeze([...sets]));
}

/** @internal A tool definition with its class's sets added to its own. */
export function withClassToolSets<T extends { sets?: readonly string[] }>(definition: T, owner: Function): T {
  const inherited = Reflect.getMetadata(MCP_TOOL_SETS_METADATA, owner) as readonly string[] | undefined;
  if (!inherited?.length) return definition;
  return { ...definition, sets: [...inherited, ...(definition.sets ?? [])] };
}
