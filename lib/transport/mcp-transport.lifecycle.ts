import {
  Inject,
  Injectable,
  Logger,
  type BeforeApplicationShutdown,
  type OnApplicationBootstrap,
  type OnApplicationShutdown,
  type OnModuleInit,
} from '@nestjs/common';
import { ApplicationConfig, HttpAdapterHost } from '@nestjs/core';
import type { AddressInfo } from 'node:net';
import type { IncomingMessage, ServerResponse } from 'node:http';
import {
  MCP_ENDPOINT_PATH,
  MCP_ENDPOINT_VERSION,
  MCP_HTTP_HANDLER,
  MCP_LEGACY_SSE,
  MCP_NOTIFICATION_BUS,
  MCP_DISPATCHER,
  MCP_SESSION_STORE,
  MCP_SHUTDOWN_OPTIONS,
  MCP_TRANSPORT_SETTINGS,
} from '../common/mcp.constants.js';
import type { ResolvedMcpShutdownOptions } from './shutdown-options.js';
import type { McpTransportSettings } from './transport-settings.js';
import { assertSupportedPlatform, scopeFastifyMcpRoutes, type FastifyInstanceLike } from './fastify.adapter.js';
import { routeBases } from './route-bases.js';
import { McpRegistry } from '../discovery/mcp.registry.js';
import { changeEventOf, type McpNotificationBus } from '../protocol/notification-bus.js';
import type { McpDispatcher } from '../protocol/dispatcher.js';
import type { Subscription } from 'rxjs';
import type { McpSessionStore } from '../protocol/session-store.js';
import type { McpHttpHandler } from './http-handler.js';
import type { McpEndpointVersion } from './endpoint-version.js';
import type { ResolvedLegacySseOptions } from './legacy-sse.transport.js';

type ErrorMiddleware = (err: unknown, req: IncomingMessage, res: ServerResponse, next: (err?: unknown) => void) => void;

/**
 * The app's body parser runs before any controller, so a malformed or oversized MCP body would
 * reach Nest's HTML/JSON error handling instead of a JSON-RPC error. An error middleware added
 * after the routes (and before Nest's own error handler) answers those for the MCP path.
 */
@Injectable()
export class McpTransportLifecycle
  implements OnModuleInit, OnApplicationBootstrap, BeforeApplicationShutdown, OnApplicationShutdown
{
  private readonly logger = new Logger('McpModule');
  private streamsEnded = false;
  private changes?: Subscription;
  private stopDelivery?: () => void;

  constructor(
    private readonly adapterHost: HttpAdapterHost,
    @Inject(MCP_HTTP_HANDLER) private readonly handler: McpHttpHandler,
    @Inject(MCP_SESSION_STORE) private readonly store: McpSessionStore,
    @Inject(MCP_ENDPOINT_PATH) private readonly path: string,
    @Inject(MCP_NOTIFICATION_BUS) private readonly bus: McpNotificationBus,
    @Inject(MCP_DISPATCHER) private readonly server: McpDispatcher,
    private readonly registry: McpRegistry,
    private readonly config: ApplicationConfig,
    @Inject(MCP_ENDPOINT_VERSION) private readonly version: McpEndpointVersion,
    @Inject(MCP_TRANSPORT_SETTINGS) private readonly settings: McpTransportSettings,
    @Inject(MCP_SHUTDOWN_OPTIONS) private readonly shutdown: ResolvedMcpShutdownOptions,
    @Inject(MCP_LEGACY_SSE) private readonly legacySse: ResolvedLegacySseOptions | null,
  ) {}

  /**
   * The endpoint moves with the app's global prefix and versioning, so the URL it really serves
   * is said once the server listens.
   */
  onApplicationBootstrap(): void {
    const server = this.adapterHost?.httpAdapter?.getHttpServer?.() as
      | {
          once?(event: 'listening', listener: () => void): void;
          address?(): AddressInfo | string | null;
          listening?: boolean;
        }
      | undefined;
    if (!server?.once || !server.address) return;
    const announce = (): void => {
      const address = server.address?.();
      if (address && typeof address === 'object')
        this.logger.log(`MCP endpoint at ${this.endpointUrl(address, server)}`);
    };
    if (server.listening) announce();
    else server.once('listening', announce);
  }

  /** The endpoint's route under the app's global prefix and URI versioning, e.g. `/api/v1/mcp`. */
  routePath(): string {
    return `${routeBases(this.config, this.version)[0]}/${this.path}`;
  }

  private endpointUrl(address: AddressInfo, server: object): string {
    const scheme = 'setSecureContext' in server ? 'https' : 'http';
    const unspecified = address.address === '::' || address.address === '0.0.0.0';
    const host = unspecified
      ? 'localhost'
      : address.family === 'IPv6' || address.address.includes(':')
        ? `[${address.address}]`
        : address.address;
    return `${scheme}://${host}:${address.port}${this.routePath()}`;
  }

  /**
   * Called by McpModule's `configure()`, which Nest runs before it maps any route: refuses an
   * HTTP platform McpModule cannot serve, and on Fastify scopes the body-error handling to the
   * MCP routes, which can only be done as they are declared.
   */
  beforeRoutes(): void {
    const adapter = this.adapterHost?.httpAdapter;
    if (!adapter) return;
    const type = adapter.getType?.();
    assertSupportedPlatform(type);
    if (type === 'fastify') {
      scopeFastifyMcpRoutes(adapter.getInstance<FastifyInstanceLike>(), {
        path: this.path,
        maxBodyBytes: this.settings.maxBodyBytes,
      });
      // The legacy transport's POSTs carry messages too: their body errors are JSON-RPC errors.
      if (this.legacySse)
        scopeFastifyMcpRoutes(adapter.getInstance<FastifyInstanceLike>(), {
          path: this.legacySse.messagesPath,
          maxBodyBytes: this.settings.maxBodyBytes,
        });
    }
  }

  onModuleInit(): void {
    // Registry changes go out through the bus, so with a shared bus every instance's streams hear
    // of a change made on any one of them.
    this.changes = this.registry.changes$.subscribe((change) => void this.bus.publish(changeEventOf(change)));
    // Toggles from other instances are applied first, so a stream told of the change re-lists the new state.
    const stopToggles = this.bus.subscribe((event) => this.registry.applyRemoteChange(event));
    const stopStreams = this.bus.subscribe((event) => void this.handler.deliverChange(event));
    this.stopDelivery = () => {
      stopToggles();
      stopStreams();
    };
    this.installParserErrorHandler();
  }

  private installParserErrorHandler(): void {
    const adapter = this.adapterHost?.httpAdapter;
    if (!adapter || typeof adapter.use !== 'function' || adapter.getType?.() !== 'express') return;
    const suffixes = [`/${this.path}`, ...(this.legacySse ? [`/${this.legacySse.messagesPath}`] : [])];
    const middleware: ErrorMiddleware = (err, req, res, next) => {
      const pathname = (req.url ?? '').split('?')[0].replace(/\/+$/, '');
      if (
        suffixes.some((suffix) => pathname.endsWith(suffix)) &&
        !res.headersSent &&
        this.handler.handleParserError(err as { type?: string; body?: unknown }, res, req)
      ) {
        return;
      }
      next(err);
    };
    adapter.use(middleware);
  }

  /**
   * A signal (`app.enableShutdownHooks()`) drains the endpoint while the HTTP server still
   * listens: new work is refused with 503, running calls get `shutdown.graceMs`, streams resume
   * elsewhere. `app.close()` without a signal ends everything at once, here: Nest closes the HTTP
   * server before `onApplicationShutdown`, and the server waits for every open response, so a
   * stream still open then (a GET stream, `subscriptions/listen`) would hold `app.close()` forever.
   */
  async beforeApplicationShutdown(signal?: string): Promise<void> {
    if (signal === undefined) return this.endStreams();
    this.logger.log(`${signal}: draining the MCP endpoint (up to ${this.shutdown.graceMs} ms for running calls)`);
    await this.handler.drain(this.shutdown.graceMs);
  }

  /** Ends every stream and call, once: before the HTTP server closes without a signal, after draining with one. */
  private endStreams(): void {
    if (this.streamsEnded) return;
    this.streamsEnded = true;
    this.server.shutdown();
    this.handler.close();
  }

  async onApplicationShutdown(): Promise<void> {
    this.changes?.unsubscribe();
    this.stopDelivery?.();
    this.endStreams();
    await this.bus.close?.();
    await this.store.close?.();
  }
}
