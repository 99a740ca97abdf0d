import type { INestApplicationContext } from '@nestjs/common';
import { Observable, Subject } from 'rxjs';
import type { McpPrincipal } from '../auth/mcp-auth.interface.js';
import type { McpAuthenticator } from '../auth/mcp-authenticator.js';
import { McpConnection } from '../engine/connection.js';
import type { McpScopeCheck } from '../engine/sink.js';
import { DEFAULT_LOG_LEVEL, type McpTransportSettings } from './transport-settings.js';
import {
  MCP_AUTHENTICATOR,
  MCP_NOTIFICATION_BUS,
  MCP_TRANSPORT_SETTINGS,
  MCP_DISPATCHER,
} from '../common/mcp.constants.js';
import type { JsonRpcMessage } from '../protocol/json-rpc.js';
import type { LogLevel } from '../protocol/mcp-types.js';
import type { McpNotificationBus } from '../protocol/notification-bus.js';
import type { McpDispatcher } from '../protocol/dispatcher.js';

/**
 * Options of one {@link McpInProcessTransport.send}.
 *
 * @publicApi
 */
export interface McpInProcessSendOptions {
  /**
   * Request headers by name (case-insensitive), seen by guards and handlers as `request.headers`.
   * With `headerRules`, a 2026-07-28 request must carry the Streamable HTTP headers as over HTTP.
   */
  headers?: Record<string, string>;
  /** Check the Streamable HTTP header rules against `headers`. @default false */
  headerRules?: boolean;
  /** Who calls: scopes (`@RequireScopes`) are checked against it when McpModule's `auth` is set. */
  principal?: McpPrincipal;
  /**
   * The request guards, `REQUEST` and `ctx.request` see, e.g. `{ headers, user }` with the user
   * object the app's own authentication makes. The principal is never put on it.
   * @default { headers }
   */
  request?: object;
}

/**
 * Options of {@link McpInProcessTransport}.
 *
 * @publicApi
 */
export interface McpInProcessTransportOptions {
  /** Change events (list changes, resource updates) for the legacy session's `notifications`. */
  bus?: McpNotificationBus;
  /** Legacy log threshold before the client calls `logging/setLevel`. @default 'info' */
  defaultLogLevel?: LogLevel;
  /** Enforce `@RequireScopes` against the principal of each send. */
  checkScopes?: McpScopeCheck;
}

/**
 * An MCP client connection without a socket: messages in, messages out, on either era, through
 * the same engine as HTTP and stdio. A legacy `initialize` starts the connection's one session;
 * a message with the 2026-07-28 `_meta` envelope needs nothing first.
 *
 * @example
 * ```ts
 * const mcp = McpInProcessTransport.forApp(app);
 * const messages = await lastValueFrom(mcp.send({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: { _meta } }).pipe(toArray()));
 * ```
 * @publicApi
 */
export class McpInProcessTransport {
  private readonly connection: McpConnection;
  private readonly session = new Subject<JsonRpcMessage>();
  private readonly stopBus?: () => void;
  private closed = false;

  /**
   * Messages of the legacy session's standing stream: list changes, updates of subscribed
   * resources, and server-to-client requests that no call's stream carried.
   */
  readonly notifications: Observable<JsonRpcMessage> = this.session.asObservable();

  constructor(server: McpDispatcher, options: McpInProcessTransportOptions = {}) {
    this.connection = new McpConnection(server, {
      defaultLogLevel: 'defaultLogLevel' in options ? options.defaultLogLevel : DEFAULT_LOG_LEVEL,
      checkScopes: options.checkScopes,
      session: { message: (message) => emitAll(message, (m) => this.session.next(m)) },
    });
    this.stopBus = options.bus?.subscribe((event) => this.connection.deliverChange(event));
  }

  /** A transport on an application's McpModule (its tools, resources, prompts, auth and options). */
  static forApp(app: INestApplicationContext): McpInProcessTransport {
    let server: McpDispatcher;
    try {
      server = app.get<symbol, McpDispatcher>(MCP_DISPATCHER, { strict: false });
    } catch {
      throw new Error(
        'McpInProcessTransport.forApp() found no McpModule in this application: import McpModule.forRoot({ name, version }) in the module under test.',
      );
    }
    const settings = app.get<symbol, McpTransportSettings>(MCP_TRANSPORT_SETTINGS, { strict: false });
    const auth = app.get<symbol, McpAuthenticator | null>(MCP_AUTHENTICATOR, { strict: false });
    return new McpInProcessTransport(server, {
      bus: app.get<symbol, McpNotificationBus>(MCP_NOTIFICATION_BUS, { strict: false }),
      defaultLogLevel: settings.defaultLogLevel,
      checkScopes: auth
        ? (required, principal, request) => auth.scopeRefusal(required, principal, request.id)
        : undefined,
    });
  }

  /**
   * Sends one message (or a batch) when subscribed, and emits every message of its exchange:
   * progress, logs and server-to-client requests as they come, then the response (or each
   * response of a batch); completes once answered. A notification or a client's answer completes
   * without a message. Unsubscribing before the response cancels the call, as a client closing
   * its HTTP response does.
   */
  send(
    message: JsonRpcMessage | readonly JsonRpcMessage[],
    options: McpInProcessSendOptions = {},
  ): Observable<JsonRpcMessage> {
    return new Observable<JsonRpcMessage>((subscriber) => {
      if (this.closed) {
        subscriber.error(new Error('McpInProcessTransport.send() after close(): create a new transport.'));
        return undefined;
      }
      const abort = new AbortController();
      let done = false;
      const headers = lowerCase(options.headers);
      void this.connection
        .receive(message, {
          principal: options.principal,
          headers,
          headerRules: options.headerRules,
          transportRequest: options.request ?? { headers: headers ?? {} },
          signal: abort.signal,
          output: {
            message: (m) => emitAll(m, (one) => subscriber.next(one)),
            done: () => {
              done = true;
              subscriber.complete();
            },
          },
        })
        .catch((error: unknown) => subscriber.error(error));
      return () => {
        if (!done) abort.abort();
      };
    });
  }

  /** Cancels every call and ends the session's stream. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.stopBus?.();
    this.connection.close();
    this.session.complete();
  }
}

function emitAll(message: JsonRpcMessage | readonly JsonRpcMessage[], emit: (message: JsonRpcMessage) => void): void {
  if (Array.isArray(message)) for (const one of message) emit(one);
  else emit(message as JsonRpcMessage);
}

function lowerCase(headers: Record<string, string> | undefined): Record<string, string> | undefined {
  if (!headers) return undefined;
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) out[name.toLowerCase()] = value;
  return out;
}
