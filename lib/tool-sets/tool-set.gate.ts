import { from, isObservable, of, switchMap, type Observable } from 'rxjs';
import type { McpAccess, McpToolCatalog, McpListed, ToolRuntime } from '../protocol/catalog.js';
import { errorResult } from '../protocol/content.js';
import type { McpContext } from '../protocol/context.js';
import type { McpCaller } from '../protocol/dispatcher.js';
import { McpError } from '../protocol/errors.js';
import { meetGuards, type McpFeatureHost, type McpFeatureOptions } from '../protocol/feature-host.js';
import { ErrorCode } from '../protocol/json-rpc.js';
import { McpMethods } from '../protocol/methods.js';
import type { JsonObject, ToolAnnotations, ToolDescriptor } from '../protocol/mcp-types.js';
import type { PagedList } from '../protocol/paging.js';
import { toolErrorResult, unknownToolError, type McpToolGate } from '../protocol/tool-calls.js';
import type { ProtocolEra } from '../protocol/versions.js';
import { Bm25Index } from './bm25.js';
import {
  CALL_TOOLS,
  LIST_TOOL_SETS,
  SEARCH_TOOLS,
  isCallToolName,
  isDiscoveryName,
  type CallToolName,
} from './discovery-names.js';
import { ToolSetSelector, type ToolSelection } from './tool-set.selector.js';
import type { ResolvedToolSetsOptions } from './tool-sets.options.js';

type Result = JsonObject;
type Tier = 0 | 1 | 2;
/** Runs the real `tools/call` with its params, for the tools that exist for the caller. */
type RunCall = (params: JsonObject, exists: (tool: ToolRuntime) => boolean) => Observable<Result> | Result;

/** One `tools/call` of a discovery tool, as the gate received it. */
interface DiscoveryCall {
  params: JsonObject;
  ctx: McpContext;
  selection: ToolSelection;
  run: RunCall;
}

/** What a list of one shape holds: the tools' descriptors and hints, without their access checks (already decided). */
interface Listed extends McpAccess, McpListed {
  readonly descriptors: Readonly<Record<ProtocolEra, ToolDescriptor>>;
}

/** The visible list of one (sets, guard outcome) shape: built once, shared by every caller of that shape. */
interface Shape {
  readonly list: PagedList<Listed>;
  readonly tools: readonly ToolRuntime[];
  /** Whether another caller may see another list: its pages are then `cacheScope: "private"`. */
  readonly personal: boolean;
  index?: Bm25Index<ToolRuntime>;
}

interface DiscoveryItem extends McpAccess, McpListed {
  readonly descriptors: Readonly<Record<ProtocolEra, ToolDescriptor>>;
}

/**
 * Tool sets between the callers and the catalog: which tools exist for a request (its sets, then
 * its guards, scopes and client as everywhere), its `tools/list` built once per shape, and the
 * discovery tools of progressive mode, whose call tools run the real tool through `tools/call`'s
 * own path.
 */
export class ToolSetGate implements McpToolGate {
  readonly selector: ToolSetSelector;
  /** Lists built since bootstrap (one per shape and catalog version): what the per-shape cache saves is counted here. */
  builds = 0;
  private readonly shapes = new Map<string, Shape>();
  private shapesVersion = -1;
  private discovery?: { version: number; list: PagedList<DiscoveryItem> };
  private readonly allTools: PagedList<ToolRuntime>;

  constructor(
    private readonly host: McpFeatureHost,
    private readonly catalog: McpToolCatalog,
    private readonly options: ResolvedToolSetsOptions,
    private readonly features: Pick<McpFeatureOptions, 'exposeInternalErrors' | 'logger'>,
  ) {
    this.selector = new ToolSetSelector(options, features.logger);
    this.allTools = host.pagedList(
      'tools',
      McpMethods.toolsList.name,
      () => catalog.tools(),
      (tool, era) => tool.descriptors[era],
    );
  }

  /** The `prepare` of tools/call: decides the caller's sets before its scope and header checks run (they cannot wait). */
  readonly prepare = (caller: McpCaller): void | Promise<void> => this.selector.prepare(caller);

  /** Fails the bootstrap on a set nobody defined, or a tool named as a discovery tool. */
  checkTool(tool: ToolRuntime, site: string): void {
    if (isDiscoveryName(tool.name)) {
      throw new Error(
        `Tool "${tool.name}" declared by "${site}" has the name of a discovery tool of progressive mode, which "toolSets" reserves (${[LIST_TOOL_SETS, SEARCH_TOOLS, ...CALL_TOOLS].join(', ')}). Rename the tool.`,
      );
    }
    for (const set of tool.sets ?? []) {
      if (!this.options.sets.has(set)) {
        const known = [...this.options.sets.keys()].map((name) => `"${name}"`).join(', ') || 'none';
        throw new Error(
          `Tool "${tool.name}" declared by "${site}" names tool set "${set}", which "toolSets.sets" does not define (defined: ${known}). Add it to McpModule.forRoot({ toolSets: { sets: { ${set}: { title, description } } } }) or fix the name.`,
        );
      }
    }
  }

  /** Whether a tool exists for a selection: in one of its sets, or in no set at all. */
  exists(tool: ToolRuntime, selection: ToolSelection): boolean {
    const sets = selection.sets;
    if (sets === null || !tool.sets?.length) return true;
    return tool.sets.some((set) => sets.has(set));
  }

  list(tools: PagedList<ToolRuntime>, params: JsonObject, ctx: McpContext, era: ProtocolEra): Result | Promise<Result> {
    return then(this.selectionOf(ctx), (selection) => {
      if (selection.mode === 'progressive') return this.host.listPage(this.discoveryList(), params, ctx, era);
      return then(this.shapeFor(tools, selection, ctx), (shape) =>
        then(this.host.listPage(shape.list, params, ctx, era), (page) =>
          era === 'modern' && shape.personal && page.cacheScope !== 'private'
            ? { ...page, cacheScope: 'private' }
            : page,
        ),
      );
    });
  }

  call(params: JsonObject, ctx: McpContext, run: RunCall): Observable<Result> | Result {
    const selection = this.selectionOf(ctx);
    const go = (chosen: ToolSelection): Observable<Result> | Result => {
      if (chosen.mode === 'progressive' && isDiscoveryName(params.name))
        return this.discover(params.name, { params, ctx, selection: chosen, run });
      return run(params, (tool) => this.exists(tool, chosen));
    };
    if (!(selection instanceof Promise)) return go(selection);
    return from(selection).pipe(switchMap((chosen) => asObservable(go(chosen))));
  }

  target(
    params: JsonObject,
    caller: McpCaller | undefined,
  ): { name: string | undefined; viaDiscovery: boolean; exists?: boolean } {
    const selection = this.selector.peek(caller);
    let name = typeof params.name === 'string' ? params.name : undefined;
    let viaDiscovery = false;
    if (isCallToolName(name)) {
      viaDiscovery = true;
      // Outside progressive mode a call tool is a name like any unknown one: nothing it names is reached.
      if (selection && selection.mode !== 'progressive') return { name: undefined, viaDiscovery };
      const args = params.arguments;
      name = isRecord(args) && typeof args.name === 'string' ? args.name : undefined;
    }
    const tool = name === undefined ? undefined : this.catalog.tool(name);
    return { name, viaDiscovery, exists: tool && selection ? this.exists(tool, selection) : undefined };
  }

  /** The visible list of this caller's shape, built on the first request of that shape. */
  shapeFor(tools: PagedList<ToolRuntime>, selection: ToolSelection, ctx: McpContext): Shape | Promise<Shape> {
    const version = this.catalog.version;
    if (version !== this.shapesVersion) {
      this.shapes.clear();
      this.shapesVersion = version;
    }
    const restricted = tools.restricted().filter((tool) => this.exists(tool, selection));
    const finish = (hidden: ReadonlySet<ToolRuntime> | undefined): Shape => {
      const key = `${selection.key}|${
        hidden?.size
          ? restricted
              .filter((tool) => hidden.has(tool))
              .map((tool) => tool.name)
              .join(',')
          : ''
      }`;
      let shape = this.shapes.get(key);
      if (shape) {
        this.shapes.delete(key);
        this.shapes.set(key, shape);
        return shape;
      }
      shape = this.build(selection, hidden, restricted.length > 0);
      this.shapes.set(key, shape);
      while (this.shapes.size > this.options.maxShapes) this.shapes.delete(this.shapes.keys().next().value!);
      return shape;
    };
    // Search and list_tool_sets show what a listing would: guards are asked as for tools/list.
    const hidden = this.host.hidden(restricted, ctx, McpMethods.toolsList.name);
    return hidden ? hidden.then(finish) : finish(undefined);
  }

  private build(selection: ToolSelection, hidden: ReadonlySet<ToolRuntime> | undefined, restricted: boolean): Shape {
    this.builds++;
    const visible = this.catalog.tools().filter((tool) => this.exists(tool, selection) && !hidden?.has(tool));
    const items: Listed[] = visible.map((tool) => ({ descriptors: tool.descriptors, listCache: tool.listCache }));
    const uniform = selection.key === '*' && !restricted && !this.options.select && this.options.default === 'all';
    return {
      list: this.host.pagedList(
        'tools',
        McpMethods.toolsList.name,
        () => items,
        (item, era) => item.descriptors[era],
      ),
      tools: visible,
      personal: !uniform,
    };
  }

  private selectionOf(ctx: McpContext): ToolSelection | Promise<ToolSelection> {
    return this.selector.select({ principal: ctx.auth, transportRequest: ctx.request });
  }

  /** The discovery tools' list, the same for every caller; rebuilt when the catalog's hints change. */
  private discoveryList(): PagedList<DiscoveryItem> {
    const version = this.catalog.version;
    if (this.discovery?.version === version) return this.discovery.list;
    const items = discoveryDescriptors(this.catalog.tools(), this.options.maxSearchResults).map(
      (descriptor): DiscoveryItem => ({ descriptors: { legacy: descriptor, modern: descriptor } }),
    );
    const list = this.host.pagedList<DiscoveryItem>(
      'tools',
      McpMethods.toolsList.name,
      () => items,
      (item, era) => item.descriptors[era],
    );
    this.discovery = { version, list };
    return list;
  }

  private discover(name: string, call: DiscoveryCall): Observable<Result> | Result {
    const args = call.params.arguments === undefined ? {} : call.params.arguments;
    if (!isRecord(args)) return errorResult(`The "arguments" of tool "${name}" must be a JSON object.`) as Result;
    if (isCallToolName(name)) return this.callThrough(name, args, call);
    const { selection, ctx } = call;
    return from(Promise.resolve(this.shapeFor(this.allTools, selection, ctx))).pipe(
      switchMap((shape) =>
        of(name === LIST_TOOL_SETS ? this.listSets(shape, selection) : this.search(shape, args, selection, ctx.era)),
      ),
    );
  }

  /** A call tool: the real tool, if it exists for the caller and its tier is this call tool's or milder, through tools/call's path. */
  private callThrough(
    via: CallToolName,
    args: JsonObject,
    { params, ctx, selection, run }: DiscoveryCall,
  ): Observable<Result> | Result {
    const realName = args.name;
    if (typeof realName !== 'string' || realName.length === 0) {
      return errorResult(
        `"${via}" needs "name": the name of a tool that search_tools found, and "arguments" as its input schema says.`,
      ) as Result;
    }
    const inner = args.arguments === undefined ? {} : args.arguments;
    const real: JsonObject = { ...params, name: realName, arguments: inner as JsonObject['arguments'] };
    const exists = (tool: ToolRuntime): boolean => this.exists(tool, selection);
    const tool = this.catalog.tool(realName);
    if (!tool || tool.visibleTo?.(ctx.clientCapabilities) === false || !exists(tool)) throw unknownToolError(realName);
    const needed = tierOf(tool);
    if (needed <= CALL_TOOLS.indexOf(via)) return run(real, exists);
    // The tier is told only to a caller the tool's guards admit: to another it does not exist.
    return from(
      meetGuards(tool, ctx, isRecord(inner) ? inner : {}).then(
        () => {
          throw new McpError(
            ErrorCode.InvalidParams,
            `Tool "${realName}" is ${TIER_WORDS[needed]}, so "${via}" cannot call it: call it through "${CALL_TOOLS[needed]}", whose annotations say so.`,
          );
        },
        (error: unknown): Result => {
          if (error instanceof McpError) throw error;
          return toolErrorResult(this.features, tool, error);
        },
      ),
    );
  }

  private listSets(shape: Shape, selection: ToolSelection): Result {
    const names =
      selection.sets === null
        ? [...this.options.sets.keys()]
        : [...this.options.sets.keys()].filter((set) => selection.sets!.has(set));
    const sets = names.map((set) => {
      const definition = this.options.sets.get(set)!;
      return {
        name: set,
        ...(definition.title !== undefined ? { title: definition.title } : {}),
        ...(definition.description !== undefined ? { description: definition.description } : {}),
        tools: shape.tools.filter((tool) => tool.sets?.includes(set)).length,
      };
    });
    const ungrouped = shape.tools.filter((tool) => !tool.sets?.length).length;
    return structured({ sets, ungroupedTools: ungrouped });
  }

  private search(shape: Shape, args: JsonObject, selection: ToolSelection, era: ProtocolEra): Result {
    const { query, set, limit } = args;
    if (query !== undefined && typeof query !== 'string')
      return errorResult('"query" must be a string of words.') as Result;
    if (set !== undefined && typeof set !== 'string')
      return errorResult('"set" must be the name of a tool set (see list_tool_sets).') as Result;
    if (limit !== undefined && (!Number.isSafeInteger(limit) || (limit as number) < 1))
      return errorResult('"limit" must be a positive integer.') as Result;
    const max = Math.min((limit as number | undefined) ?? this.options.maxSearchResults, this.options.maxSearchResults);
    // A set the caller may not use filters like an unknown one: nothing.
    const allowedSet = set === undefined || selection.sets === null || selection.sets.has(set) ? set : '\u0000';
    const accept = (tool: ToolRuntime): boolean =>
      allowedSet === undefined || (tool.sets?.includes(allowedSet) ?? false);
    let found: ToolRuntime[];
    let total: number;
    if (query?.trim()) {
      shape.index ??= new Bm25Index(shape.tools.map((tool) => ({ item: tool, fields: searchFields(tool) })));
      const hits = shape.index.search(query, shape.tools.length, accept);
      total = hits.length;
      found = hits.slice(0, max).map((hit) => hit.item);
    } else {
      const all = shape.tools.filter(accept);
      total = all.length;
      found = all.slice(0, max);
    }
    const tools = found.map((tool) => {
      const descriptor = tool.descriptors[era];
      return {
        name: descriptor.name,
        ...(descriptor.title !== undefined ? { title: descriptor.title } : {}),
        ...(descriptor.description !== undefined ? { description: descriptor.description } : {}),
        inputSchema: descriptor.inputSchema,
        ...(descriptor.annotations !== undefined ? { annotations: descriptor.annotations } : {}),
        callWith: CALL_TOOLS[tierOf(tool)],
      };
    });
    return structured({ tools, total } as unknown as JsonObject);
  }
}

const TIER_WORDS = ['read-only', 'a tool that changes data', 'destructive (or not marked otherwise)'] as const;

/** A tool's call tier: read-only, additive (destructiveHint false), or destructive (the default of a tool that writes). */
export function tierOf(tool: ToolRuntime): Tier {
  const annotations = tool.descriptors.modern.annotations;
  if (annotations?.readOnlyHint === true) return 0;
  if (annotations?.destructiveHint === false) return 1;
  return 2;
}

/**
 * The discovery tools, each call tool carrying the worst hints it can reach: its tier, and
 * open-world when any tool it reaches is (the catalog's, so that the list is the same for every
 * caller and stays valid for a client that never re-lists).
 */
function discoveryDescriptors(tools: readonly ToolRuntime[], maxResults: number): ToolDescriptor[] {
  const openWorld = [false, false, false];
  for (const tool of tools) {
    if (tool.descriptors.modern.annotations?.openWorldHint === false) continue;
    for (let tier = tierOf(tool); tier < 3; tier++) openWorld[tier] = true;
  }
  const callInput = {
    type: 'object',
    properties: {
      name: { type: 'string', description: 'The tool name search_tools returned.' },
      arguments: { type: 'object', description: "The tool's arguments, as its inputSchema says." },
    },
    required: ['name'],
    additionalProperties: false,
  } as JsonObject;
  const callTool = (name: CallToolName, what: string, annotations: ToolAnnotations): ToolDescriptor => ({
    name,
    description: `Calls ${what} that search_tools found (its callWith is "${name}").`,
    inputSchema: callInput,
    annotations,
  });
  return [
    {
      name: LIST_TOOL_SETS,
      description: 'Lists the tool sets you may use, with how many tools each holds.',
      inputSchema: { type: 'object', properties: {}, additionalProperties: false } as JsonObject,
      annotations: { readOnlyHint: true, openWorldHint: false },
    },
    {
      name: SEARCH_TOOLS,
      description: 'Finds tools by words or set, best first: name, description, inputSchema and the call tool to use.',
      inputSchema: {
        type: 'object',
        properties: {
          query: { type: 'string', maxLength: 512 },
          set: { type: 'string' },
          limit: { type: 'integer', minimum: 1, maximum: maxResults },
        },
        additionalProperties: false,
      } as JsonObject,
      annotations: { readOnlyHint: true, openWorldHint: false },
    },
    callTool('call_tool_read', 'a read-only tool', { readOnlyHint: true, openWorldHint: openWorld[0] }),
    callTool('call_tool_write', 'a tool that changes but destroys nothing', {
      readOnlyHint: false,
      destructiveHint: false,
      openWorldHint: openWorld[1],
    }),
    callTool('call_tool_destructive', 'any tool, destructive ones included', {
      readOnlyHint: false,
      destructiveHint: true,
      openWorldHint: openWorld[2],
    }),
  ];
}

/** What search reads of a tool: name, title, description, parameter names (and nested ones), sets. */
function searchFields(tool: ToolRuntime): Array<readonly [string | undefined, number]> {
  const descriptor = tool.descriptors.modern;
  const params: string[] = [];
  const walk = (schema: unknown, depth: number): void => {
    if (!isRecord(schema) || depth > 2 || !isRecord(schema.properties)) return;
    for (const [key, value] of Object.entries(schema.properties)) {
      params.push(key);
      walk(value, depth + 1);
      if (isRecord(value) && isRecord(value.items)) walk(value.items, depth + 1);
    }
  };
  walk(descriptor.inputSchema, 0);
  return [
    [descriptor.name, 3],
    [descriptor.title ?? descriptor.annotations?.title, 2],
    [descriptor.description, 1],
    [params.join(' '), 2],
    [tool.sets?.join(' '), 1],
  ];
}

function structured(value: JsonObject): Result {
  return { content: [{ type: 'text', text: JSON.stringify(value) }], structuredContent: value } as unknown as Result;
}

/** Whether a body (one message or a batch) holds a tools/call. */
function isRecord(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function asObservable(value: Observable<Result> | Result): Observable<Result> {
  return isObservable(value) ? value : of(value);
}

/** Applies `fn` now to a value, or when a promise of it settles. */
function then<T, R>(value: T | Promise<T>, fn: (value: T) => R | Promise<R>): R | Promise<R> {
  return value instanceof Promise ? value.then(fn) : fn(value);
}
