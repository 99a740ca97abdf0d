import type { Observable } from 'rxjs';
import type { McpContext } from './context.js';
import type { JsonObject } from './mcp-types.js';
import type { ProtocolEra } from './versions.js';

type Result = JsonObject;

/** One method's handler: its result, or the Observable whose last value is. */
export type MethodHandler = (params: JsonObject, ctx: McpContext) => Result | Promise<Result> | Observable<Result>;

/**
 * What the server knows of one MCP method before any feature is installed: the eras that have
 * it, the parameter naming what a request targets, and how telemetry names it. Every method is
 * declared here once; the dispatcher, the wire rules, telemetry and the test client read it, and
 * a feature attaches its handler, target look-up, scopes and header checks to the declaration
 * ({@link McpMethodSpec}, through `McpFeatureHost.define`).
 */
export interface McpMethodDeclaration {
  readonly name: string;
  /** The protocol eras that have the method. */
  readonly eras: readonly ProtocolEra[];
  /**
   * The parameter that names the capability a request targets (a tool's or prompt's `name`, a
   * resource's `uri`), and the kind of capability it names, for telemetry labels.
   */
  readonly target?: { readonly param: 'name' | 'uri'; readonly kind: 'tool' | 'prompt' | 'resource' };
  /** Streamable HTTP (2026-07-28): the `Mcp-Name` header must repeat the target parameter. */
  readonly nameHeader?: boolean;
  /** The GenAI semantic-convention operation (`gen_ai.operation.name`) of spans and metrics. */
  readonly operation?: string;
}

const BOTH: readonly ProtocolEra[] = ['legacy', 'modern'];
const LEGACY: readonly ProtocolEra[] = ['legacy'];
const MODERN: readonly ProtocolEra[] = ['modern'];

const BY_NAME = new Map<string, McpMethodDeclaration>();

/**
 * Adds methods to the table, each name once: the core's below, and a pack's own from its folder
 * (tasks declare `tasks/*`). Whatever reads the table (wire rules, telemetry) finds them by name.
 */
export function declareMethods<T extends Record<string, McpMethodDeclaration>>(
  table: T,
): { readonly [K in keyof T]: T[K] } {
  for (const method of Object.values(table)) {
    if (BY_NAME.has(method.name)) throw new Error(`The MCP method "${method.name}" is declared twice.`);
    BY_NAME.set(method.name, method);
  }
  return Object.freeze(table);
}

/** The MCP methods of the core and of the packs whose methods live in protocol/, each declared once. */
export const McpMethods = declareMethods({
  ping: { name: 'ping', eras: LEGACY },
  setLogLevel: { name: 'logging/setLevel', eras: LEGACY },
  discover: { name: 'server/discover', eras: MODERN },
  subscriptionsListen: { name: 'subscriptions/listen', eras: MODERN },
  toolsList: { name: 'tools/list', eras: BOTH },
  toolsCall: {
    name: 'tools/call',
    eras: BOTH,
    target: { param: 'name', kind: 'tool' },
    nameHeader: true,
    operation: 'execute_tool',
  },
  resourcesList: { name: 'resources/list', eras: BOTH },
  resourceTemplatesList: { name: 'resources/templates/list', eras: BOTH },
  resourcesRead: { name: 'resources/read', eras: BOTH, target: { param: 'uri', kind: 'resource' }, nameHeader: true },
  resourcesSubscribe: { name: 'resources/subscribe', eras: LEGACY, target: { param: 'uri', kind: 'resource' } },
  resourcesUnsubscribe: { name: 'resources/unsubscribe', eras: LEGACY, target: { param: 'uri', kind: 'resource' } },
  promptsList: { name: 'prompts/list', eras: BOTH },
  promptsGet: { name: 'prompts/get', eras: BOTH, target: { param: 'name', kind: 'prompt' }, nameHeader: true },
  complete: { name: 'completion/complete', eras: BOTH },
  skillsList: { name: 'skills/list', eras: BOTH },
  skillsGet: { name: 'skills/get', eras: BOTH },
  directoryRead: { name: 'resources/directory/read', eras: BOTH },
});

/** The declaration of a method by its wire name; undefined for a name the server never answers. */
export function declaredMethod(name: string): McpMethodDeclaration | undefined {
  return BY_NAME.get(name);
}

/** Who sends a request, as the transport knows before it runs: for decisions taken per caller (tool sets). */
export interface McpCaller {
  principal?: { id: string; scopes?: string[]; claims?: Record<string, unknown> };
  transportRequest?: unknown;
}

/**
 * The scopes one request needs, from its params and its target (see `McpDispatcher.requiredScopes`).
 */
export type ScopeResolver = (params: JsonObject, target: unknown, caller?: McpCaller) => readonly string[] | undefined;

/**
 * Checks the `Mcp-Param-*` headers of a modern request against its params (see
 * `McpDispatcher.checkHeaders`): a message on mismatch, else undefined.
 */
export type HeaderCheck = (
  params: JsonObject,
  getHeader: (name: string) => string | undefined,
  target: unknown,
  caller?: McpCaller,
) => string | undefined;

/**
 * Finds the capability a request of one method targets (the tool of `tools/call`), once per
 * call; the caller, when known, for what depends on it (its tool sets).
 */
export type TargetFinder = (params: JsonObject, caller?: McpCaller) => unknown;

/** Settles what a method's checks read of the caller (its tool sets) before they run; never rejects. */
export type MethodPreparer = (caller: McpCaller) => void | Promise<void>;

/** What a feature attaches to a declared method (see `McpDispatcher.define`). */
export interface McpMethodSpec {
  /** The handler; a feature may attach only rules (scopes) to a method another one handles. */
  handler?: MethodHandler;
  /** The eras this handler serves, when not every era of the declaration. */
  eras?: readonly ProtocolEra[];
  /** Finds the capability the request targets; looked up once per call. */
  find?: TargetFinder;
  /** The OAuth scopes a request needs, enforced by the transports before it runs. */
  scopes?: ScopeResolver;
  /** Checks the request's headers against its params (2026-07-28 over Streamable HTTP). */
  headers?: HeaderCheck;
  /** Runs before the checks of a body holding a request of this method (see `McpMethodTable.prepareCaller`). */
  prepare?: MethodPreparer;
}

/** @internal */
export interface MethodEntry {
  readonly declaration: McpMethodDeclaration;
  legacy?: MethodHandler;
  modern?: MethodHandler;
  find?: TargetFinder;
  scopes?: ScopeResolver;
  headers?: HeaderCheck;
  prepare?: MethodPreparer;
}
