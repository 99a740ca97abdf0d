import { Module, type DynamicModule, type ForwardReference, type Provider, type Type } from '@nestjs/common';

/**
 * Options of `McpModule.forFeature()`: one set of providers whose MCP capabilities are
 * registered under a name prefix.
 *
 * @publicApi
 */
export interface McpToolsetOptions {
  /**
   * Prepended to the name of every tool and prompt of these providers (`eu_` + `stock` →
   * `eu_stock`). Letters, digits, `_`, `-`, `.`. Resource URIs are not changed: give each
   * instance its own URIs. @default '' (no prefix)
   */
  prefix?: string;
  /**
   * The providers of this toolset, with the options they inject: `[WarehouseTools,
   * { provide: WAREHOUSE_OPTIONS, useValue: { region: 'eu' } }]`. Each `forFeature()` call is its own
   * module, so each gets its own instances.
   */
  providers: Provider[];
  /** Modules these providers need. */
  imports?: Array<Type<unknown> | DynamicModule | Promise<DynamicModule> | ForwardReference>;
  /** Providers to make available to the importing module. */
  exports?: Array<Provider | string | symbol | Type<unknown>>;
  /** How bootstrap errors name this toolset. @default `McpModule.forFeature #<n> (prefix "<prefix>")`, n counting calls */
  label?: string;
}

/** @internal The marker each toolset module carries, read by McpDiscovery through the provider's host module. */
export interface McpToolsetMarker {
  prefix: string;
  label: string;
}

/** @internal */
export const MCP_TOOLSET = Symbol.for('nestjs-model-context.toolset');

const PREFIX_PATTERN = /^[A-Za-z0-9_.-]*$/;
let sequence = 0;

/** @internal The module class behind every `McpModule.forFeature()` call. */
@Module({})
export class McpToolsetModule {}

/** @internal */
export function createToolsetModule(options: McpToolsetOptions): DynamicModule {
  const prefix = options.prefix ?? '';
  if (typeof prefix !== 'string' || !PREFIX_PATTERN.test(prefix)) {
    throw new Error(
      `McpModule.forFeature(): prefix ${JSON.stringify(prefix)} is not a valid name prefix. Use letters, digits, "_", "-" or "." (for example "eu_").`,
    );
  }
  if (!Array.isArray(options.providers) || options.providers.length === 0) {
    throw new Error(
      `McpModule.forFeature(prefix ${JSON.stringify(prefix)}): "providers" is empty. List the provider classes whose tools this toolset registers.`,
    );
  }
  // The sequence number makes each call a distinct module for Nest, which otherwise merges
  // dynamic modules with equal metadata: two identical calls must clash by name, not vanish.
  const id = ++sequence;
  const marker: McpToolsetMarker & { sequence: number } = {
    prefix,
    label: options.label ?? `McpModule.forFeature #${id} (prefix "${prefix}")`,
    sequence: id,
  };
  return {
    module: McpToolsetModule,
    imports: options.imports ?? [],
    providers: [...options.providers, { provide: MCP_TOOLSET, useValue: marker }],
    exports: options.exports ?? [],
  };
}

/** The toolset a provider was declared in, through the module that hosts it. */
export function toolsetOf(wrapper: {
  host?: { providers: Map<unknown, { instance?: unknown }> } | undefined;
}): McpToolsetMarker | undefined {
  const marker = wrapper.host?.providers.get(MCP_TOOLSET)?.instance;
  return marker && typeof marker === 'object' ? (marker as McpToolsetMarker) : undefined;
}
