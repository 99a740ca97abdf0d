import { Logger, type OnApplicationBootstrap, type OnModuleDestroy, type Provider } from '@nestjs/common';
import { ModuleRef } from '@nestjs/core';
import type { ResolvedMcpOptions } from '../interfaces/mcp-module-options.interface.js';
import { MCP_NOTIFICATION_BUS, MCP_RESOLVED_OPTIONS, MCP_DISPATCHER } from '../common/mcp.constants.js';
import type { McpDispatcher } from '../protocol/dispatcher.js';
import { McpRegistry } from '../discovery/mcp.registry.js';
import { MCP_REDIS, requestStateSecret, type McpRedisBackend } from '../redis/redis-backend.js';
import type { McpNotificationBus } from '../protocol/notification-bus.js';
import { McpEvents } from './events.js';
import { McpObservers, type McpObserverSink, type McpServerNames } from './observer.js';
import { resolveTelemetry } from './options.js';
import { loadOpenTelemetry } from './otel.js';

const MCP_TELEMETRY = Symbol.for('nestjs-model-context:MCP_TELEMETRY');
const MCP_OBSERVERS = Symbol.for('nestjs-model-context:MCP_OBSERVERS');

/**
 * Forwards McpEvents to Nest's EventEmitter2 when the app imports EventEmitterModule
 * (`@nestjs/event-emitter`, an optional peer, looked up once at bootstrap).
 */
class McpEventsForwarder implements OnApplicationBootstrap, OnModuleDestroy {
  constructor(
    private readonly events: McpEvents,
    private readonly moduleRef: ModuleRef,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    let EventEmitter2: unknown;
    try {
      ({ EventEmitter2 } = await import('@nestjs/event-emitter'));
    } catch {
      return;
    }
    try {
      this.events.forwardTo(this.moduleRef.get(EventEmitter2 as never, { strict: false }));
    } catch {
      // @nestjs/event-emitter is installed but this app does not import EventEmitterModule.
    }
  }

  onModuleDestroy(): void {
    this.events.close();
  }
}

/** OpenTelemetry and McpEvents, reporting to the dispatcher's observers. @internal */
export const observabilityProviders: Provider[] = [
  {
    provide: McpEvents,
    useFactory: (options: ResolvedMcpOptions, bus: McpNotificationBus) => {
      const logger = new Logger('McpEvents');
      return new McpEvents(options.events, bus, (message, stack) => logger.error(message, stack));
    },
    inject: [MCP_RESOLVED_OPTIONS, MCP_NOTIFICATION_BUS],
  },
  {
    provide: McpEventsForwarder,
    useFactory: (events: McpEvents, moduleRef: ModuleRef) => new McpEventsForwarder(events, moduleRef),
    inject: [McpEvents, ModuleRef],
  },
  {
    // `@opentelemetry/api` is loaded here, once: absent, no request ever looks for it again.
    provide: MCP_TELEMETRY,
    useFactory: async (options: ResolvedMcpOptions): Promise<McpObserverSink | null> => {
      const sink = await loadOpenTelemetry(resolveTelemetry(options.telemetry));
      if (sink) new Logger('McpTelemetry').debug?.('OpenTelemetry instrumentation is on (@opentelemetry/api loaded).');
      return sink ?? null;
    },
    inject: [MCP_RESOLVED_OPTIONS],
  },
  {
    provide: MCP_OBSERVERS,
    useFactory: (
      options: ResolvedMcpOptions,
      server: McpDispatcher,
      telemetry: McpObserverSink | null,
      events: McpEvents,
      registry: McpRegistry,
      redis: McpRedisBackend | null,
    ) => {
      const sinks = telemetry ? [telemetry, events.sink] : [events.sink];
      // The requestState secret keys the session-id hash: one value per session on every instance.
      const logger = new Logger('McpTelemetry');
      server.observer = new McpObservers(sinks, options.sessions.maxSessions, serverNames(server, registry), {
        secret: requestStateSecret(options, redis),
        maxRequestIdLength: options.limits.observedRequestIdLength,
        onError: (error) => {
          const err = error instanceof Error ? error : new Error(String(error));
          logger.error(
            `Telemetry failed while observing a request (a span processor, exporter or event sink threw): ${err.message}. The request went on; further failures are reported at most every 10 s.`,
            err.stack,
          );
        },
      });
      return server.observer;
    },
    inject: [MCP_RESOLVED_OPTIONS, MCP_DISPATCHER, MCP_TELEMETRY, McpEvents, McpRegistry, MCP_REDIS],
  },
];

/** What this server has, looked up per request: capabilities added or toggled at run time count as they are. */
function serverNames(server: McpDispatcher, registry: McpRegistry): McpServerNames {
  return {
    method: (era, method) => server.hasMethod(era, method),
    tool: (name) => registry.tool(name)?.name,
    prompt: (name) => registry.prompt(name)?.name ?? repositoryLabel(registry.promptRepositoryFor(name)?.namePrefix),
    resource: (uri) =>
      registry.resource(uri)?.uri ??
      repositoryLabel(registry.resourceRepositoryFor(uri)?.uriPrefix) ??
      registry.resourceTemplates().find((template) => template.template.match(uri) !== null)?.uriTemplate,
  };
}

function repositoryLabel(prefix: string | undefined): string | undefined {
  return prefix === undefined ? undefined : `${prefix}*`;
}
