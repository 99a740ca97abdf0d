import { SetMetadata, type Type } from '@nestjs/common';
import { MCP_TOOL_METADATA } from '../mcp.constants.js';
import type { JsonObject, McpIcon, ToolAnnotations } from '../protocol/mcp-types.js';

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
   * The arguments: a DTO class (validated with class-validator) or a raw JSON Schema object
   * (validated as JSON Schema 2020-12). @default the type of the `@Args()` parameter
   */
  input?: Type<unknown> | JsonObject;
  /** The result's shape: a DTO class or a raw JSON Schema. Results are checked against it. */
  output?: Type<unknown> | JsonObject;
  /** Behaviour hints for clients (read-only, destructive, idempotent, open-world). */
  annotations?: ToolAnnotations;
  icons?: McpIcon[];
  _meta?: JsonObject;
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
