import { HttpException } from '@nestjs/common';
import { Observable, type MonoTypeOperatorFunction } from 'rxjs';
import { isInputRequiredSignal } from '../protocol/interaction.js';
import { McpError, ToolError, httpExceptionMessage } from '../protocol/errors.js';
import { McpCancelledError } from '../protocol/dispatcher.js';
import { McpParamsFactory } from './mcp-params.factory.js';

// The pieces the Nest pipeline around a handler is made of (McpHandlerFactory builds it, the
// exception filters rerun part of it): the proxy Nest calls in place of the method, the params
// factory, and the module's own outcomes, which travel as values so Nest does not log them.

/** A method name without parameter metadata: keeps pipes (a global ValidationPipe) out. */
export const LIST_PROBE_METHOD = '__mcpListProbe__';
// Nest's own metadata keys (@UseFilters, @Catch), stable across Nest 11 and 12.
export const EXCEPTION_FILTERS_METADATA = '__exceptionFilters__';
export const FILTER_CATCH_EXCEPTIONS = '__filterCatchExceptions__';

export const paramsFactory = new McpParamsFactory();

/**
 * The function Nest calls in place of the method, and what `context.getHandler()` returns to
 * guards and interceptors: a proxy of the tool's own method (its `name`, `length` and metadata,
 * so audit logs and `Reflector.get(KEY, context.getHandler())` see the tool), that runs `invoke`.
 */
export function asHandler<T extends Function>(original: T, invoke: Function): T {
  const handler = new Proxy(original, {
    apply: (_target, thisArg, args: unknown[]) => Reflect.apply(invoke, thisArg, args),
  });
  // reflect-metadata keys its storage by object identity, so the proxy gets its own copy.
  for (const key of Reflect.getMetadataKeys(original))
    Reflect.defineMetadata(key, Reflect.getMetadata(key, original), handler);
  return handler;
}

/**
 * Mirrors the source until the call's signal aborts, then tears the source down and fails with
 * why (a cancellation, or the policy's ToolError on a timeout). Failing, not completing: an empty
 * completion reached Nest's lastValueFrom as EmptyError and was logged as a crash on every
 * client that dropped its stream; the reason is a deliberate outcome, which Nest does not log.
 */
export function untilAborted<T>(signal: AbortSignal): MonoTypeOperatorFunction<T> {
  return (source) =>
    new Observable<T>((subscriber) => {
      const stop = (): void => subscriber.error(isDeliberate(signal.reason) ? signal.reason : new McpCancelledError());
      if (signal.aborted) return stop();
      signal.addEventListener('abort', stop, { once: true });
      const inner = source.subscribe(subscriber);
      return () => {
        signal.removeEventListener('abort', stop);
        inner.unsubscribe();
      };
    });
}

export class Deliberate {
  constructor(readonly error: unknown) {}
}

/**
 * The module's own outcomes: tool and protocol errors, input requests, and cancellation (a client
 * that disconnects is no failure, and logging each one would let any caller flood the log).
 */
export function isDeliberate(error: unknown): boolean {
  return (
    error instanceof ToolError ||
    error instanceof McpError ||
    error instanceof McpCancelledError ||
    isInputRequiredSignal(error)
  );
}

/** Nest HTTP exceptions are messages meant for the caller: the model sees them as tool errors. */
export function toToolError(error: unknown): unknown {
  if (error instanceof McpError || error instanceof ToolError) return error;
  if (error instanceof HttpException) return new ToolError(httpExceptionMessage(error)!);
  return error;
}
