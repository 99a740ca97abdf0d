import { Injectable } from '@nestjs/common';
import { CUSTOM_ROUTE_ARGS_METADATA } from '@nestjs/common/constants.js';
import { MCP_PARAM_ARGS_METADATA, McpParamtype } from '../common/mcp.constants.js';

/** Reads every capability method's parameters; each pack reads its own decorators (McpFeature.capabilityKeys). */
@Injectable()
export class McpMetadataAccessor {
  /** The method's `@Args()` parameters with their property name (undefined = the whole object). */
  getArgsParams(owner: object, methodName: string): Array<{ index: number; data: unknown }> {
    const metadata: Record<string, { index: number; data?: unknown }> | undefined = Reflect.getMetadata(
      MCP_PARAM_ARGS_METADATA,
      owner,
      methodName,
    );
    if (!metadata) return [];
    return Object.entries(metadata)
      .filter(([key]) => key.startsWith(`${McpParamtype.ARGS}:`))
      .map(([, value]) => ({ index: value.index, data: value.data }));
  }

  /**
   * Parameters decorated by a decorator that shares Nest's route-arguments key but is neither ours
   * nor made with `createParamDecorator` (`@Body()`, GraphQL's `@Args()`...): the MCP params
   * factory has no value for them.
   */
  getForeignParams(owner: object, methodName: string): Array<{ index: number; type: string }> {
    const metadata: Record<string, { index: number }> | undefined = Reflect.getMetadata(
      MCP_PARAM_ARGS_METADATA,
      owner,
      methodName,
    );
    const ours = new Set(
      Object.values(McpParamtype)
        .filter((v) => typeof v === 'number')
        .map(String),
    );
    return Object.entries(metadata ?? {})
      .filter(([key]) => !key.includes(CUSTOM_ROUTE_ARGS_METADATA) && !ours.has(key.split(':')[0]!))
      .map(([key, value]) => ({ index: value.index, type: key.split(':')[0]! }))
      .sort((a, b) => a.index - b.index);
  }

  /** Indices of every decorated parameter of the method (ours, Nest's custom ones alike). */
  getDecoratedParamIndices(owner: object, methodName: string): Set<number> {
    const metadata: Record<string, { index: number }> | undefined = Reflect.getMetadata(
      MCP_PARAM_ARGS_METADATA,
      owner,
      methodName,
    );
    return new Set(Object.values(metadata ?? {}).map((value) => value.index));
  }
}
