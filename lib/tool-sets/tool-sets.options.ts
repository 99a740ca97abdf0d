/** One tool set, as `list_tool_sets` shows it. @publicApi */
export interface McpToolSetDefinition {
  /** A human-friendly name. */
  title?: string;
  /** What its tools are for: an agent reads it to pick a set. */
  description?: string;
}

/** Who asks, as the selection function sees it. @publicApi */
export interface McpToolSetCaller {
  /** The authenticated principal (the module's `auth`), undefined for anonymous callers. */
  principal?: { id: string; scopes?: string[]; claims?: Record<string, unknown> };
  /** The transport's request (Express or Fastify), undefined on stdio and in process. */
  request?: any;
}

/** What a caller sees in `tools/list`: the catalog, or the discovery tools. @publicApi */
export type McpToolListMode = 'full' | 'progressive';

/**
 * Tool sets: named groups of tools, the sets each caller may use, and progressive disclosure
 * (the `toolSets` option of `McpModule`).
 *
 * @publicApi
 */
export interface McpToolSetsOptions {
  /** The sets tools may name (`@Tool({ sets })`, `@ToolSets()`, `expose.routes[].sets`), by name. */
  sets: { [name: string]: McpToolSetDefinition };
  /**
   * The sets a caller may use, from its principal and request (a database, a feature flag, its
   * roles); sync or async. Undefined falls through to the `?toolsets=` query parameter, then
   * `default`. Cached per principal (`cache`); anonymous callers are asked every request. A
   * query parameter can only narrow what this returns. A throw fails the request (-32603).
   */
  select?: (caller: McpToolSetCaller) => readonly string[] | undefined | Promise<readonly string[] | undefined>;
  /**
   * The sets a caller gets when `select` gives none and the URL names none: `'all'` (every
   * tool) or a list of set names. @default 'all'
   */
  default?: 'all' | readonly string[];
  /** The endpoint URL's query parameter naming sets (`/mcp?toolsets=billing,crm`); `false` ignores it. @default 'toolsets' */
  queryParam?: string | false;
  /**
   * `progressive`: `tools/list` shows discovery tools (list sets, search, call) instead of the
   * catalog. Per request with `?mode=progressive` or `?mode=full` (`modeParam`). @default 'full'
   */
  mode?: McpToolListMode;
  /** The query parameter choosing the mode per request; `false` ignores it. @default 'mode' */
  modeParam?: string | false;
  /** The per-principal cache of `select`. */
  cache?: {
    /** Principals kept (least recently used dropped first). @default 10000 */
    maxPrincipals?: number;
    /** How long one principal's sets are kept. @default 60000 */
    ttlMs?: number;
  };
  /**
   * How long a request waits for `select`; past it the request answers -32603 (logged, naming
   * this option) and nothing is cached. @default 5000
   */
  selectTimeoutMs?: number;
  /** Distinct visible lists kept (one per sets + guard outcome). @default 256 */
  maxShapes?: number;
  /** Most results one `search_tools` call returns. @default 10 */
  maxSearchResults?: number;
}

/** @internal */
export interface ResolvedToolSetsOptions {
  sets: ReadonlyMap<string, McpToolSetDefinition>;
  select?: McpToolSetsOptions['select'];
  default: 'all' | readonly string[];
  queryParam: string | false;
  mode: McpToolListMode;
  modeParam: string | false;
  maxPrincipals: number;
  ttlMs: number;
  maxShapes: number;
  maxSearchResults: number;
  selectTimeoutMs: number;
}

const SET_NAME = /^[A-Za-z0-9_.-]{1,64}$/;

/** Checks the option at bootstrap, naming what is wrong and how to fix it. @internal */
export function resolveToolSetsOptions(options: McpToolSetsOptions): ResolvedToolSetsOptions {
  const problems: string[] = [];
  if (typeof options.sets !== 'object' || options.sets === null)
    problems.push('"toolSets.sets" must be an object of set definitions by name');
  const sets = new Map<string, McpToolSetDefinition>();
  for (const [name, definition] of Object.entries(options.sets ?? {})) {
    if (!SET_NAME.test(name))
      problems.push(`set name ${JSON.stringify(name)} must be 1-64 letters, digits, "_", "-" or "."`);
    else sets.set(name, Object.freeze({ ...(definition ?? {}) }));
  }
  if (options.select !== undefined && typeof options.select !== 'function')
    problems.push('"toolSets.select" must be a function (caller) => set names');
  const fallback = options.default ?? 'all';
  if (fallback !== 'all') {
    if (!Array.isArray(fallback)) problems.push('"toolSets.default" must be "all" or an array of set names');
    else
      for (const name of fallback)
        if (!sets.has(name))
          problems.push(`"toolSets.default" names set "${name}", which "toolSets.sets" does not define`);
  }
  const mode = options.mode ?? 'full';
  if (mode !== 'full' && mode !== 'progressive') problems.push('"toolSets.mode" must be "full" or "progressive"');
  const positive = (value: number | undefined, fallbackValue: number, label: string): number => {
    if (value === undefined) return fallbackValue;
    if (!Number.isSafeInteger(value) || value < 1) problems.push(`"toolSets.${label}" must be a positive integer`);
    return value;
  };
  const resolved: ResolvedToolSetsOptions = {
    sets,
    select: options.select,
    default: fallback,
    queryParam: options.queryParam ?? 'toolsets',
    mode,
    modeParam: options.modeParam ?? 'mode',
    maxPrincipals: positive(options.cache?.maxPrincipals, 10_000, 'cache.maxPrincipals'),
    ttlMs: positive(options.cache?.ttlMs, 60_000, 'cache.ttlMs'),
    maxShapes: positive(options.maxShapes, 256, 'maxShapes'),
    maxSearchResults: positive(options.maxSearchResults, 10, 'maxSearchResults'),
    selectTimeoutMs: positive(options.selectTimeoutMs, 5_000, 'selectTimeoutMs'),
  };
  if (problems.length)
    throw new Error(
      `McpModule: invalid "toolSets" option: ${problems.join('; ')}. Fix the toolSets option of McpModule.forRoot().`,
    );
  return resolved;
}
