import { Logger, type OnApplicationBootstrap, type OnModuleDestroy, type Provider } from '@nestjs/common';
import { ModuleRef } from '@nestjs/core';
import {
  MCP_DISPATCHER,
  MCP_LIMITS,
  MCP_NOTIFICATION_BUS,
  MCP_REQUEST_STATE_SECRET,
  MCP_SESSION_OPTIONS,
} from '../common/mcp.constants.js';
import type { McpDispatcher } from '../protocol/dispatcher.js';
import type { McpNotificationBus } from '../protocol/notification-bus.js';
import type { ResolvedMcpLimits } from '../engine/limits.js';
import type { ResolvedMcpSessionOptions } from '../engine/session-options.js';
import { MCP_EVENTS_OPTIONS, McpEvents, type McpEventsOptions } from './events.js';
import { McpObservers, type McpObserverSink, type McpServerNames } from './observer.js';
import { MCP_TELEMETRY_OPTIONS, resolveTelemetry, type McpTelemetryOptions } from './options.js';
import { loadOpenTelemetry } from './otel.js';

const MCP_TELEMETRY = Symbol.for('nestjs-model-context:MCP_TELEMETRY');
const MCP_OBSERVERS = Symbol.for('nestjs-model-context:MCP_OBSERVERS');

/**
 * The names the server has (McpServerNames), for labels: provided by the module, which knows the
 * registry and the packs; telemetry only reads them. @internal
 */
export const MCP_SERVER_NAMES = Symbol.for('nestjs-model-context:MCP_SERVER_NAMES');

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
    useFactory: (options: McpEventsOptions | null, bus: McpNotificationBus) => {
      const logger = new Logger('McpEvents');
      return new McpEvents(options ?? undefined, bus, (message, stack) => logger.error(message, stack));
    },
    inject: [MCP_EVENTS_OPTIONS, MCP_NOTIFICATION_BUS],
  },
  {
    provide: McpEventsForwarder,
    useFactory: (events: McpEvents, moduleRef: ModuleRef) => new McpEventsForwarder(events, moduleRef),
    inject: [McpEvents, ModuleRef],
  },
  {
    // `@opentelemetry/api` is loaded here, once: absent, no request ever looks for it again.
    provide: MCP_TELEMETRY,
    useFactory: async (options: boolean | McpTelemetryOptions | null): Promise<McpObserverSink | null> => {
      const sink = await loadOpenTelemetry(resolveTelemetry(options ?? undefined));
      if (sink) new Logger('McpTelemetry').debug?.('OpenTelemetry instrumentation is on (@opentelemetry/api loaded).');
      return sink ?? null;
    },
    inject: [MCP_TELEMETRY_OPTIONS],
  },
  {
    provide: MCP_OBSERVERS,
    useFactory: (
      sessions: ResolvedMcpSessionOptions,
      limits: ResolvedMcpLimits,
      server: McpDispatcher,
      telemetry: McpObserverSink | null,
      events: McpEvents,
      names: McpServerNames,
      secret: Buffer,
    ) => {
      const sinks = telemetry ? [telemetry, events.sink] : [events.sink];
      // The requestState secret keys the session-id hash: one value per session on every instance.
      const logger = new Logger('McpTelemetry');
      server.observer = new McpObservers(sinks, sessions.maxSessions, names, {
        secret,
        maxRequestIdLength: limits.observedRequestIdLength,
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
    inject: [
      MCP_SESSION_OPTIONS,
      MCP_LIMITS,
      MCP_DISPATCHER,
      MCP_TELEMETRY,
      McpEvents,
      MCP_SERVER_NAMES,
      MCP_REQUEST_STATE_SECRET,
    ],
  },
];
