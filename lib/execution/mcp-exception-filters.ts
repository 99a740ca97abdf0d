import { HttpException, Logger } from '@nestjs/common';
import type { ContextId, ExternalContextCreator } from '@nestjs/core';
import { MCP_PARAM_ARGS_METADATA } from '../common/mcp.constants.js';
import type { McpCall } from '../protocol/mcp-call.js';
import { globalEnhancersOf } from './mcp-empty-pipeline.js';
import { MCP_CONTEXT_TYPE } from './mcp-execution-context.js';
import {
  EXCEPTION_FILTERS_METADATA,
  FILTER_CATCH_EXCEPTIONS,
  LIST_PROBE_METHOD,
  asHandler,
  isDeliberate,
  paramsFactory,
} from './mcp-pipeline-parts.js';

/**
 * The exception filters of MCP calls, run apart from guards, interceptors and pipes, so that an
 * app filter written for HTTP only cannot turn a tool's HttpException into an internal error.
 */
export class McpExceptionFilters {
  private readonly logger = new Logger('McpModule');
  /** Filter classes already reported as HTTP-only: the warning is said once per class. */
  private readonly warnedFilters = new Set<string>();

  constructor(private readonly externalContextCreator: ExternalContextCreator) {}

  /**
   * Runs the exception filters that apply to the method (method, class and global, chosen the way
   * Nest chooses them) on an error of the call. A filter's return value is the call's result; a
   * rethrown error is the call's error. A filter that fails on the MCP context itself (typically
   * `host.switchToHttp().getResponse().status(...)`, where there is no response) is reported once
   * per filter class, and the original exception stands, so an HttpException still reaches the
   * model as its message.
   */
  runner(
    instance: object,
    original: Function,
    contextId: ContextId | undefined,
    inquirerId: string | undefined,
  ): (error: unknown, call: McpCall) => Promise<unknown> {
    const pending = new WeakMap<McpCall, unknown>();
    const rethrow = asHandler(
      original as (...args: unknown[]) => unknown,
      function (_request: unknown, _response: unknown, call: McpCall): never {
        throw pending.get(call);
      },
    );
    // A method name without parameter metadata keeps pipes out, as for the list probe.
    const run = this.externalContextCreator.create(
      instance,
      rethrow,
      LIST_PROBE_METHOD,
      MCP_PARAM_ARGS_METADATA,
      paramsFactory,
      contextId,
      inquirerId,
      { guards: false, interceptors: false, filters: true },
      MCP_CONTEXT_TYPE,
    );
    const owner = Object.getPrototypeOf(instance).constructor as Function;
    return async (error, call) => {
      pending.set(call, error);
      try {
        return await run(call.context.request, undefined, call);
      } catch (outcome) {
        if (outcome === error || isDeliberate(outcome) || outcome instanceof HttpException) throw outcome;
        this.warnHttpOnlyFilter(this.selectFilterName(owner, original, error), call, error, outcome);
        throw error;
      } finally {
        pending.delete(call);
      }
    };
  }

  private warnHttpOnlyFilter(filterName: string, call: McpCall, error: unknown, failure: unknown): void {
    if (this.warnedFilters.has(filterName)) return;
    this.warnedFilters.add(filterName);
    const what = error instanceof Error ? error.constructor.name : typeof error;
    const why = failure instanceof Error ? failure.message : String(failure);
    this.logger.warn(
      `Exception filter ${filterName} failed while handling a ${what} from MCP ${call.method} "${call.name}" (${why}): ` +
        `it assumes an HTTP context, and MCP calls have none (no response object). The call's own error was used instead` +
        `${error instanceof HttpException ? " (the model gets the exception's message as an isError result)" : ''}. ` +
        `Make ${filterName} MCP-aware: at the top of catch(), \`if (host.getType<string>() === 'mcp') throw exception;\` ` +
        `(or return a CallToolResult there to shape the result). This warning is logged once per filter class.`,
    );
  }

  /** The filter Nest picks for the error: method filters first, then class, then global ones (last declared first). */
  private selectFilterName(owner: Function, method: Function, error: unknown): string {
    const config = globalEnhancersOf(this.externalContextCreator);
    const candidates = [
      ...(config?.getGlobalFilters() ?? []),
      ...(config?.getGlobalRequestFilters?.() ?? []).map((wrapper) => wrapper.metatype),
      ...((Reflect.getMetadata(EXCEPTION_FILTERS_METADATA, owner) as unknown[] | undefined) ?? []),
      ...((Reflect.getMetadata(EXCEPTION_FILTERS_METADATA, method) as unknown[] | undefined) ?? []),
    ].reverse();
    const chosen = candidates.find((candidate) => {
      if (!candidate) return false;
      const ctor = (typeof candidate === 'function' ? candidate : (candidate as object).constructor) as Function;
      const types =
        ((Reflect.getMetadata(FILTER_CATCH_EXCEPTIONS, ctor.prototype) ??
          Reflect.getMetadata(FILTER_CATCH_EXCEPTIONS, ctor)) as Function[] | undefined) ?? [];
      return types.length === 0 || types.some((type) => error instanceof type);
    });
    if (!chosen) return 'an exception filter';
    return (
      (typeof chosen === 'function' ? chosen.name : (chosen as object).constructor.name) ||
      'an anonymous exception filter'
    );
  }
}
