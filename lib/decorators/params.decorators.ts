import type { PipeTransform, Type } from '@nestjs/common';
import { MCP_PARAM_ARGS_METADATA, McpParamtype } from '../common/mcp.constants.js';

type Pipe = PipeTransform | Type<PipeTransform>;

function paramDecorator(type: McpParamtype, data?: unknown, pipes: Pipe[] = []): ParameterDecorator {
  return (target, propertyKey, index) => {
    if (propertyKey === undefined) return;
    const owner = target.constructor;
    const existing = Reflect.getMetadata(MCP_PARAM_ARGS_METADATA, owner, propertyKey) ?? {};
    Reflect.defineMetadata(
      MCP_PARAM_ARGS_METADATA,
      { ...existing, [`${type}:${index}`]: { index, data, pipes } },
      owner,
      propertyKey,
    );
  };
}

/**
 * Injects the tool's validated arguments: an instance of the input DTO (or the raw object for a
 * JSON Schema input). Give a property name to inject one argument. Pipes run on the value, after
 * the module's own validation, like pipes on `@Body()`.
 *
 * @publicApi
 */
export function Args(property?: string | Pipe, ...pipes: Pipe[]): ParameterDecorator {
  if (property !== undefined && typeof property !== 'string')
    return paramDecorator(McpParamtype.ARGS, undefined, [property, ...pipes]);
  return paramDecorator(McpParamtype.ARGS, property, pipes);
}

/**
 * Injects the call's `McpContext`: client info, protocol version and era, the request `_meta`,
 * the raw HTTP request, an AbortSignal, and progress/log reporting.
 *
 * @publicApi
 */
export function Ctx(): ParameterDecorator {
  return paramDecorator(McpParamtype.CONTEXT);
}

/**
 * Injects the raw transport request (the Express request over HTTP; undefined on stdio).
 *
 * @publicApi
 */
export function McpRequest(): ParameterDecorator {
  return paramDecorator(McpParamtype.REQUEST);
}

/** @internal Adds the hidden trailing parameter the execution layer reads the call from. */
export function defineCallParam(owner: object, methodName: string, index: number): void {
  paramDecorator(McpParamtype.CALL)(owner, methodName, index);
}
