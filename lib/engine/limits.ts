// The bounds every transport and the engine enforce (McpModule's `limits`), with their defaults.

/**
 * Per-caller and total bounds. A request over a bound gets the error the specification names,
 * with a message that says which limit applied and how to raise it.
 *
 * @publicApi
 */
export interface McpLimitOptions {
  /** Most messages in one JSON-RPC batch (only 2025-03-26 sessions may batch). @default 50 */
  maxBatchLength?: number;
  /**
   * Legacy sessions one authenticated principal may hold. A new `initialize` beyond it ends that
   * principal's own least recently used session, never another caller's. @default 100
   */
  sessionsPerPrincipal?: number;
  /**
   * The same bound for anonymous callers, counted per client address: Express's `req.ip` (which
   * honours the app's 'trust proxy' setting; set it behind a reverse proxy, or every client shares
   * the proxy's address), else the socket's remote address. @default 100
   */
  sessionsPerAddress?: number;
  /** Bytes of SSE events kept for `Last-Event-ID` resumption per stream; older events are dropped. @default 1048576 (1 MiB) */
  eventStoreBytesPerStream?: number;
  /** Bytes of SSE events kept per legacy session, across its streams. @default 4194304 (4 MiB) */
  eventStoreBytesPerSession?: number;
  /** Bytes of SSE events kept in all (with Redis: by every instance sharing the key prefix). @default 67108864 (64 MiB) */
  eventStoreBytesTotal?: number;
  /** `resources/subscribe` subscriptions one session may hold. @default 100 */
  subscriptionsPerSession?: number;
  /**
   * Bytes written to an SSE response that the client has not read yet. Beyond it the stream is
   * closed and its call cancelled (a slow or stalled reader cannot make the server buffer). @default 1048576 (1 MiB)
   */
  sseBufferBytes?: number;
  /**
   * Bytes of the `initialize` params (`capabilities`, `clientInfo`) a session keeps. Only the
   * fields the protocol defines are kept; an `initialize` whose kept params exceed this gets
   * 400 / -32602. @default 16384 (16 KiB)
   */
  initializeParamsBytes?: number;
  /**
   * With `redis`: how long an `@McpConcurrency` slot stays held by an instance that stopped
   * renewing it (it died). A running call renews its lease every third of this. @default 30000
   */
  concurrencyLeaseMs?: number;
  /**
   * Most items one page of a `@ResourceRepository` or `@PromptRepository` may hold. A repository
   * is asked for `pageSize` items; a page over this bound fails (-32603, logged) instead of being
   * sent, so a repository bug cannot make one list response unbounded. @default 1000
   */
  repositoryPageItems?: number;
  /**
   * Longest cursor of a repository's own (it travels signed inside the client's cursor). A longer
   * one fails the page (-32603, logged); client cursors longer than such a cursor could make are
   * refused (-32602) before any work. @default 1024
   */
  repositoryCursorLength?: number;
  /**
   * Bytes of one session's state (`sessions.onSession`, `ctx.state()`), serialized as JSON. A
   * write beyond it fails the call that made it; the stored state stays as it was. With `redis`
   * every request of the session reads it. @default 65536 (64 KiB)
   */
  sessionStateBytes?: number;
  /**
   * Longest JSON-RPC request id that spans (`jsonrpc.request.id`) and `McpEvents` (`requestId`)
   * record as sent. The client picks the id, of any length: a longer string id is recorded as its
   * first this-many characters, then `…[<length> chars, sha256:<16 hex>]`. @default 128
   */
  observedRequestIdLength?: number;
  /**
   * Requests in flight (dispatched, not yet answered) per legacy Streamable HTTP session, per
   * 2024-11-05 HTTP+SSE session, and per stateless caller (2026-07-28, or `sessions.mode:
   * 'stateless'`: its principal, else its client address). Each member of a batch counts. A
   * request past it is answered with JSON-RPC `-32000` naming this option (HTTP 503 with
   * `Retry-After: 1` where the answer has a status of its own) and never runs; a slot is given
   * back when its call ends (answered, failed, cancelled, or its client gone). stdio and in-process
   * connections are not bounded. `legacySse.maxRequestsInFlight` is this option's former name:
   * when set, it sets this. @default 32
   */
  maxRequestsInFlight?: number;
}

/** Limits after defaults. @internal */
export type ResolvedMcpLimits = Required<McpLimitOptions>;

/** @internal */
export const DEFAULT_MCP_LIMITS: ResolvedMcpLimits = {
  maxBatchLength: 50,
  sessionsPerPrincipal: 100,
  sessionsPerAddress: 100,
  eventStoreBytesPerStream: 1024 * 1024,
  eventStoreBytesPerSession: 4 * 1024 * 1024,
  eventStoreBytesTotal: 64 * 1024 * 1024,
  subscriptionsPerSession: 100,
  sseBufferBytes: 1024 * 1024,
  initializeParamsBytes: 16 * 1024,
  concurrencyLeaseMs: 30_000,
  repositoryPageItems: 1000,
  repositoryCursorLength: 1024,
  sessionStateBytes: 64 * 1024,
  observedRequestIdLength: 128,
  maxRequestsInFlight: 32,
};
