import { HttpException, Injectable } from '@nestjs/common';
import { ExternalContextCreator } from '@nestjs/core';
import { Observable, catchError, filter, fromEvent, isObservable, of, takeUntil } from 'rxjs';
import { isInputRequiredSignal } from '../protocol/interaction.js';
import { isEmission } from '../protocol/emission.js';
import { defineCallParam } from '../decorators/params.decorators.js';
import { MCP_PARAM_ARGS_METADATA, McpParamtype } from '../mcp.constants.js';
import { McpError, ToolError } from '../protocol/errors.js';
import type { McpCall } from './mcp-call.interface.js';
import { MCP_CONTEXT_TYPE } from './mcp-execution-context.js';
import { McpParamsFactory } from './mcp-params.factory.js';

export type McpInvoker = (call: McpCall) => Observable<unknown>;

const paramsFactory = new McpParamsFactory();

/**
 * Wraps provider methods with Nest's ExternalContextCreator (the way @nestjs/graphql wraps
 * resolvers) so that guards, interceptors, pipes and exception filters apply to every call.
 */
@Injectable()
export class McpHandlerFactory {
  constructor(private readonly externalContextCreator: ExternalContextCreator) {}

  create(instance: object, methodName: string): McpInvoker {
    const original = (instance as Record<string, (...args: unknown[]) => unknown>)[methodName];
    const owner = Object.getPrototypeOf(instance).constructor as object;
    const callIndex = this.ensureCallParam(instance, owner, methodName, original);
    // Nest collapses an Observable result into its last value, so the callback handed to it
    // routes progress/log emissions to the context, and stops the handler's Observable when the
    // call is cancelled (teardown runs at once). The module's own deliberate outcomes (tool and
    // protocol errors, input requests) travel as values, so Nest does not log them as crashes;
    // HttpExceptions and everything else still reach exception filters.
    const callback = function (this: unknown, ...params: unknown[]): unknown {
      const call = params[callIndex] as McpCall;
      let result: unknown;
      try {
        result = original.apply(this, params.slice(0, callIndex));
      } catch (error) {
        if (isDeliberate(error)) return new Deliberate(error);
        throw error;
      }
      if (result instanceof Promise) {
        return result.catch((error: unknown) => {
          if (isDeliberate(error)) return new Deliberate(error);
          throw error;
        });
      }
      if (!isObservable(result)) return result;
      return result.pipe(
        filter((value) => {
          if (!isEmission(value)) return true;
          value.apply(call.context);
          return false;
        }),
        takeUntil(fromEvent(call.context.signal, 'abort')),
        catchError((error: unknown) => {
          if (isDeliberate(error)) return of(new Deliberate(error));
          throw error;
        }),
      );
    };
    for (const key of Reflect.getMetadataKeys(original)) {
      Reflect.defineMetadata(key, Reflect.getMetadata(key, original), callback);
    }
    const target = this.externalContextCreator.create(
      instance,
      callback,
      methodName,
      MCP_PARAM_ARGS_METADATA,
      paramsFactory,
      undefined,
      undefined,
      undefined,
      MCP_CONTEXT_TYPE,
    );
    return (call) =>
      new Observable<unknown>((subscriber) => {
        target(call.context.request, undefined, call).then(
          (value: unknown) => {
            if (value instanceof Deliberate) return subscriber.error(value.error);
            subscriber.next(value);
            subscriber.complete();
          },
          (error: unknown) => subscriber.error(toToolError(error)),
        );
      });
  }

  /** The hidden parameter sits after every declared one, so user parameters keep their indices. */
  private ensureCallParam(instance: object, owner: object, methodName: string, original: (...args: unknown[]) => unknown): number {
    const metadata: Record<string, { index: number }> =
      Reflect.getMetadata(MCP_PARAM_ARGS_METADATA, owner, methodName) ?? {};
    const existing = Object.keys(metadata).find((key) => key.startsWith(`${McpParamtype.CALL}:`));
    if (existing) return metadata[existing].index;
    const paramtypes: unknown[] = Reflect.getMetadata('design:paramtypes', instance, methodName) ?? [];
    const maxIndex = Math.max(-1, ...Object.values(metadata).map((m) => m.index));
    const index = Math.max(paramtypes.length, original.length, maxIndex + 1);
    defineCallParam(Object.getPrototypeOf(instance), methodName, index);
    return index;
  }
}

class Deliberate {
  constructor(readonly error: unknown) {}
}

function isDeliberate(error: unknown): boolean {
  return error instanceof ToolError || error instanceof McpError || isInputRequiredSignal(error);
}

/** Nest HTTP exceptions are messages meant for the caller: the model sees them as tool errors. */
function toToolError(error: unknown): unknown {
  if (error instanceof McpError || error instanceof ToolError) return error;
  if (error instanceof HttpException) return new ToolError(httpExceptionMessage(error));
  return error;
}

function httpExceptionMessage(error: HttpException): string {
  const response = error.getResponse();
  if (typeof response === 'string') return response;
  const message = (response as { message?: unknown }).message;
  if (Array.isArray(message)) return message.join('; ');
  return typeof message === 'string' ? message : error.message;
}
