import type { ToolRuntime } from '../protocol/catalog.js';
import type { McpContext } from '../protocol/context.js';
import { isObject } from '../protocol/dispatcher.js';
import { McpError } from '../protocol/errors.js';
import { ErrorCode } from '../protocol/json-rpc.js';
import type { JsonObject } from '../protocol/mcp-types.js';

/** How a `tools/call` runs: in the request, or as a task of one era. */
export type TaskMode = 'sync' | 'modern' | 'legacy';

/** The `tasks` capability of 2025-11-25 (initialize only: 2026-07-28 has the extension instead). */
export const LEGACY_TASKS_CAPABILITY: JsonObject = { list: {}, cancel: {}, requests: { tools: { call: {} } } };

/** The first legacy revision with tasks: older sessions get no `tasks` capability, and `task` is no parameter of theirs. */
export const LEGACY_TASKS_SINCE = '2025-11-25';

/** The extension id of tasks on 2026-07-28 (SEP-2663). */
export const TASKS_EXTENSION = 'io.modelcontextprotocol/tasks';

/**
 * Whether this call runs as a task. 2026-07-28: when the tool supports tasks and the request
 * declares the extension (a `required` tool without it is refused with -32021). 2025-11-25:
 * when the tool supports tasks and the request carries `task` (older sessions have no tasks).
 */
export function taskMode(tool: ToolRuntime, params: JsonObject, ctx: McpContext): TaskMode {
  if (!tool.taskSupport) return 'sync';
  if (ctx.era === 'modern') {
    if (ctx.clientExtension(TASKS_EXTENSION)) return 'modern';
    if (tool.taskSupport === 'required') {
      throw new McpError(
        ErrorCode.MissingRequiredClientCapability,
        `Tool "${tool.name}" runs only as a task, and this request did not declare the "${TASKS_EXTENSION}" extension in _meta["io.modelcontextprotocol/clientCapabilities"].extensions. Use a client that supports tasks.`,
        { requiredCapabilities: { extensions: { [TASKS_EXTENSION]: {} } } },
      );
    }
    return 'sync';
  }
  const hasTasks = ctx.protocolVersion >= LEGACY_TASKS_SINCE;
  if (hasTasks && isObject(params.task)) return 'legacy';
  if (tool.taskSupport === 'required') {
    throw new McpError(
      ErrorCode.MethodNotFound,
      hasTasks
        ? `Tool "${tool.name}" runs only as a task: call it with the "task" parameter of tools/call (its execution.taskSupport is "required").`
        : `Tool "${tool.name}" runs only as a task, and this session's protocol ${ctx.protocolVersion} has none: initialize with ${LEGACY_TASKS_SINCE} or later.`,
    );
  }
  return 'sync';
}
