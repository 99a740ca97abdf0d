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
// tasks register how it runs): the ports they implement and the answers they must give alike. The tools pack
// itself (lib/tools/) sits above; these stay here so that neither side imports the other.

type Result = JsonObject;
type ToolOptions = Pick<McpFeatureOptions, 'exposeInternalErrors' | 'logger'>;

/**
 * A call decided before it runs outside its request (as a task): the handler to run (arguments
 * valid, guards met, rate limits counted), the tool error an invalid or refused call answers with
 * instead, or a refusal by the capability's policies (a rate limit), answered in the request with
 * nothing created. Either way nothing runs before the decision, and a refused call runs nothing.
 */
export type McpRunAdmission = { run: () => Observable<Result> } | { answer: Result } | { refuse: Result };

/** Runs a tool by name outside a request (a durable job). */
export type McpToolExecutor = (toolName: string, rawArgs: JsonObject, ctx: McpContext) => Observable<JsonObject>;

/**
 * A way a `tools/call` may run other than in its request, which a pack registers in
 * {@link McpRunModes} (tasks: as a task of one era).
 */
export interface McpRunMode {
  /** How this mode runs the call (a name of its own), or undefined when the call is not its own. */
  select(tool: ToolRuntime, params: JsonObject, ctx: McpContext): string | undefined;
  /** Runs an admitted call its way; emits what `tools/call` answers (a task, or an early result). */
  run(
    tool: ToolRuntime,
    selected: string,
    params: JsonObject,
    ctx: McpContext,
    admit: () => Promise<McpRunAdmission>,
  ): Observable<Result>;
}

/**
 * The run modes the packs registered, which `tools/call` asks in order (a call no mode takes runs
 * in its request), and how a pack runs a tool by name outside a request (bound by the tools pack).
 */
export class McpRunModes {
  private readonly modes: McpRunMode[] = [];
  private executor?: McpToolExecutor;

  add(mode: McpRunMode): void {
    this.modes.push(mode);
  }

  /** The mode that takes this call and how; undefined when it runs in the request. */
  select(tool: ToolRuntime, params: JsonObject, ctx: McpContext): { mode: McpRunMode; selected: string } | undefined {
    for (const mode of this.modes) {
      const selected = mode.select(tool, params, ctx);
      if (selected !== undefined) return { mode, selected };
    }
    return undefined;
  }

  bindExecutor(executor: McpToolExecutor): void {
    this.executor = executor;
  }

  /** Runs a tool by name, as `tools/call` would have (its lookup included), outside a request. */
  execute(toolName: string, rawArgs: JsonObject, ctx: McpContext): Observable<JsonObject> {
    if (!this.executor) throw new Error(`No tools are installed to run tool "${toolName}".`);
    return this.executor(toolName, rawArgs, ctx);
  }
}

/** The DI token of the module's {@link McpRunModes}, provided by the tools pack. @internal */
export const MCP_RUN_MODES = Symbol.for('nestjs-model-context:McpRunModes');

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
