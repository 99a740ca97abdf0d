import type { Observable } from 'rxjs';
import type { McpContext } from './context.js';
import type { JsonObject, ToolDescriptor } from './mcp-types.js';
import type { ProtocolEra } from './versions.js';

export type ArgumentsOutcome = { ok: true; value: unknown } | { ok: false; message: string };

/** A callable tool as the dispatcher sees it: prepared once, invoked per call. */
export interface ToolRuntime {
  readonly name: string;
  /** The descriptor for each era (legacy drops non-object output schemas). */
  readonly descriptors: Readonly<Record<ProtocolEra, ToolDescriptor>>;
  readonly hasOutputSchema: boolean;
  /** Arguments mirrored into `Mcp-Param-*` headers (`x-mcp-header` in the input schema). */
  readonly headerParams?: readonly HeaderParam[];
  /** Casts and validates raw arguments. A failure message names each field and rule. */
  parseArguments(args: JsonObject): ArgumentsOutcome | Promise<ArgumentsOutcome>;
  /**
   * Runs the tool. Emits the values the handler produced (the last one is the result) and errors
   * with whatever it threw. Unsubscribing cancels the call.
   */
  invoke(args: unknown, rawArgs: JsonObject, ctx: McpContext): Observable<unknown>;
  /** Checks a result against the output schema: null when valid, else a readable message. */
  checkOutput?(value: unknown): string | null;
}

/**
 * The port through which the dispatcher reads capabilities. The Nest registry implements it;
 * the protocol layer never sees Nest.
 */
export interface McpCatalog {
  /** Increases on every change, so that cached list results and cursors can expire. */
  readonly version: number;
  tools(): readonly ToolRuntime[];
  tool(name: string): ToolRuntime | undefined;
}

export interface HeaderParam {
  /** Property names from the arguments root to the value. */
  path: readonly string[];
  /** The name part of `Mcp-Param-{header}`. */
  header: string;
  type: 'string' | 'integer' | 'boolean';
}
