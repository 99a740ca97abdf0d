import { Injectable } from '@nestjs/common';
import { MCP_PARAM_ARGS_METADATA, MCP_TOOL_METADATA, McpParamtype } from '../mcp.constants.js';
import type { ToolMetadata } from '../decorators/tool.decorator.js';

/** The only reader of the module's metadata keys. */
@Injectable()
export class McpMetadataAccessor {
  getToolMetadata(target: unknown): ToolMetadata | undefined {
    if (typeof target !== 'function') return undefined;
    return Reflect.getMetadata(MCP_TOOL_METADATA, target) as ToolMetadata | undefined;
  }

  /** Indices of the method's `@Args()` parameters. */
  getArgsParamIndices(owner: object, methodName: string): number[] {
    const metadata: Record<string, { index: number }> | undefined = Reflect.getMetadata(
      MCP_PARAM_ARGS_METADATA,
      owner,
      methodName,
    );
    if (!metadata) return [];
    return Object.entries(metadata)
      .filter(([key]) => key.startsWith(`${McpParamtype.ARGS}:`))
      .map(([, value]) => value.index);
  }
}
