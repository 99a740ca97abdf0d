import { randomUUID } from 'node:crypto';
import { Observable, type Subscriber, type Subscription } from 'rxjs';
import { lastOf } from './last-value.js';
import type { ArgumentsOutcome, McpCatalog, ToolRuntime } from './catalog.js';
import { errorResult, toCallToolResult } from './content.js';
import type { McpContext } from './context.js';
import { McpCancelledError, isObject, isPromiseLike, truncate } from './dispatcher.js';
import { McpError } from './errors.js';
import { decodeHeaderValue } from './header-value.js';
import { ErrorCode } from './json-rpc.js';
import type { JsonObject } from './mcp-types.js';
import { callerMessage, meetGuards, type McpFeatureHost, type McpFeatureOptions } from './feature-host.js';
import { META_CLIENT_CAPABILITIES, type ProtocolEra } from './versions.js';
import { McpMethods, type McpCaller } from './methods.js';
import type { PagedList } from './paging.js';

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

/**
 * Registers `tools/list` and `tools/call` (both eras), the scopes and `Mcp-Param-*` header check
 * of `tools/call`, and declares the `tools` capability. With a gate (tool sets), a tool outside
 * the caller's sets is unknown on each of them.
 */
export function installTools(
  host: McpFeatureHost,
  catalog: McpCatalog,
  options: ToolOptions,
  tasks?: McpToolTasks,
  gate?: McpToolGate,
): void {
  const tools = host.pagedList(
    'tools',
    'tools/list',
    () => catalog.tools(),
    (tool, era) => tool.descriptors[era],
  );
  host.define(McpMethods.toolsList, {
    handler: gate
      ? (params, ctx) => gate.list(tools, params, ctx, ctx.era)
      : (params, ctx) => host.listPage(tools, params, ctx, ctx.era),
  });
  if (!gate) {
    host.define(McpMethods.toolsCall, {
      find: (params) => (typeof params.name === 'string' ? catalog.tool(params.name) : undefined),
      scopes: (_params, tool) => (tool as ToolRuntime | undefined)?.requiredScopes,
      headers: (params, getHeader, tool) => checkToolHeaders(tool as ToolRuntime | undefined, params, getHeader),
      handler: (params, ctx) => callTool(host, options, params, ctx, tasks),
    });
  } else {
    // With tool sets, the tool a call reaches depends on its caller (a discovery tool names it one
    // level down), and one outside the caller's sets is unknown on every path.
    host.define(McpMethods.toolsCall, {
      find: (params, caller) => {
        const { name, exists } = gate.target(params, caller);
        return name === undefined || exists === false ? undefined : catalog.tool(name);
      },
      scopes: (_params, tool) => (tool as ToolRuntime | undefined)?.requiredScopes,
      headers: (params, getHeader, tool, caller) => {
        const { viaDiscovery, exists } = gate.target(params, caller);
        // A discovery call carries the real tool's arguments one level down, where no client mirrors them.
        return viaDiscovery || exists === false
          ? undefined
          : checkToolHeaders(tool as ToolRuntime | undefined, params, getHeader);
      },
      handler: (params, ctx) =>
        gate.call(params, ctx, (real, exists) =>
          callTool(host, options, real, ctx, tasks, (name) =>
            resolveTool(catalog, name, ctx.clientCapabilities, exists),
          ),
        ),
    });
  }
  // A task's tool was decided when its tools/call was admitted; a durable job running it later
  // (perhaps on another instance) has no caller request to select sets from.
  tasks?.bindExecutor((toolName, rawArgs, ctx) =>
    runTool(options, resolveTool(catalog, toolName, ctx.clientCapabilities), rawArgs, ctx),
  );
  host.declareCapability('tools', { listChanged: true });
}

/**
 * The tool a caller may call by this name, or the error a name nothing serves gets: the one
 * lookup of every path to a tool (tools/call alone or in a batch, as a task of either era, a
 * durable job). A tool the caller's client may not know of (an app-only tool for a client
 * without MCP Apps), or outside its tool sets (`exists`), is unknown, before its arguments are
 * looked at or a task exists.
 */
export function resolveTool(
  catalog: McpCatalog,
  name: string,
  clientCapabilities: JsonObject,
  exists?: (tool: ToolRuntime) => boolean,
): ToolRuntime {
  return knownTool(catalog.tool(name), name, clientCapabilities, exists);
}

/** The tool found for a name, when this caller's client may know of it (and it is in its tool sets); else the unknown-tool error. */
function knownTool(
  tool: ToolRuntime | undefined,
  name: string,
  clientCapabilities: JsonObject,
  exists?: (tool: ToolRuntime) => boolean,
): ToolRuntime {
  if (tool && tool.visibleTo?.(clientCapabilities) !== false && exists?.(tool) !== false) return tool;
  throw unknownToolError(name);
}

/** What a name no tool answers to gets, on every path. */
export function unknownToolError(name: string): McpError {
  return new McpError(
    ErrorCode.InvalidParams,
    `Unknown tool "${truncate(name)}". Call tools/list to see the tools this server offers.`,
    { name: truncate(name) },
  );
}

/**
 * Checks the `Mcp-Param-*` headers of a modern `tools/call` against its arguments, for the
 * properties the tool marks with `x-mcp-header`. Returns a message on mismatch.
 */
function checkToolHeaders(
  tool: ToolRuntime | undefined,
  params: JsonObject,
  getHeader: (name: string) => string | undefined,
): string | undefined {
  // A tool this request's client may not know of is refused by tools/call as unknown, not here.
  const capabilities =
    isObject(params._meta) && isObject(params._meta[META_CLIENT_CAPABILITIES])
      ? params._meta[META_CLIENT_CAPABILITIES]
      : {};
  if (!tool?.headerParams?.length || tool.visibleTo?.(capabilities) === false) return undefined;
  const args = isObject(params.arguments) ? params.arguments : {};
  for (const param of tool.headerParams) {
    let value: unknown = args;
    for (const key of param.path) value = isObject(value) ? value[key] : undefined;
    const headerName = `mcp-param-${param.header.toLowerCase()}`;
    if (value === undefined || value === null) continue;
    const raw = getHeader(headerName);
    if (raw === undefined) {
      return `Header mismatch: the Mcp-Param-${param.header} header is required because arguments.${param.path.join('.')} is present.`;
    }
    const decoded = decodeHeaderValue(raw);
    if (!decoded.ok)
      return `Header mismatch: the Mcp-Param-${param.header} header has invalid characters or malformed =?base64?…?= encoding.`;
    const matches =
      param.type === 'integer'
        ? decoded.value.trim() !== '' && Number(decoded.value) === value
        : param.type === 'boolean'
          ? typeof value === 'boolean' && decoded.value === String(value)
          : decoded.value === value;
    if (!matches) {
      return `Header mismatch: Mcp-Param-${param.header} header value does not match arguments.${param.path.join('.')}.`;
    }
  }
  return undefined;
}

function callTool(
  host: McpFeatureHost,
  options: ToolOptions,
  params: JsonObject,
  ctx: McpContext,
  tasks: McpToolTasks | undefined,
  /** With tool sets: the caller's tool by name (the gate's test of what exists for it applied). */
  resolve?: (name: string) => ToolRuntime,
): Observable<Result> | Result {
  const name = params.name;
  if (typeof name !== 'string' || name.length === 0) {
    throw new McpError(ErrorCode.InvalidParams, 'tools/call needs "params.name", the name of the tool to call.');
  }
  const tool = resolve
    ? resolve(name)
    : knownTool(
        host.targetOf(McpMethods.toolsCall.name, params, ctx) as ToolRuntime | undefined,
        name,
        ctx.clientCapabilities,
      );
  const rawArgs = params.arguments === undefined ? {} : params.arguments;
  if (!isObject(rawArgs)) {
    throw new McpError(
      ErrorCode.InvalidParams,
      `The "arguments" of tool "${name}" must be a JSON object (got ${describeType(rawArgs)}).`,
    );
  }
  const mode = tasks?.mode(tool, params, ctx) ?? 'sync';
  if (mode === 'sync') return host.interactive(params, name, rawArgs, ctx, () => runTool(options, tool, rawArgs, ctx));
  return host.interactive(params, name, rawArgs, ctx, () =>
    tasks!.run(tool, mode, params, ctx, () => admitTask(options, tool, rawArgs, ctx)),
  );
}

/**
 * Decides a task call before its task exists: invalid arguments get what tools/call gives them,
 * a valid call must meet the tool's guards (with the real request) and its rate limits (counted
 * by the creating caller), and only then may the runner reserve a task and run the handler or
 * queue its job.
 */
async function admitTask(
  options: ToolOptions,
  tool: ToolRuntime,
  rawArgs: JsonObject,
  ctx: McpContext,
): Promise<McpTaskAdmission> {
  let parsed: ArgumentsOutcome;
  try {
    parsed = await tool.parseArguments(rawArgs);
  } catch (error) {
    return { answer: toolErrorResult(options, tool, error) };
  }
  if (!parsed.ok) return { answer: await invalidArguments(options, tool, rawArgs, ctx, parsed.message) };
  try {
    await tool.authorize?.(ctx, ctx.method, { rawArguments: rawArgs, arguments: parsed.value });
  } catch (error) {
    if (error instanceof McpError) throw error;
    return { answer: toolErrorResult(options, tool, error) };
  }
  const args = parsed.value;
  try {
    await tool.admit?.(args, rawArgs, ctx);
  } catch (error) {
    if (error instanceof McpError) throw error;
    return { refuse: toolErrorResult(options, tool, error) };
  }
  return { run: () => invokeTool(options, tool, args, rawArgs, ctx) };
}

/**
 * What invalid arguments answer: the guards first (a validation message can name what a caller
 * may not see, so a caller they refuse gets their refusal), then the message as a tool error.
 */
function invalidArguments(
  options: ToolOptions,
  tool: ToolRuntime,
  rawArgs: JsonObject,
  ctx: McpContext,
  message: string,
): Promise<Result> {
  return meetGuards(tool, ctx, rawArgs).then(
    () => errorResult(message) as Result,
    (error: unknown) => {
      // An McpError is a protocol answer (as from invoke below), not a tool failure.
      if (error instanceof McpError) throw error;
      return toolErrorResult(options, tool, error);
    },
  );
}

/** Parses the arguments, then runs the handler on them: the answer of a call that runs now. Unsubscribing cancels it. */
function runTool(options: ToolOptions, tool: ToolRuntime, rawArgs: JsonObject, ctx: McpContext): Observable<Result> {
  return new Observable<Result>((subscriber) => {
    let inner: Subscription | undefined;
    let cancelled = false;
    const run = (parsed: ArgumentsOutcome): void => {
      if (cancelled) return;
      if (!parsed.ok) {
        invalidArguments(options, tool, rawArgs, ctx, parsed.message).then(
          (result) => !cancelled && (subscriber.next(result), subscriber.complete()),
          (error: unknown) => !cancelled && subscriber.error(error),
        );
        return;
      }
      inner = invokeInto(subscriber, options, tool, parsed.value, rawArgs, ctx);
    };
    const parsed = tool.parseArguments(rawArgs);
    if (isPromiseLike(parsed)) {
      parsed.then(run, (error: unknown) => {
        if (!cancelled) {
          subscriber.next(toolErrorResult(options, tool, error));
          subscriber.complete();
        }
      });
    } else run(parsed);
    return () => {
      cancelled = true;
      inner?.unsubscribe();
    };
  });
}

/** Runs the handler on validated arguments; its last value is the result. Unsubscribing cancels it. */
function invokeTool(
  options: ToolOptions,
  tool: ToolRuntime,
  args: unknown,
  rawArgs: JsonObject,
  ctx: McpContext,
): Observable<Result> {
  return new Observable<Result>((subscriber) => invokeInto(subscriber, options, tool, args, rawArgs, ctx));
}

function invokeInto(
  subscriber: Subscriber<Result>,
  options: ToolOptions,
  tool: ToolRuntime,
  args: unknown,
  rawArgs: JsonObject,
  ctx: McpContext,
): Subscription {
  return lastOf(tool.invoke(args, rawArgs, ctx), {
    value: (last, emitted) => {
      subscriber.next(toolResult(options, tool, emitted ? last : undefined, ctx));
      subscriber.complete();
    },
    error: (error: unknown) => {
      if (ctx.inputRequired || error instanceof McpError) subscriber.error(error);
      else {
        subscriber.next(toolErrorResult(options, tool, error));
        subscriber.complete();
      }
    },
  });
}

function toolResult(options: ToolOptions, tool: ToolRuntime, value: unknown, ctx: McpContext): Result {
  // The schema the caller was shown: 2025-11-25 lists object output schemas only.
  const listed = tool.descriptors[ctx.era].outputSchema !== undefined;
  const result = toCallToolResult(value, { outputSchemaListed: listed });
  if (tool.checkOutput && listed && !result.isError) {
    const problem = tool.checkOutput(result.structuredContent);
    if (problem !== null) {
      const ref = randomUUID();
      options.logger.error(
        `Tool "${tool.name}" returned output that does not match its output schema (ref ${ref}): ${problem}`,
      );
      // The output schema is public (tools/list), so naming the broken fields tells the caller
      // nothing new, and tells whoever reads the transcript which field to fix. Values stay out.
      return errorResult(
        `Tool "${tool.name}" produced output that does not match its declared output schema: ${problem} (reference ${ref}). This is a fault of the tool, not of the arguments: fix the value it returns or its output schema.`,
      ) as Result;
    }
  }
  return result as Result;
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

function describeType(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  return `a ${typeof value}`;
}
