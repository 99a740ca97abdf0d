import { ConfigurableModuleBuilder } from '@nestjs/common';
import type { McpModuleOptions } from './interfaces/mcp-module-options.interface.js';
import { MCP_DEFAULT_PATH } from './mcp.constants.js';

/**
 * Options that shape the module itself and so must be known synchronously, even with
 * `forRootAsync()`: routes are fixed when the module is defined.
 *
 * @publicApi
 */
export interface McpModuleExtras {
  /** The endpoint path, relative to any global prefix. @default 'mcp' */
  path: string;
  /** Register the module globally. @default false */
  isGlobal: boolean;
}

export const {
  ConfigurableModuleClass: McpConfigurableModule,
  MODULE_OPTIONS_TOKEN: MCP_MODULE_OPTIONS,
  OPTIONS_TYPE: MCP_OPTIONS_TYPE,
  ASYNC_OPTIONS_TYPE: MCP_ASYNC_OPTIONS_TYPE,
} = new ConfigurableModuleBuilder<McpModuleOptions>({ moduleName: 'Mcp' })
  .setClassMethodName('forRoot')
  .setFactoryMethodName('createMcpOptions')
  .setExtras<McpModuleExtras>({ path: MCP_DEFAULT_PATH, isGlobal: false }, (definition, extras) => ({
    ...definition,
    global: extras.isGlobal,
  }))
  .build();

/** @publicApi */
export type McpModuleAsyncOptions = typeof MCP_ASYNC_OPTIONS_TYPE;
/** @publicApi */
export type McpModuleForRootOptions = typeof MCP_OPTIONS_TYPE;
