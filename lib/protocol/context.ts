import type { JsonRpcId, JsonRpcNotification } from './json-rpc.js';
import { LOG_LEVELS, type Implementation, type JsonObject, type LogLevel } from './mcp-types.js';
import type { McpSession } from './session-store.js';
import type { ProtocolEra } from './versions.js';

const LEVEL_RANK: Record<string, number> = Object.fromEntries(LOG_LEVELS.map((level, i) => [level, i]));

export function isLogLevel(value: unknown): value is LogLevel {
  return typeof value === 'string' && value in LEVEL_RANK;
}

/** Everything the dispatcher knows about one incoming request, built by a transport. */
export interface RequestEnvelope {
  era: ProtocolEra;
  protocolVersion: string;
  capabilities: JsonObject;
  clientInfo?: Implementation;
  session?: McpSession;
  /** The transport's own request object (an HTTP request), for handlers that need headers. */
  transportRequest?: unknown;
  /** Level below which `notifications/message` are dropped; undefined = send none. */
  logLevel?: LogLevel;
  /** Persists a legacy session's `logging/setLevel`. */
  setLogLevel?(level: LogLevel): void | Promise<void>;
}

/**
 * The per-call context a handler receives through `@Ctx()`: who is calling, over which revision,
 * and ways to talk back while the call runs.
 *
 * @publicApi
 */
export class McpContext {
  /** Aborted when the client cancels or disconnects, or the call times out. */
  readonly signal: AbortSignal;
  private lastProgress = Number.NEGATIVE_INFINITY;
  private closed = false;

  constructor(
    readonly requestId: JsonRpcId,
    readonly method: string,
    private readonly envelope: RequestEnvelope,
    /** The request's `params._meta`, as sent. */
    readonly meta: JsonObject,
    private readonly emit: (message: JsonRpcNotification) => void,
    signal: AbortSignal,
  ) {
    this.signal = signal;
  }

  get era(): ProtocolEra {
    return this.envelope.era;
  }
  get protocolVersion(): string {
    return this.envelope.protocolVersion;
  }
  get clientInfo(): Implementation | undefined {
    return this.envelope.clientInfo;
  }
  /** The client's capabilities: per request on the modern era, per session on the legacy one. */
  get clientCapabilities(): JsonObject {
    return this.envelope.capabilities;
  }
  get sessionId(): string | undefined {
    return this.envelope.session?.id;
  }
  /** The raw transport request (an Express/Node `IncomingMessage` over HTTP, undefined on stdio). */
  get request(): unknown {
    return this.envelope.transportRequest;
  }
  get progressToken(): string | number | undefined {
    const token = this.meta.progressToken;
    return typeof token === 'string' || typeof token === 'number' ? token : undefined;
  }

  /**
   * Reports progress to the client. Sent only when the request carried a `progressToken`;
   * values that do not increase are dropped, as the spec requires progress to grow.
   */
  progress(progress: number, total?: number, message?: string): void {
    const token = this.progressToken;
    if (this.closed || token === undefined || !(progress > this.lastProgress)) return;
    this.lastProgress = progress;
    const params: JsonObject = { progressToken: token, progress };
    if (total !== undefined) params.total = total;
    if (message !== undefined) params.message = message;
    this.emit({ jsonrpc: '2.0', method: 'notifications/progress', params });
  }

  /** Sends a log message on this call's stream, if the client asked for this level. */
  log(level: LogLevel, data: unknown, logger?: string): void {
    const threshold = this.envelope.logLevel;
    if (this.closed || threshold === undefined || LEVEL_RANK[level] < LEVEL_RANK[threshold]) return;
    const params: JsonObject = { level, data };
    if (logger !== undefined) params.logger = logger;
    this.emit({ jsonrpc: '2.0', method: 'notifications/message', params });
  }

  /** @internal Called by the dispatcher once the result is sent: nothing may follow it. */
  close(): void {
    this.closed = true;
  }
}
