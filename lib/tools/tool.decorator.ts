import { SetMetadata, type Type } from '@nestjs/common';
import { MCP_TOOL_METADATA } from '../common/mcp.constants.js';
import type { JsonObject, McpIcon, ToolAnnotations } from '../protocol/mcp-types.js';
import type { StandardSchemaV1 } from '../schema/standard-schema.js';
import type { ListCacheHint } from '../protocol/catalog.js';

/**
 * Options of `@Tool()`.
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
   * Runs calls as tasks, for long work: the client gets a task id at once and polls the task
   * (`io.modelcontextprotocol/tasks` on 2026-07-28, the experimental tasks of 2025-11-25). The
   * method stays as it is; its progress and log messages become the task's status message, and a
   * question it asks (elicitation, sampling, roots) moves the task to `input_required`.
   * `optional`: a client that does not support tasks gets the result in the call itself;
   * `required`: such a client gets error -32021 (2026-07-28) or -32601 (2025-11-25).
   */
  task?: 'optional' | 'required';
  /**
   * The tool sets this tool belongs to (names defined in `McpModule.forRoot({ toolSets })`), added
   * to those of its class's `@ToolSets()`. A caller sees and calls only the tools of the sets it
   * was given; a tool of no set is seen by every caller. Without `toolSets` configured, it is
   * listed as any tool.
   */
  sets?: readonly string[];
}

/** @internal */
export interface ToolMetadata extends ToolOptions {
  methodName: string;
}

/**
 * Marks a provider method as an MCP tool. The method receives its validated arguments through
 * `@Args()` and the call's context through `@Ctx()`, and may return a value, a Promise or an
 * Observable.
 *
 * @example
 * ```ts
 * @Injectable()
 * export class TaskTools {
 *   @Tool({ description: 'Create a task' })
 *   create(@Args() input: CreateTaskDto) { return this.tasks.create(input); }
 * }
 * ```
 * @publicApi
 */
export function Tool(options?: ToolOptions): MethodDecorator;
/** @publicApi */
export function Tool(name: string, options?: Omit<ToolOptions, 'name'>): MethodDecorator;
export function Tool(nameOrOptions?: string | ToolOptions, maybeOptions?: Omit<ToolOptions, 'name'>): MethodDecorator {
  const options: ToolOptions =
    typeof nameOrOptions === 'string' ? { ...maybeOptions, name: nameOrOptions } : { ...nameOrOptions };
  return (target, propertyKey, descriptor) => {
    const metadata: ToolMetadata = { ...options, methodName: String(propertyKey) };
    SetMetadata(MCP_TOOL_METADATA, metadata)(target, propertyKey, descriptor);
  };
}
