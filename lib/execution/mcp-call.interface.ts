import type { McpContext } from '../protocol/context.js';
import type { JsonObject } from '../protocol/mcp-types.js';

/**
 * One MCP call as guards, interceptors, pipes and filters see it (through
 * `McpExecutionContext`).
 *
 * @publicApi
 */
export interface McpCall {
  /** The MCP method, such as `tools/call`. */
  method: string;
  /** The capability's name (the tool name). */
  name: string;
  /** The arguments as the client sent them. */
  rawArguments: JsonObject;
  /** The validated arguments (a DTO instance for DTO inputs). */
  arguments: unknown;
  context: McpContext;
}
