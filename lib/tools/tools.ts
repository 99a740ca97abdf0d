import { randomUUID } from 'node:crypto';
import { Observable, type Subscriber, type Subscription } from 'rxjs';
import { lastOf, type LastValueObserver } from '../protocol/last-value.js';
import type { ArgumentsOutcome, McpToolCatalog, ToolRuntime } from '../protocol/catalog.js';
import { errorResult, toCallToolResult } from '../protocol/content.js';
import type { McpContext } from '../protocol/context.js';
import { isObject, isPromiseLike } from '../protocol/dispatcher.js';
import { McpError } from '../protocol/errors.js';
import { decodeHeaderValue } from '../protocol/header-value.js';
import { ErrorCode } from '../protocol/json-rpc.js';
import type { JsonObject } from '../protocol/mcp-types.js';
import { meetGuards, type McpFeatureHost, type McpFeatureOptions } from '../protocol/feature-host.js';
import { META_CLIENT_CAPABILITIES } from '../protocol/versions.js';
import { McpMethods } from '../protocol/methods.js';
import {
  toolErrorResult,
  unknownToolError,
  type McpRunAdmission,
  type McpRunModes,
  type McpToolGate,
} from '../protocol/tool-calls.js';

// The tools pack's protocol methods: Nest-free, installable into any McpFeatureHost.

type Result = JsonObject;
type ToolOptions = Pick<McpFeatureOptions, 'exposeInternalErrors' | 'logger'>;

/**
 * Registers `tools/list` and `tools/call` (both eras), the scopes and `Mcp-Param-*` header check
 * of `tools/call`, and declares the `tools` capability. With a gate (tool sets), a tool outside
 * the caller's sets is unknown on each of them.
 */
export function installTools(
  host: McpFeatureHost,
  catalog: McpToolCatalog,
  options: ToolOptions,
  modes?: McpRunModes,
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
      handler: (params, ctx) => callTool(host, options, params, ctx, modes),
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
          callTool(host, options, real, ctx, modes, (name) =>
            resolveTool(catalog, name, ctx.clientCapabilities, exists),
          ),
        ),
    });
  }
  // A task's tool was decided when its tools/call was admitted; a durable job running it later
  // (perhaps on another instance) has no caller request to select sets from.
  modes?.bindExecutor((toolName, rawArgs, ctx) =>
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
  catalog: McpToolCatalog,
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
  modes: McpRunModes | undefined,
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
  // A pack may run the call its own way (tasks); else it runs in the request.
  const taken = modes?.select(tool, params, ctx);
  if (!taken) return host.interactive(params, name, rawArgs, ctx, () => runTool(options, tool, rawArgs, ctx));
  return host.interactive(params, name, rawArgs, ctx, () =>
    taken.mode.run(tool, taken.selected, params, ctx, () => admitCall(options, tool, rawArgs, ctx)),
  );
}

/**
 * Decides a call a run mode takes before it creates anything (a task): invalid arguments get what
 * tools/call gives them, a valid call must meet the tool's guards (with the real request) and its
 * rate limits (counted by the creating caller), and only then may the mode reserve a task and run
 * the handler or queue its job.
 */
async function admitCall(
  options: ToolOptions,
  tool: ToolRuntime,
  rawArgs: JsonObject,
  ctx: McpContext,
): Promise<McpRunAdmission> {
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
  return new Observable<Result>((subscriber) => new ToolRun(subscriber, options, tool, rawArgs, ctx).parse());
}

/** Runs the handler on validated arguments; its last value is the result. Unsubscribing cancels it. */
function invokeTool(
  options: ToolOptions,
  tool: ToolRuntime,
  args: unknown,
  rawArgs: JsonObject,
  ctx: McpContext,
): Observable<Result> {
  return new Observable<Result>((subscriber) => new ToolRun(subscriber, options, tool, rawArgs, ctx).invoke(args));
}

/**
 * One tool call running in its request: its arguments parsed, its handler's last value made the
 * result. An object, not a nest of closures: this runs on every call. It is its Observable's
 * teardown: unsubscribing cancels it.
 */
class ToolRun implements LastValueObserver<unknown> {
  private inner?: Subscription = undefined;
  private cancelled = false;

  constructor(
    private readonly subscriber: Subscriber<Result>,
    private readonly options: ToolOptions,
    private readonly tool: ToolRuntime,
    private readonly rawArgs: JsonObject,
    private readonly ctx: McpContext,
  ) {}

  parse(): this {
    const parsed = this.tool.parseArguments(this.rawArgs);
    if (isPromiseLike(parsed)) {
      parsed.then(
        (outcome) => this.parsed(outcome),
        (error: unknown) => {
          if (this.cancelled) return;
          this.subscriber.next(toolErrorResult(this.options, this.tool, error));
          this.subscriber.complete();
        },
      );
    } else this.parsed(parsed);
    return this;
  }

  invoke(args: unknown): this {
    this.inner = lastOf(this.tool.invoke(args, this.rawArgs, this.ctx), this);
    return this;
  }

  value(last: unknown, emitted: boolean): void {
    this.subscriber.next(toolResult(this.options, this.tool, emitted ? last : undefined, this.ctx));
    this.subscriber.complete();
  }

  error(error: unknown): void {
    if (this.ctx.inputRequired || error instanceof McpError) this.subscriber.error(error);
    else {
      this.subscriber.next(toolErrorResult(this.options, this.tool, error));
      this.subscriber.complete();
    }
  }

  unsubscribe(): void {
    this.cancelled = true;
    this.inner?.unsubscribe();
  }

  private parsed(parsed: ArgumentsOutcome): void {
    if (this.cancelled) return;
    if (parsed.ok) {
      this.invoke(parsed.value);
      return;
    }
    invalidArguments(this.options, this.tool, this.rawArgs, this.ctx, parsed.message).then(
      (result) => !this.cancelled && (this.subscriber.next(result), this.subscriber.complete()),
      (error: unknown) => !this.cancelled && this.subscriber.error(error),
    );
  }
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

function describeType(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  return `a ${typeof value}`;
}
