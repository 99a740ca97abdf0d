import { Module, type DynamicModule } from '@nestjs/common';
import type { McpMountModuleOptions } from './mcp-mount.interfaces.js';
import { MCP_MOUNT_OPTIONS, McpMounter } from './mcp-mounter.js';

/**
 * A gateway: mounts the servers of McpClientModule clients into this app's MCP endpoint, behind
 * the app's own auth, guards, limits, events and traces. Import it beside McpModule and
 * McpClientModule; mounting happens at bootstrap, and a name that clashes after prefixing fails it.
 * It is a module beside McpModule, not a `McpModule.forRoot()` option, so that the root entry
 * never loads the client code (the `/client` subpath and its optional peer).
 *
 * @example
 * ```ts
 * McpMountModule.forRoot({ mounts: [{ client: 'everything', prefix: 'everything_', exclude: ['get-env'] }] })
 * ```
 * @publicApi
 */
@Module({})
export class McpMountModule {
  static forRoot(options: McpMountModuleOptions): DynamicModule {
    return { module: McpMountModule, providers: [{ provide: MCP_MOUNT_OPTIONS, useValue: options }, McpMounter] };
  }
}
