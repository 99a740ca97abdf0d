import { Logger, type OnApplicationBootstrap, type OnModuleDestroy, type Provider } from '@nestjs/common';
import { ModuleRef } from '@nestjs/core';
import type { ResolvedMcpOptions } from '../interfaces/mcp-module-options.interface.js';
import { MCP_NOTIFICATION_BUS, MCP_RESOLVED_OPTIONS, MCP_SERVER } from '../mcp.constants.js';
import type { McpDispatcher } from '../protocol/dispatcher.js';
import type { McpNotificationBus } from '../protocol/notification-bus.js';
import { McpEvents } from './events.js';
import { McpObservers, type McpObserverSink } from './observer.js';
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
    useFactory: (options: ResolvedMcpOptions, server: McpDispatcher, telemetry: McpObserverSink | null, events: McpEvents) => {
      const sinks = telemetry ? [telemetry, events.sink] : [events.sink];
      server.observer = new McpObservers(sinks, options.sessions.maxSessions);
      return server.observer;
    },
    inject: [MCP_RESOLVED_OPTIONS, MCP_SERVER, MCP_TELEMETRY, McpEvents],
  },
];
