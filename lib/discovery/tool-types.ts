import type { Type } from '@nestjs/common';
import type { Observable } from 'rxjs';
import type { ListCacheHint, McpAccess, ToolRuntime } from '../protocol/catalog.js';
import type { McpContext } from '../protocol/context.js';
import type { JsonObject, McpIcon, ToolAnnotations } from '../protocol/mcp-types.js';
import type { StandardSchemaV1 } from '../schema/standard-schema.js';

// What the registry knows of tools without the tools pack (lib/tools/), which sits above it: the
// options a tool is declared with (by `@Tool()` or `McpRegistry.addTool`), the definition a
// runtime is built from, and the builder the pack hands the registry at construction.

/**
 * Options of `@Tool()`. A pack adds its own option to it by augmenting this interface from its
 * folder (tasks add `task`).
 *
 * @publicApi
 */
export interface ToolOptions {
  /** The tool's name. @default the method name in snake_case */
  name?: string;
  /** A human-friendly display name. */
  title?: string;
  /** What the tool does and when to use it: the model reads this to decide. */
  description?: string;
  /**
   * The arguments: a DTO class (validated with class-validator), a raw JSON Schema object
   * (validated as JSON Schema 2020-12), or any Standard Schema (zod 4, valibot, arktype: validated
   * through `~standard.validate`, listed with the library's own JSON Schema converter; type the
   * parameter with `InferArgs<typeof schema>`). @default the type of the `@Args()` parameter
   */
  input?: Type<unknown> | JsonObject | StandardSchemaV1;
  /**
   * The result's shape: a DTO class, a raw JSON Schema, or a Standard Schema (listed and checked
   * through its JSON Schema). Results are checked against it.
   */
  output?: Type<unknown> | JsonObject | StandardSchemaV1;
  /** Behaviour hints for clients (read-only, destructive, idempotent, open-world). */
  annotations?: ToolAnnotations;
  icons?: McpIcon[];
  _meta?: JsonObject;
  /**
   * How long this item's entry in its list stays fresh (2026-07-28): the list page holding it gets
   * the shortest `ttlMs` and turns `private` when this says so. A function `(ctx) => hint` is
   * computed per list request. @default the module's `cache.lists`
   */
  listCache?: ListCacheHint;
  /**
   * The tool sets this tool belongs to (names defined in `McpModule.forRoot({ toolSets })`), added
   * to those of its class's `@ToolSets()`. A caller sees and calls only the tools of the sets it
   * was given; a tool of no set is seen by every caller. Without `toolSets` configured, it is
   * listed as any tool.
   */
  sets?: readonly string[];
}

/** Tool options after the name is settled and the input type is known. */
export interface ToolDefinition extends Omit<ToolOptions, 'name' | 'input'>, McpAccess {
  name: string;
  input?: Type<unknown> | JsonObject | StandardSchemaV1;
}

export type ToolInvoke = ((args: unknown, rawArgs: JsonObject, ctx: McpContext) => Observable<unknown>) & {
  /** Counts a task call against the tool's rate limits before its task exists (see ToolRuntime.admit). */
  admit?: (args: unknown, rawArgs: JsonObject, ctx: McpContext) => Promise<void>;
};

/** Tool names as the MCP specification recommends them (`toolNamePattern`'s default). */
export const DEFAULT_TOOL_NAME_PATTERN = /^[A-Za-z0-9_-]{1,64}$/;

/** What a pack makes of a tool as it is built, from its definition (tasks read `task`). */
export type McpToolExtension = (runtime: ToolRuntime, definition: ToolDefinition, site: string) => ToolRuntime;

/** Builds the runtime of a tool definition (the tools pack's ToolRuntimeFactory). */
export interface McpToolBuilder {
  build(definition: ToolDefinition, invoke: ToolInvoke, site: string): ToolRuntime;
  /** Adds what a pack makes of every tool built from now on (packs extend it at construction). */
  extend(extension: McpToolExtension): void;
}

/** The DI token of the registry's {@link McpToolBuilder}, provided by the tools pack. @internal */
export const MCP_TOOL_BUILDER = Symbol.for('nestjs-model-context:McpToolBuilder');
