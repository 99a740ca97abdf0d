import { ConsoleLogger, type INestApplicationContext, type LogLevel as NestLogLevel } from '@nestjs/common';
import { Console } from 'node:console';
import { createInterface, type Interface } from 'node:readline';
import type { McpScopeCheck } from '../engine/sink.js';
import { DEFAULT_LOG_LEVEL, DEFAULT_MAX_BODY_BYTES, type McpTransportSettings } from './transport-settings.js';
import type { McpAuthenticator } from '../auth/mcp-authenticator.js';
import {
  MCP_AUTHENTICATOR,
  MCP_NOTIFICATION_BUS,
  MCP_DISPATCHER,
  MCP_TRANSPORT_SETTINGS,
} from '../common/mcp.constants.js';
import { ErrorCode, failure, type JsonRpcMessage } from '../protocol/json-rpc.js';
import type { JsonObject, LogLevel } from '../protocol/mcp-types.js';
import type { McpNotificationBus } from '../protocol/notification-bus.js';
import { serializeMessage } from '../protocol/serialize.js';
import type { McpDispatcher } from '../protocol/dispatcher.js';
import { McpConnection } from '../engine/connection.js';

/**
 * Options of {@link McpStdioServer}.
 *
 * @publicApi
 */
export interface McpStdioServerOptions {
  /** Where messages come from, one JSON-RPC message per line. @default process.stdin */
  input?: NodeJS.ReadableStream;
  /** Where messages go, one per line; nothing else is ever written to it. @default process.stdout */
  output?: NodeJS.WritableStream;
  /** Change events (list changes, resource updates) to forward to the client. */
  bus?: McpNotificationBus;
  /** Legacy log threshold before the client calls `logging/setLevel`; undefined sends none. @default 'info' */
  defaultLogLevel?: LogLevel;
  /** Longer lines are refused with -32600. @default 4 MiB */
  maxMessageBytes?: number;
  /** Where transport problems are reported (never stdout). @default stderr */
  logger?: { warn(message: string): void };
  /**
   * Refuse calls that need OAuth scopes (`@RequireScopes`): stdio carries no token, so with
   * McpModule's `auth` configured such calls cannot be authorized. @default false
   */
  refuseScopedCalls?: boolean;
}

/**
 * MCP over stdio: newline-delimited JSON-RPC on stdin/stdout, for clients that start the server
 * as a subprocess. It drives the same {@link McpEngine} as the HTTP endpoint, for both eras; the
 * process is one legacy session, so there are no session headers:
 *
 * - a message whose `params._meta` carries `io.modelcontextprotocol/protocolVersion` is a
 *   2026-07-28 request, validated like over HTTP minus the headers (-32602 for a missing or
 *   malformed envelope, -32022 for an unsupported version); `server/discover` needs nothing first;
 * - `initialize` starts a legacy session for the whole process (version negotiation, client
 *   capabilities and info, `logging/setLevel`, `resources/subscribe`), and legacy
 *   server-to-client requests (elicitation, sampling, roots) travel on stdout, their answers on
 *   stdin;
 * - `notifications/cancelled` stops the named in-flight request in either era.
 *
 * Plain class: {@link McpStdio.serve} wires it to a Nest application context.
 *
 * @publicApi
 */
export class McpStdioServer {
  private readonly input: NodeJS.ReadableStream;
  private readonly output: NodeJS.WritableStream;
  private readonly maxMessageBytes: number;
  private readonly connection: McpConnection;
  private lines?: Interface;
  private stopBus?: () => void;
  private finished = false;
  private resolveClosed!: () => void;
  /** Settles once the input ended (or {@link close} was called) and every call was cancelled. */
  readonly closed: Promise<void> = new Promise((resolve) => (this.resolveClosed = resolve));

  constructor(
    server: McpDispatcher,
    private readonly options: McpStdioServerOptions = {},
  ) {
    this.input = options.input ?? process.stdin;
    this.output = options.output ?? process.stdout;
    this.maxMessageBytes = options.maxMessageBytes ?? DEFAULT_MAX_BODY_BYTES;
    this.connection = new McpConnection(server, {
      defaultLogLevel: 'defaultLogLevel' in options ? options.defaultLogLevel : DEFAULT_LOG_LEVEL,
      checkScopes: options.refuseScopedCalls ? refuseScopedCall : undefined,
      session: {
        message: (message) => this.write(message),
        serialized: (data) => this.writeLine(data),
      },
    });
  }

  /** Starts reading. Resolves at once; await {@link closed} to learn when the client hung up. */
  listen(): this {
    if (this.lines) throw new Error('McpStdioServer.listen() was called twice; one server reads its input once.');
    this.lines = createInterface({ input: this.input, crlfDelay: Infinity });
    this.lines.on('line', (line) => this.onLine(line));
    this.lines.on('close', () => this.close());
    // A client that closed its end of the pipe cannot hear anything more.
    this.output.on('error', (error: NodeJS.ErrnoException) => {
      if (error.code !== 'EPIPE') this.warn(`stdout failed: ${error.message}`);
      this.close();
    });
    this.stopBus = this.options.bus?.subscribe((event) => this.connection.deliverChange(event));
    return this;
  }

  /** Cancels every in-flight call and stops reading. */
  close(): void {
    if (this.finished) return;
    this.finished = true;
    this.stopBus?.();
    this.connection.close();
    this.lines?.close();
    this.resolveClosed();
  }

  private onLine(line: string): void {
    if (this.finished || line.trim() === '') return;
    if (Buffer.byteLength(line) > this.maxMessageBytes) {
      this.write(
        failure(
          null,
          ErrorCode.InvalidRequest,
          `Invalid Request: the message exceeds ${this.maxMessageBytes} bytes. Raise maxBodyBytes to accept it.`,
        ),
      );
      return;
    }
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch {
      this.write(
        failure(
          null,
          ErrorCode.ParseError,
          'Parse error: the line is not valid JSON. Send one JSON-RPC message per line.',
        ),
      );
      return;
    }
    void this.connection
      .receive(value)
      .catch((error: unknown) =>
        this.warn(`a message failed: ${error instanceof Error ? error.message : String(error)}`),
      );
  }

  private write(message: JsonRpcMessage | readonly JsonRpcMessage[]): void {
    this.writeLine(Array.isArray(message) ? JSON.stringify(message) : serializeMessage(message as JsonRpcMessage));
  }

  /** JSON.stringify never emits a raw newline, so one message is always one line. */
  private writeLine(data: string): void {
    if (!this.finished) this.output.write(`${data}\n`);
  }

  private warn(message: string): void {
    if (this.options.logger) this.options.logger.warn(message);
    else process.stderr.write(`[McpStdioServer] ${message}\n`);
  }
}

/** stdio carries no token: with McpModule's `auth` set, a call that needs scopes cannot be authorized. */
const refuseScopedCall: McpScopeCheck = (_required, _principal, request) => ({
  status: 403,
  body: failure(
    request.id,
    ErrorCode.InvalidRequest,
    `Forbidden: "${request.method}" of ${JSON.stringify(scopedTarget(request.params))} needs OAuth scopes, and stdio carries no access token. Call it over HTTP with a token.`,
  ),
});

/**
 * Options of {@link McpStdio.serve}.
 *
 * @publicApi
 */
export interface McpStdioServeOptions extends Pick<McpStdioServerOptions, 'input' | 'output'> {
  /** Close the Nest application when the client closes stdin. @default true */
  closeAppOnEnd?: boolean;
  /**
   * While serving on `process.stdout`, send `console.log/info/debug` to stderr, so a stray
   * `console.log` cannot corrupt the protocol stream. @default true
   */
  redirectConsole?: boolean;
}

/**
 * A Nest `ConsoleLogger` that writes every level to stderr: over stdio, stdout belongs to the
 * protocol. Pass it as the application's `logger`.
 *
 * @example
 * ```ts
 * const app = await NestFactory.createApplicationContext(AppModule, { logger: new McpStdioLogger() });
 * ```
 * @publicApi
 */
export class McpStdioLogger extends ConsoleLogger {
  protected override printMessages(
    messages: unknown[],
    context?: string,
    logLevel?: NestLogLevel,
    _writeStreamType?: 'stdout' | 'stderr',
    errorStack?: unknown,
    params?: Record<string, unknown>,
  ): void {
    super.printMessages(messages, context, logLevel, 'stderr', errorStack, params);
  }
}

/**
 * Serves an application's McpModule over stdio.
 *
 * @example
 * ```ts
 * // stdio.ts: the client runs `node dist/stdio.js`
 * const app = await NestFactory.createApplicationContext(AppModule, { logger: new McpStdioLogger() });
 * await McpStdio.serve(app);
 * ```
 * @publicApi
 */
export const McpStdio = {
  /**
   * Reads JSON-RPC from stdin and answers on stdout with the app's McpModule (its tools,
   * resources, prompts and options), until stdin ends; then closes the app (which ends the
   * process once nothing else keeps it alive). Resolves once listening.
   *
   * The app must not log to stdout: create it with `logger: new McpStdioLogger()` (or
   * `logger: false`). With several McpModules in one app, the first one is served.
   */
  async serve(app: INestApplicationContext, options: McpStdioServeOptions = {}): Promise<McpStdioServer> {
    let server: McpDispatcher;
    try {
      server = app.get<symbol, McpDispatcher>(MCP_DISPATCHER, { strict: false });
    } catch {
      throw new Error(
        'McpStdio.serve() found no McpModule in this application: import McpModule.forRoot({ name, version }) in the module you pass to NestFactory.createApplicationContext().',
      );
    }
    const settings = app.get<symbol, McpTransportSettings>(MCP_TRANSPORT_SETTINGS, { strict: false });
    const auth = app.get<symbol, McpAuthenticator | null>(MCP_AUTHENTICATOR, { strict: false });
    const bus = app.get<symbol, McpNotificationBus>(MCP_NOTIFICATION_BUS, { strict: false });
    const output = options.output ?? process.stdout;
    const restoreConsole =
      output === process.stdout && options.redirectConsole !== false ? redirectConsoleToStderr() : undefined;
    const stdio = new McpStdioServer(server, {
      input: options.input,
      output,
      bus,
      defaultLogLevel: settings.defaultLogLevel,
      maxMessageBytes: settings.maxBodyBytes,
      refuseScopedCalls: auth !== null,
    }).listen();
    void stdio.closed.then(async () => {
      restoreConsole?.();
      if (options.closeAppOnEnd !== false) await app.close();
    });
    return stdio;
  },
} as const;

function redirectConsoleToStderr(): () => void {
  const toStderr = new Console({ stdout: process.stderr, stderr: process.stderr });
  const saved = { log: console.log, info: console.info, debug: console.debug };
  console.log = toStderr.log.bind(toStderr);
  console.info = toStderr.info.bind(toStderr);
  console.debug = toStderr.debug.bind(toStderr);
  return () => Object.assign(console, saved);
}

/** The capability a scoped request names: a tool or prompt name, a resource URI, or a completion ref's target. */
function scopedTarget(params: JsonObject | undefined): unknown {
  const ref = params?.ref as { name?: unknown; uri?: unknown } | undefined;
  return params?.name ?? params?.uri ?? ref?.name ?? ref?.uri;
}
