// Every entry point of the package, as a CommonJS app names it. Type-checked twice by `npm test`:
// with NodeNext (`exports`) and with TypeScript's older `moduleResolution: node`, which reads
// `typesVersions` instead.
import { McpModule, Tool, type McpContext, type McpModuleOptions } from 'nestjs-model-context';
import type { ToolOptions, McpLimitOptions } from 'nestjs-model-context/options';
import { McpSessionAdmin, type McpSessionState } from 'nestjs-model-context/sessions';
import { McpInProcessTransport, McpStdio } from 'nestjs-model-context/transports';
import { InMemorySessionStore, type McpSessionStore } from 'nestjs-model-context/stores';
import { McpRedisThrottlerStorage, type McpRedisClient } from 'nestjs-model-context/redis';
import { McpEvents, McpHealthIndicator, type McpEvent } from 'nestjs-model-context/telemetry';
import { catalogCoverage, lintCatalog } from 'nestjs-model-context/catalog';
import { LEGACY_PROTOCOL_VERSIONS, type TextContent } from 'nestjs-model-context/protocol';
import { McpTestClient } from 'nestjs-model-context/testing';

export const values = {
  McpModule,
  Tool,
  McpSessionAdmin,
  McpInProcessTransport,
  McpStdio,
  InMemorySessionStore,
  McpRedisThrottlerStorage,
  McpEvents,
  McpHealthIndicator,
  catalogCoverage,
  lintCatalog,
  LEGACY_PROTOCOL_VERSIONS,
  McpTestClient,
};

export interface Named {
  context: McpContext;
  options: McpModuleOptions;
  tool: ToolOptions;
  limits: McpLimitOptions;
  state: McpSessionState;
  store: McpSessionStore;
  redis: McpRedisClient;
  event: McpEvent;
  text: TextContent;
}
