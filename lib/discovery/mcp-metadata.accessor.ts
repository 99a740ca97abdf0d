import { Injectable } from '@nestjs/common';
import { CUSTOM_ROUTE_ARGS_METADATA } from '@nestjs/common/constants.js';
import {
  MCP_COMPLETE_METADATA,
  MCP_PARAM_ARGS_METADATA,
  MCP_PROMPT_METADATA,
  MCP_PROMPT_REPOSITORY_METADATA,
  MCP_RESOURCE_METADATA,
  MCP_RESOURCE_REPOSITORY_METADATA,
  MCP_RESOURCE_TEMPLATE_METADATA,
  McpParamtype,
} from '../common/mcp.constants.js';
import type { ResourceMetadata, ResourceTemplateMetadata } from '../decorators/resource.decorator.js';
import type { PromptMetadata } from '../decorators/prompt.decorator.js';
import type { CompleteMetadata } from '../decorators/complete.decorator.js';
import type { PromptRepositoryMetadata, ResourceRepositoryMetadata } from '../decorators/repository.decorator.js';

// Packs add their own keys (McpFeature.capabilityKeys).
const MCP_METHOD_KEYS = [
  MCP_RESOURCE_METADATA,
  MCP_RESOURCE_TEMPLATE_METADATA,
  MCP_PROMPT_METADATA,
  MCP_COMPLETE_METADATA,
];

/** The only reader of the module's metadata keys. */
@Injectable()
export class McpMetadataAccessor {
  getResourceMetadata(target: unknown): ResourceMetadata | undefined {
    return typeof target === 'function'
      ? (Reflect.getMetadata(MCP_RESOURCE_METADATA, target) as ResourceMetadata | undefined)
      : undefined;
  }

  getResourceTemplateMetadata(target: unknown): ResourceTemplateMetadata | undefined {
    return typeof target === 'function'
      ? (Reflect.getMetadata(MCP_RESOURCE_TEMPLATE_METADATA, target) as ResourceTemplateMetadata | undefined)
      : undefined;
  }

  getPromptMetadata(target: unknown): PromptMetadata | undefined {
    return typeof target === 'function'
      ? (Reflect.getMetadata(MCP_PROMPT_METADATA, target) as PromptMetadata | undefined)
      : undefined;
  }

  /** Every `@Complete()` on the method (one method may complete several arguments). */
  getCompleteMetadata(target: unknown): CompleteMetadata[] {
    if (typeof target !== 'function') return [];
    return (Reflect.getMetadata(MCP_COMPLETE_METADATA, target) as CompleteMetadata[] | undefined) ?? [];
  }

  /** The `@ResourceRepository()` of a class. */
  getResourceRepositoryMetadata(target: unknown): ResourceRepositoryMetadata | undefined {
    return typeof target === 'function'
      ? (Reflect.getMetadata(MCP_RESOURCE_REPOSITORY_METADATA, target) as ResourceRepositoryMetadata | undefined)
      : undefined;
  }

  /** The `@PromptRepository()` of a class. */
  getPromptRepositoryMetadata(target: unknown): PromptRepositoryMetadata | undefined {
    return typeof target === 'function'
      ? (Reflect.getMetadata(MCP_PROMPT_REPOSITORY_METADATA, target) as PromptRepositoryMetadata | undefined)
      : undefined;
  }

  /** True when the method carries any of the core kinds' method decorators. */
  hasMcpMetadata(target: unknown): boolean {
    return typeof target === 'function' && MCP_METHOD_KEYS.some((key) => Reflect.hasMetadata(key, target));
  }

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
