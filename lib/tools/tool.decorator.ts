import { SetMetadata } from '@nestjs/common';
import type { ToolOptions } from '../discovery/tool-types.js';

export type { ToolOptions } from '../discovery/tool-types.js';

/** The metadata key of `@Tool()`. @internal */
export const MCP_TOOL_METADATA = 'mcp:tool';

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
