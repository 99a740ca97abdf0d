import {
  Logger,
  Module,
  VERSION_NEUTRAL,
  type DynamicModule,
  type MiddlewareConsumer,
  type NestModule,
  type Provider,
} from '@nestjs/common';
import type { McpModuleExtras } from './mcp.module-definition.js';
import { DiscoveryModule } from '@nestjs/core';
import { randomUUID } from 'node:crypto';
import { McpDiscovery } from './discovery/mcp-discovery.js';
import { McpMetadataAccessor } from './discovery/mcp-metadata.accessor.js';
import { MCP_REGISTRY_SETTINGS, McpRegistry, type McpRegistrySettings } from './discovery/mcp.registry.js';
import { dtoCompilerFor } from './discovery/dto-compiler.js';
import { McpHandlerFactory } from './execution/mcp-handler.factory.js';
import type { ResolvedMcpOptions } from './interfaces/mcp-module-options.interface.js';
import {
  MCP_DEFAULT_PATH,
  MCP_ENDPOINT_PATH,
  MCP_ENDPOINT_VERSION,
  MCP_HTTP_HANDLER,
  MCP_AUTHENTICATOR,
  MCP_EXPLORER,
  MCP_LEGACY_SSE,
  MCP_MODULE_ID,
  MCP_NOTIFICATION_BUS,
  MCP_RESOLVED_OPTIONS,
  MCP_REQUEST_STATE_SECRET,
  MCP_DISPATCHER,
  MCP_SESSION_STORE,
  MCP_FEATURE_OPTIONS,
} from './common/mcp.constants.js';
import {
  MCP_MODULE_OPTIONS,
  McpConfigurableModule,
  type McpModuleAsyncOptions,
  type McpModuleForRootOptions,
} from './mcp.module-definition.js';
import { resolveMcpOptions } from './mcp-options.resolver.js';
import type { Implementation } from './protocol/mcp-types.js';
import { McpDispatcher } from './protocol/dispatcher.js';
import type { McpFeatureOptions } from './protocol/feature-host.js';
import type { InteractionSupport } from './protocol/context.js';
import { InMemoryReplayGuard, RequestStateCodec } from './protocol/interaction.js';
import { InMemoryEventStore } from './protocol/event-store.js';
import { InProcessNotificationBus, type McpNotificationBus } from './protocol/notification-bus.js';
import { ElicitationSchemas } from './schema/elicitation-schema.js';
import { InMemorySessionStore, type McpSessionStore } from './protocol/session-store.js';
import { McpHttpHandler } from './transport/http-handler.js';
import { createMcpController } from './transport/mcp.controller.js';
import { createLegacySseController } from './transport/legacy-sse.controller.js';
import { createExplorerController, resolveExplorer } from './explorer/explorer.controller.js';
import { resolveLegacySse, type ResolvedLegacySseOptions } from './transport/legacy-sse.transport.js';
import { McpTransportLifecycle } from './transport/mcp-transport.lifecycle.js';
import { OriginPolicy } from './transport/origin-policy.js';
import { McpAuthenticator } from './auth/mcp-authenticator.js';
import { builtInTokenVerifier } from './oauth/built-in-verifier.provider.js';
import { McpPublicRoutes } from './explorer/public-routes.js';
import { MCP_REDIS, McpRedisBackend, requestStateSecret } from './redis/redis-backend.js';
import { McpPolicyGate } from './execution/mcp-policy-gate.js';
import { McpHealthIndicator } from './health/mcp-health.indicator.js';
import { createToolsetModule, type McpToolsetOptions } from './discovery/mcp-toolset.js';
import { SessionHooks } from './engine/session-hooks.js';
import { McpSessionAdmin } from './admin/mcp-session-admin.js';
import { createMcpAdminController } from './admin/mcp-admin.controller.js';
import { McpEvents } from './telemetry/events.js';
import { observabilityProviders } from './telemetry/observability.providers.js';
import { MCP_FEATURES, type McpFeature } from './discovery/mcp-feature.js';
import { featureProviders, featureRedisChannels } from './mcp-features.js';
import { optionSliceProviders } from './mcp-options.providers.js';
import { McpToolSets } from './tool-sets/mcp-tool-sets.service.js';

const coreProviders: Provider[] = [
  { provide: MCP_RESOLVED_OPTIONS, useFactory: resolveMcpOptions, inject: [MCP_MODULE_OPTIONS] },
  ...optionSliceProviders,
  McpRegistry,
  {
    provide: MCP_REGISTRY_SETTINGS,
    useFactory: (options: ResolvedMcpOptions): McpRegistrySettings => ({
      toolNamePattern: options.toolNamePattern,
      dtos: dtoCompilerFor(options.schemas.nullableOptionals),
    }),
    inject: [MCP_RESOLVED_OPTIONS],
  },
  McpMetadataAccessor,
  McpHandlerFactory,
  McpPolicyGate,
  McpDiscovery,
  {
    provide: MCP_DISPATCHER,
    useFactory: (
      options: ResolvedMcpOptions,
      registry: McpRegistry,
      bus: McpNotificationBus,
      redis: McpRedisBackend | null,
      features: McpFeature[],
    ) => {
      const logger = new Logger('McpDispatcher');
      const stateSecret = requestStateSecret(options, redis);
      const server = new McpDispatcher(
        {
          serverInfo: serverInfoOf(options),
          instructions: options.instructions,
          discoverCache: options.cache.discover,
          listCache: options.cache.lists,
          pageSize: options.pageSize,
          exposeInternalErrors: options.exposeInternalErrors,
          logger: { error: (m, t) => logger.error(m, t), warn: (m) => logger.warn(m) },
          interaction: interactionSupport(options),
          requestState: new RequestStateCodec(
            stateSecret,
            options.requestState.ttlMs,
            redis?.replayGuard ?? new InMemoryReplayGuard(),
          ),
          bus,
          guardAwareLists: options.guardAwareLists,
          enforceScopes: options.auth !== undefined,
          subscriptionsPerSession: options.limits.subscriptionsPerSession,
        },
        registry,
      );
      for (const feature of features) feature.install?.(server);
      return server;
    },
    inject: [MCP_RESOLVED_OPTIONS, McpRegistry, MCP_NOTIFICATION_BUS, MCP_REDIS, MCP_FEATURES],
  },
  {
    provide: MCP_FEATURE_OPTIONS,
    useFactory: (options: ResolvedMcpOptions, redis: McpRedisBackend | null): McpFeatureOptions => {
      const logger = new Logger('McpDispatcher');
      return {
        readCache: options.cache.reads,
        exposeInternalErrors: options.exposeInternalErrors,
        logger: { error: (m, t) => logger.error(m, t), warn: (m) => logger.warn(m) },
        repositories: {
          secret: requestStateSecret(options, redis),
          pageSize: options.pageSize,
          maxPageItems: options.limits.repositoryPageItems,
          maxCursorLength: options.limits.repositoryCursorLength,
        },
      };
    },
    inject: [MCP_RESOLVED_OPTIONS, MCP_REDIS],
  },
  {
    // Connects at bootstrap, so an unreachable Redis fails the start with a reason.
    provide: MCP_REDIS,
    useFactory: async (options: ResolvedMcpOptions): Promise<McpRedisBackend | null> => {
      if (!options.redis) return null;
      const logger = new Logger('McpRedis');
      return McpRedisBackend.connect(options.redis, {
        name: options.name,
        idleTtlMs: options.sessions.idleTtlMs,
        maxSessions: options.sessions.maxSessions,
        sharedStateSecret: options.requestState.shared === true,
        eventStoreBytesPerStream: options.limits.eventStoreBytesPerStream,
        eventStoreBytesPerSession: options.limits.eventStoreBytesPerSession,
        eventStoreBytesTotal: options.limits.eventStoreBytesTotal,
        channels: featureRedisChannels,
        logger: { error: (m, t) => logger.error(m, t), warn: (m) => logger.warn(m), log: (m) => logger.log(m) },
      });
    },
    inject: [MCP_RESOLVED_OPTIONS],
  },
  {
    provide: MCP_NOTIFICATION_BUS,
    useFactory: (options: ResolvedMcpOptions, redis: McpRedisBackend | null): McpNotificationBus =>
      options.notificationBus ?? redis?.bus ?? new InProcessNotificationBus(),
    inject: [MCP_RESOLVED_OPTIONS, MCP_REDIS],
  },
  {
    provide: MCP_SESSION_STORE,
    useFactory: (options: ResolvedMcpOptions, redis: McpRedisBackend | null): McpSessionStore =>
      options.sessions.store ??
      redis?.sessions ??
      new InMemorySessionStore({ idleTtlMs: options.sessions.idleTtlMs, maxSessions: options.sessions.maxSessions }),
    inject: [MCP_RESOLVED_OPTIONS, MCP_REDIS],
  },
  {
    provide: MCP_HTTP_HANDLER,
    useFactory: (
      options: ResolvedMcpOptions,
      server: McpDispatcher,
      store: McpSessionStore,
      auth: McpAuthenticator | null,
      redis: McpRedisBackend | null,
      legacySse: ResolvedLegacySseOptions | null,
    ) =>
      new McpHttpHandler(server, store, {
        sessions: options.sessions.mode,
        maxBodyBytes: options.maxBodyBytes,
        originPolicy: new OriginPolicy({ allowedOrigins: options.allowedOrigins, allowedHosts: options.allowedHosts }),
        defaultLogLevel: options.defaultLogLevel,
        keepAliveMs: options.keepAliveMs,
        eventStore:
          options.sessions.mode === 'stateful'
            ? (options.sessions.eventStore ??
              redis?.events ??
              new InMemoryEventStore({
                maxBytesPerStream: options.limits.eventStoreBytesPerStream,
                maxBytesPerSession: options.limits.eventStoreBytesPerSession,
                maxBytesTotal: options.limits.eventStoreBytesTotal,
              }))
            : undefined,
        relay: options.sessions.mode === 'stateful' ? redis?.relay : undefined,
        auth: auth ?? undefined,
        maxSessions: options.sessions.maxSessions,
        limits: options.limits,
        legacySse: legacySse ?? undefined,
        hooks: sessionHooks(options),
        shutdownRetryAfterS: options.shutdown.retryAfterS,
      }),
    inject: [MCP_RESOLVED_OPTIONS, MCP_DISPATCHER, MCP_SESSION_STORE, MCP_AUTHENTICATOR, MCP_REDIS, MCP_LEGACY_SSE],
  },
  {
    provide: MCP_AUTHENTICATOR,
    useFactory: (options: ResolvedMcpOptions, redis: McpRedisBackend | null, stateSecret: Buffer) =>
      options.auth ? new McpAuthenticator(options.auth, builtInTokenVerifier(options.auth, redis, stateSecret)) : null,
    inject: [MCP_RESOLVED_OPTIONS, MCP_REDIS, MCP_REQUEST_STATE_SECRET],
  },
  McpTransportLifecycle,
  McpPublicRoutes,
  McpHealthIndicator,
  McpSessionAdmin,
  ...observabilityProviders,
  ...featureProviders,
  McpToolSets,
];

/** The app's session hooks with their bound; none when it set no hook (the state bound still applies to ctx.state()). */
function sessionHooks(options: ResolvedMcpOptions): SessionHooks | undefined {
  const { onSession, onSessionClose } = options.sessions;
  if (!onSession && !onSessionClose) return undefined;
  const logger = new Logger('McpSessions');
  return new SessionHooks({
    onSession,
    onSessionClose,
    stateBytes: options.limits.sessionStateBytes,
    logger: { error: (m, t) => logger.error(m, t) },
  });
}

function interactionSupport(options: ResolvedMcpOptions): InteractionSupport {
  const schemas = new ElicitationSchemas();
  return {
    requestedSchema: (schema) => schemas.requestedSchema(schema),
    validateContent: (schema, content) => schemas.validateContent(schema, content),
    timeoutMs: options.clientRequestTimeoutMs,
  };
}

function serverInfoOf(options: ResolvedMcpOptions): Implementation {
  const info: Implementation = { name: options.name, version: options.version };
  if (options.title !== undefined) info.title = options.title;
  if (options.description !== undefined) info.description = options.description;
  if (options.websiteUrl !== undefined) info.websiteUrl = options.websiteUrl;
  if (options.icons !== undefined) info.icons = options.icons;
  return info;
}

function normalizePath(path: string | undefined): string {
  return (path ?? MCP_DEFAULT_PATH).replace(/^\/+|\/+$/g, '');
}

/**
 * Serves the Model Context Protocol from a Nest application: tools, resources, prompts and
 * completers are discovered on providers, and one controller serves Streamable HTTP for both
 * protocol eras at `/<path>` (default `/mcp`).
 *
 * @example
 * ```ts
 * @Module({
 *   imports: [McpModule.forRoot({ name: 'tasks', version: '1.0.0' })],
 *   providers: [TaskTools],
 * })
 * export class AppModule {}
 * ```
 * @publicApi
 */
@Module({})
export class McpModule extends McpConfigurableModule implements NestModule {
  constructor(
    private readonly transport: McpTransportLifecycle,
    private readonly publicRoutes: McpPublicRoutes,
  ) {
    super();
  }

  /** Nest calls this before it maps the routes; see McpTransportLifecycle.beforeRoutes and McpPublicRoutes. */
  configure(_consumer: MiddlewareConsumer): void {
    this.transport.beforeRoutes();
    this.publicRoutes.register();
  }

  static override forRoot(options: McpModuleForRootOptions): DynamicModule {
    return McpModule.assemble(super.forRoot(options), options);
  }

  static override forRootAsync(options: McpModuleAsyncOptions): DynamicModule {
    return McpModule.assemble(super.forRootAsync(options), options);
  }

  /**
   * Registers a set of providers as a toolset: its own instances, with the options they inject,
   * and a prefix on every tool and prompt name. Call it once per instance, in one module or in
   * feature modules; the root `McpModule.forRoot()` serves them all. Name clashes fail the bootstrap
   * naming both toolsets.
   *
   * @example
   * ```ts
   * imports: [
   *   McpModule.forFeature({ prefix: 'eu_', providers: [WarehouseTools, { provide: WAREHOUSE, useValue: { region: 'eu' } }] }),
   *   McpModule.forFeature({ prefix: 'us_', providers: [WarehouseTools, { provide: WAREHOUSE, useValue: { region: 'us' } }] }),
   * ]
   * ```
   */
  static forFeature(options: McpToolsetOptions): DynamicModule {
    return createToolsetModule(options);
  }

  private static assemble(definition: DynamicModule, extras: Partial<McpModuleExtras>): DynamicModule {
    const endpoint = normalizePath(extras.path);
    // The endpoint's decorators only: the metadata document and the explorer page are public
    // (McpPublicRoutes), or the page takes decorators of its own (explorer.decorators).
    const decorators = extras.controllerDecorators ?? [];
    const legacySse = resolveLegacySse(extras.legacySse);
    const controllers = [createMcpController(endpoint, extras.endpointVersion, decorators)];
    if (legacySse) controllers.push(createLegacySseController(legacySse, extras.endpointVersion, decorators) as never);
    if (extras.adminRoutes) {
      if (!Array.isArray(extras.adminRoutes.decorators)) {
        throw new Error(
          'McpModule adminRoutes needs "decorators": the app\'s guard for the admin routes, e.g. { adminRoutes: { decorators: [UseGuards(AdminGuard)] } }. Give [] only when a global guard (APP_GUARD) protects every route.',
        );
      }
      controllers.push(createMcpAdminController(extras.adminRoutes, extras.endpointVersion) as never);
    }
    const explorer = resolveExplorer(extras.explorer, endpoint);
    if (explorer?.decorators)
      controllers.push(
        createExplorerController(explorer.path, endpoint, extras.endpointVersion, explorer.decorators) as never,
      );
    return {
      ...definition,
      imports: [...(definition.imports ?? []), DiscoveryModule],
      controllers: [...(definition.controllers ?? []), ...controllers],
      providers: [
        ...(definition.providers ?? []),
        ...coreProviders,
        { provide: MCP_ENDPOINT_PATH, useValue: endpoint },
        { provide: MCP_LEGACY_SSE, useValue: legacySse ?? null },
        { provide: MCP_EXPLORER, useValue: explorer },
        { provide: MCP_ENDPOINT_VERSION, useValue: extras.endpointVersion ?? VERSION_NEUTRAL },
        { provide: MCP_MODULE_ID, useValue: randomUUID() },
      ],
      exports: [
        ...(definition.exports ?? []),
        McpRegistry,
        MCP_DISPATCHER,
        MCP_RESOLVED_OPTIONS,
        McpHealthIndicator,
        McpSessionAdmin,
        McpEvents,
        McpToolSets,
      ],
    };
  }
}
