import { Inject, Injectable, type OnApplicationShutdown } from '@nestjs/common';
import { McpClient } from './mcp-client.js';
import { McpClientError } from './mcp-client.error.js';
import type { McpClientModuleOptions } from './mcp-client.interfaces.js';
import { DUPLICATE_CLIENT, UNKNOWN_CLIENT } from './mcp-client.messages.js';

/** The resolved client list of one McpClientModule. @internal */
export const MCP_CLIENT_MODULE_OPTIONS = Symbol('MCP_CLIENT_MODULE_OPTIONS');

/**
 * Every configured client by name, and their shutdown: each client's connections close (stdio
 * children end) when the application closes.
 *
 * @publicApi
 */
@Injectable()
export class McpClients implements OnApplicationShutdown {
  private readonly clients = new Map<string, McpClient<any>>();

  constructor(@Inject(MCP_CLIENT_MODULE_OPTIONS) options: Pick<McpClientModuleOptions, 'clients'>) {
    for (const client of options.clients) {
      if (this.clients.has(client.name)) throw new Error(DUPLICATE_CLIENT(client.name));
      this.clients.set(client.name, new McpClient(client));
    }
  }

  /** The client named `name`; throws naming the configured ones when there is none. */
  get<Client extends McpClient<any> = McpClient>(name: string): Client {
    const client = this.clients.get(name);
    if (!client) throw new McpClientError('config', name, UNKNOWN_CLIENT(name, this.names()));
    return client as Client;
  }

  /** The configured client names. */
  names(): string[] {
    return [...this.clients.keys()];
  }

  async onApplicationShutdown(): Promise<void> {
    await Promise.all([...this.clients.values()].map((client) => client.close()));
  }
}
