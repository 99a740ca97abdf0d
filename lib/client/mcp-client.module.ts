import { Inject, Module, type DynamicModule, type Provider } from '@nestjs/common';
import type { McpClientModuleAsyncOptions, McpClientModuleOptions, McpClientOptions } from './mcp-client.interfaces.js';
import { DUPLICATE_CLIENT, NAMES_MISMATCH } from './mcp-client.messages.js';
import { McpClientHealthIndicator } from './mcp-client.health.js';
import { MCP_CLIENT_MODULE_OPTIONS, McpClients } from './mcp-clients.js';

/**
 * The injection token of the client named `name`, for `@Inject()` or `moduleRef.get()`.
 * @publicApi
 */
export function getMcpClientToken(name: string): string {
  return `McpClient:${name}`;
}

/**
 * Injects the client named `name` of McpClientModule.
 * @example
 * ```ts
 * constructor(@InjectMcpClient('github') private readonly github: McpClient) {}
 * ```
 * @publicApi
 */
export function InjectMcpClient(name: string): PropertyDecorator & ParameterDecorator {
  return Inject(getMcpClientToken(name));
}

/**
 * MCP clients for the app's providers: one per configured upstream server, over Streamable HTTP
 * (both protocol eras), stdio or in process, each injected by name with `@InjectMcpClient(name)`.
 * Needs the optional peer `@modelcontextprotocol/client`, loaded when a client first connects.
 *
 * @example
 * ```ts
 * McpClientModule.forRoot({
 *   clients: [
 *     { name: 'everything', transport: { type: 'stdio', command: 'npx', args: ['@modelcontextprotocol/server-everything'] } },
 *     { name: 'crm', transport: { type: 'http', url: 'https://crm.internal/mcp' }, auth: { type: 'token-exchange', tokenEndpoint, clientId, clientSecret, resource: 'https://crm.internal' } },
 *   ],
 * })
 * ```
 * @publicApi
 */
@Module({})
export class McpClientModule {
  static forRoot(options: McpClientModuleOptions): DynamicModule {
    const names = options.clients.map((client) => client.name);
    return McpClientModule.build(
      names,
      { provide: MCP_CLIENT_MODULE_OPTIONS, useValue: { clients: options.clients } },
      [],
      options.isGlobal,
    );
  }

  /** Options from a factory; the client `names` are given up front so that each can be injected. */
  static forRootAsync(options: McpClientModuleAsyncOptions): DynamicModule {
    const declared = [...options.names];
    return McpClientModule.build(
      declared,
      {
        provide: MCP_CLIENT_MODULE_OPTIONS,
        inject: options.inject ?? [],
        useFactory: async (...args: unknown[]) => {
          const built = await options.useFactory(...args);
          const names = built.clients.map((client: McpClientOptions) => client.name);
          if ([...names].sort().join('\u0000') !== [...declared].sort().join('\u0000'))
            throw new Error(NAMES_MISMATCH(declared, names));
          return built;
        },
      },
      options.imports ?? [],
      options.isGlobal,
    );
  }

  private static build(names: string[], optionsProvider: Provider, imports: any[], isGlobal = false): DynamicModule {
    const seen = new Set<string>();
    for (const name of names) {
      if (seen.has(name)) throw new Error(DUPLICATE_CLIENT(name));
      seen.add(name);
    }
    const named: Provider[] = names.map((name) => ({
      provide: getMcpClientToken(name),
      useFactory: (clients: McpClients) => clients.get(name),
      inject: [McpClients],
    }));
    return {
      module: McpClientModule,
      global: isGlobal,
      imports,
      providers: [optionsProvider, McpClients, McpClientHealthIndicator, ...named],
      exports: [McpClients, McpClientHealthIndicator, ...names.map(getMcpClientToken)],
    };
  }
}
