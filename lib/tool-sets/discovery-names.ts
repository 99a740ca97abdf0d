/** The discovery tools of progressive mode, by name. */
export const LIST_TOOL_SETS = 'list_tool_sets';
export const SEARCH_TOOLS = 'search_tools';
/** One call tool per annotation tier: each reaches the tools of its tier and the milder ones. */
export const CALL_TOOLS = ['call_tool_read', 'call_tool_write', 'call_tool_destructive'] as const;
export type CallToolName = (typeof CALL_TOOLS)[number];

const CALL_TOOL_NAMES: ReadonlySet<string> = new Set(CALL_TOOLS);
const DISCOVERY_NAMES: ReadonlySet<string> = new Set([LIST_TOOL_SETS, SEARCH_TOOLS, ...CALL_TOOLS]);

/** Whether a name is one of the call tools of progressive mode. */
export function isCallToolName(name: unknown): name is CallToolName {
  return typeof name === 'string' && CALL_TOOL_NAMES.has(name);
}

/** Whether a name is one of the discovery tools of progressive mode. */
export function isDiscoveryName(name: unknown): name is string {
  return typeof name === 'string' && DISCOVERY_NAMES.has(name);
}

/**
 * The tool a call tool runs: the `name` of its arguments, or undefined for any other tool. Spans
 * and events name the tool that ran, not the call tool (the module hands this to telemetry).
 */
export function toolRunBy(name: string, args: unknown): string | undefined {
  if (!isCallToolName(name) || typeof args !== 'object' || args === null || Array.isArray(args)) return undefined;
  const target = (args as { name?: unknown }).name;
  return typeof target === 'string' ? target : undefined;
}
