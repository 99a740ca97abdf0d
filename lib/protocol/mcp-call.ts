import type { McpContext } from './context.js';
import type { JsonObject } from './mcp-types.js';

/**
 * One MCP call as guards, interceptors, pipes and filters see it (through
 * `McpExecutionContext.getCall()`). For a call it is the call's own {@link McpContext}, the one
 * object every layer of a call shares; while a list or a completion asks a capability's guards,
 * it is a view naming that capability, whose `context` is the asking request's.
 *
 * @publicApi
 */
export interface McpCall {
  /**
   * The MCP method, such as `tools/call`; a list's method (`tools/list`, `prompts/list`,
   * `resources/list`, `resources/templates/list`) while a list asks the guards whether to show the
   * capability, and `completion/complete` while a completion asks the guards of its target.
   */
  readonly method: string;
  /**
   * The capability's name: the tool or prompt name, the resource URI (the URI read, for a
   * template), or the URI template when listing templates or completing their variables.
   */
  readonly name: string;
  /** The arguments as the client sent them. */
  readonly rawArguments: JsonObject;
  /** The validated arguments (a DTO instance for DTO inputs). */
  readonly arguments: unknown;
  readonly context: McpContext;
}
