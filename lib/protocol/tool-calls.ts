import { randomUUID } from 'node:crypto';
import type { Observable } from 'rxjs';
import type { ToolRuntime } from './catalog.js';
import { errorResult } from './content.js';
import type { McpContext } from './context.js';
import { McpCancelledError, truncate } from './dispatcher.js';
import { McpError } from './errors.js';
import { callerMessage, type McpFeatureOptions } from './feature-host.js';
import { ErrorCode } from './json-rpc.js';
import type { JsonObject } from './mcp-types.js';
import type { McpCaller } from './methods.js';
import type { PagedList } from './paging.js';
import type { ProtocolEra } from './versions.js';

// What `tools/call` shares with the packs that stand beside the tools pack (tool sets gate it,
// tasks run it): the ports they implement and the answers they must give alike. The tools pack
// itself (lib/tools/) sits above; these stay here so that neither side imports the other.

type Result = JsonObject;
type ToolOptions = Pick<McpFeatureOptions, 'exposeInternalErrors' | 'logger'>;

/**
 * A task call, decided before its task exists: the handler to run (arguments valid, guards met,
 * rate limits counted), the tool error an invalid or refused call answers with instead, or a
 * refusal by the capability's policies (a rate limit), answered in the request on both eras
 * with no task at all. Either way nothing runs before the decision, and a refused call runs
 * nothing.
 */
export type McpTaskAdmission = { run: () => Observable<Result> } | { answer: Result } | { refuse: Result };

/** How a `tools/call` runs: in the request, or as a task of one era. */
export type TaskMode = 'sync' | 'modern' | 'legacy';

/** Runs a tool by name outside a request (a durable task's job). */
export type McpTaskExecutor = (toolName: string, rawArgs: JsonObject, ctx: McpContext) => Observable<JsonObject>;

/** What `tools/call` asks of the tasks pack, when it is installed (its McpTaskRunner implements it). */
export interface McpToolTasks {
  /** Whether this call runs in the request or as a task of one era. */
  mode(tool: ToolRuntime, params: JsonObject, ctx: McpContext): TaskMode;
  /** Runs an admitted call as a task; emits what `tools/call` answers (the task, or an early result). */
  run(
    tool: ToolRuntime,
    mode: 'modern' | 'legacy',
    params: JsonObject,
    ctx: McpContext,
    admit: () => Promise<McpTaskAdmission>,
  ): Observable<Result>;
  /** How durable jobs run a tool by name. */
  bindExecutor(executor: McpTaskExecutor): void;
}

/**
 * What stands between a caller and the catalog when tool sets are configured (the tool-sets
 * pack implements it): which tools exist for this caller on every path, and what its
 * `tools/list` shows (the catalog, or discovery tools in progressive mode).
 */
export interface McpToolGate {
  /** The caller's `tools/list` page. */
  list(
    tools: PagedList<ToolRuntime>,
    params: JsonObject,
    ctx: McpContext,
    era: ProtocolEra,
  ): JsonObject | Promise<JsonObject>;
  /**
   * Answers a `tools/call`: a discovery tool itself, or `run` with the params of the real call
   * and the test of the tools that exist for this caller.
   */
  call(
    params: JsonObject,
    ctx: McpContext,
    run: (params: JsonObject, exists: (tool: ToolRuntime) => boolean) => Observable<Result> | Result,
  ): Observable<Result> | Result;
  /**
   * For the checks that cannot wait (scopes, tool headers): the tool a `tools/call` reaches and
   * whether it exists for the caller; `exists` undefined when that is not known yet.
   */
  target(
    params: JsonObject,
    caller: McpCaller | undefined,
  ): { name: string | undefined; viaDiscovery: boolean; exists?: boolean };
}

/** What a name no tool answers to gets, on every path. */
export function unknownToolError(name: string): McpError {
  return new McpError(
    ErrorCode.InvalidParams,
    `Unknown tool "${truncate(name)}". Call tools/list to see the tools this server offers.`,
    { name: truncate(name) },
  );
}

/** The tool result of a handler's (or a guard's) error, as a direct call answers it. */
export function toolErrorResult(options: ToolOptions, tool: ToolRuntime, error: unknown): Result {
  // A ToolError, or an HttpException (a guard's refusal among them): the message is for the model.
  const meant = callerMessage(error);
  if (meant !== undefined) return errorResult(meant, undefined) as Result;
  if (error instanceof McpCancelledError) return errorResult('The call was cancelled.') as Result;
  const ref = randomUUID();
  const err = error instanceof Error ? error : new Error(String(error));
  options.logger.error(`Tool "${tool.name}" failed (ref ${ref}): ${err.message}`, err.stack);
  const message = options.exposeInternalErrors
    ? `Tool "${tool.name}" failed: ${err.message} (reference ${ref}).`
    : `Tool "${tool.name}" failed with an internal error (reference ${ref}). The server log has the details.`;
  return errorResult(message) as Result;
}
