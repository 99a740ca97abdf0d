import type { ParamsFactory } from '@nestjs/core';
import { McpParamtype } from '../common/mcp.constants.js';
import type { McpCall } from '../protocol/mcp-call.js';

/** Maps the module's parameter decorators to values. Handler args are `[request, response, call]`. */
export class McpParamsFactory implements ParamsFactory {
  exchangeKeyForValue(type: number, data: unknown, args: unknown[]): unknown {
    const call = args[2] as McpCall | undefined;
    switch (type) {
      case McpParamtype.ARGS:
        return data === undefined || call === undefined
          ? call?.arguments
          : (call.arguments as Record<string, unknown> | undefined)?.[data as string];
      case McpParamtype.CONTEXT:
        return call?.context;
      case McpParamtype.REQUEST:
        return args[0];
      case McpParamtype.CALL:
        return call;
      default:
        return undefined;
    }
  }
}
