import { Injectable, Type } from '@nestjs/common';
import { Subject } from 'rxjs';
import type { McpCatalog, ToolRuntime } from '../protocol/catalog.js';
import type { McpContext } from '../protocol/context.js';
import type { JsonObject } from '../protocol/mcp-types.js';
import type { ToolOptions } from '../decorators/tool.decorator.js';
import * as messages from '../mcp.messages.js';
import { ToolRuntimeFactory, toObservable } from './tool-runtime.factory.js';

/** @publicApi */
export interface McpRegistryChange {
  kind: 'tools';
  type: 'added' | 'removed';
  name: string;
}

/**
 * A tool added at runtime. It goes through the same schema emission and validation as a
 * decorated one.
 *
 * @publicApi
 */
export interface DynamicToolDefinition<TArgs = unknown> extends Omit<ToolOptions, 'name' | 'input'> {
  name: string;
  input?: Type<TArgs> | JsonObject;
  handler: (args: TArgs, ctx: McpContext) => unknown;
}

/**
 * The capabilities one McpModule serves. Filled by discovery at bootstrap; add and remove tools
 * at runtime through it. Each McpModule has its own registry.
 *
 * @publicApi
 */
@Injectable()
export class McpRegistry implements McpCatalog {
  private readonly toolMap = new Map<string, { runtime: ToolRuntime; site: string }>();
  private toolList: ToolRuntime[] = [];
  private changeCount = 0;
  private readonly changeSubject = new Subject<McpRegistryChange>();
  /** @internal */
  factory!: ToolRuntimeFactory;
  /** @internal */
  namePattern: RegExp = /^[A-Za-z0-9_-]{1,64}$/;

  /** Emits after every runtime change (not for bootstrap discovery). */
  readonly changes$ = this.changeSubject.asObservable();

  get version(): number {
    return this.changeCount;
  }

  tools(): readonly ToolRuntime[] {
    return this.toolList;
  }

  tool(name: string): ToolRuntime | undefined {
    return this.toolMap.get(name)?.runtime;
  }

  /** Names of the registered tools, in list order. */
  toolNames(): string[] {
    return this.toolList.map((t) => t.name);
  }

  /** Adds a tool at runtime; clients are told the list changed. */
  addTool<TArgs>(definition: DynamicToolDefinition<TArgs>): void {
    const { handler, ...rest } = definition;
    if (this.toolMap.has(definition.name)) throw new Error(messages.TOOL_DUPLICATE_RUNTIME(definition.name));
    const site = `McpRegistry.addTool(${definition.name})`;
    this.register(
      this.factory.build(rest, (args, _raw, ctx) => toObservable(handler(args as TArgs, ctx)), site),
      site,
    );
    this.changeSubject.next({ kind: 'tools', type: 'added', name: definition.name });
  }

  /** Removes a tool; returns false when there was none by that name. */
  removeTool(name: string): boolean {
    if (!this.toolMap.delete(name)) return false;
    this.toolList = this.toolList.filter((t) => t.name !== name);
    this.changeCount++;
    this.changeSubject.next({ kind: 'tools', type: 'removed', name });
    return true;
  }

  /** @internal Registers a built tool, failing on an invalid or duplicate name. */
  register(runtime: ToolRuntime, site: string): void {
    if (!this.namePattern.test(runtime.name)) {
      throw new Error(messages.INVALID_TOOL_NAME(runtime.name, site, this.namePattern));
    }
    const existing = this.toolMap.get(runtime.name);
    if (existing) throw new Error(messages.DUPLICATE_TOOL(runtime.name, existing.site, site));
    this.toolMap.set(runtime.name, { runtime, site });
    this.toolList = [...this.toolList, runtime];
    this.changeCount++;
  }
}
