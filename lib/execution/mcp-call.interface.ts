import type { McpContext } from '../protocol/context.js';
import type { JsonObject } from '../protocol/mcp-types.js';

/**
 * One MCP call as guards, interceptors, pipes and filters see it (through
 * `McpExecutionContext`).
 *
 * @publicApi
 */
export interface McpCall {
  /**
   * The MCP method, such as `tools/call`; a list's method (`tools/list`, `prompts/list`,
   * `resources/list`, `resources/templates/list`) while a list asks the guards whether to show the
   * capability, and `completion/complete` while a completion asks the guards of its target.
   */
  method: string;
  /**
   * The capability's name: the tool or prompt name, the resource URI (the URI read, for a
   * template), or the URI template when listing templates or completing their variables.
   */
  name: string;
  /** The arguments as the client sent them. */
  rawArguments: JsonObject;
  /** The validated arguments (a DTO instance for DTO inputs). */
  arguments: unknown;
  context: McpContext;
}
