import type { ExecutionContext } from '@nestjs/common';
import type { McpContext } from '../protocol/context.js';
import type { McpCall } from '../protocol/mcp-call.js';

const LIST_METHODS = new Set(['tools/list', 'prompts/list', 'resources/list', 'resources/templates/list']);

/** The context type `ExecutionContext.getType()` returns inside MCP calls. @publicApi */
export const MCP_CONTEXT_TYPE = 'mcp';

/**
 * Typed access to an MCP call from guards, interceptors, filters and custom parameter decorators,
 * in the spirit of `GqlExecutionContext`.
 *
 * @example
 * ```ts
 * canActivate(context: ExecutionContext) {
 *   if (context.getType<McpContextType>() !== 'mcp') return true;
 *   const call = McpExecutionContext.create(context).getCall();
 *   return call.name !== 'delete_everything';
 * }
 * ```
 * @publicApi
 */
export class McpExecutionContext {
  private constructor(private readonly context: ExecutionContext) {}

  static create(context: ExecutionContext): McpExecutionContext {
    return new McpExecutionContext(context);
  }

  /** True when the context belongs to an MCP call. */
  isMcp(): boolean {
    return this.context.getType<string>() === MCP_CONTEXT_TYPE;
  }

  getCall(): McpCall {
    return this.context.getArgByIndex<McpCall>(2);
  }

  getMcpContext(): McpContext {
    return this.getCall().context;
  }

  /** The HTTP request as the app's guards see it (Express's `req`, Fastify's request); undefined on stdio. */
  getRequest<T = unknown>(): T {
    return this.context.getArgByIndex<T>(0);
  }

  getArguments<T = unknown>(): T {
    return this.getCall().arguments as T;
  }

  /**
   * True while a list (`tools/list`, `prompts/list`, `resources/list`,
   * `resources/templates/list`) asks the guards whether to show a capability (no arguments yet).
   */
  isListing(): boolean {
    return LIST_METHODS.has(this.getCall().method);
  }

  /** The authenticated principal (id, scopes, claims), when authorization is configured. */
  getPrincipal(): { id: string; scopes?: string[]; claims?: Record<string, unknown> } | undefined {
    return this.getCall().context.auth;
  }

  unwrap(): ExecutionContext {
    return this.context;
  }
}

/** @publicApi */
export type McpContextType = typeof MCP_CONTEXT_TYPE;
