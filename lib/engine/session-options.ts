import type { McpSessionStore } from '../protocol/session-store.js';
import type { McpEventStore } from '../protocol/event-store.js';
import type { McpOnSession, McpOnSessionClose } from './session-hooks.js';

// The `sessions` slice of the module options: the engine's legacy sessions, their store and hooks.

/** @publicApi */
export interface McpSessionOptions {
  /**
   * `stateful`: `initialize` mints an `Mcp-Session-Id` that later requests must carry (needed for
   * the GET stream, server-to-client requests and `logging/setLevel`). `stateless`: no sessions.
   * @default 'stateful'
   */
  mode?: 'stateful' | 'stateless';
  /** Idle time after which a session expires. @default 1800000 (30 minutes) */
  idleTtlMs?: number;
  /**
   * Most live sessions in all. At it, expired sessions are dropped first; if none has expired, a
   * new `initialize` is refused (HTTP 503 with `Retry-After`, JSON-RPC -32000) rather than ending
   * another caller's session. Per-caller caps: `limits.sessionsPerPrincipal` and
   * `limits.sessionsPerAddress`. @default 10000
   */
  maxSessions?: number;
  /** Where sessions live. @default an in-memory store */
  store?: McpSessionStore;
  /**
   * Where SSE events are kept for `Last-Event-ID` resumption.
   * @default an in-memory store (1000 events per stream, 5 minutes, and the `limits.eventStoreBytes*` bounds)
   */
  eventStore?: McpEventStore;
  /**
   * Runs when a legacy session opens (`initialize`), with the connection (headers, principal,
   * client info), and returns the session's initial state, which handlers read and write through
   * `ctx.state()`. The 2026-07-28 era has no session: there it runs for every request, and the
   * state lasts for that request. Throw an `McpError` to refuse the connection. Inject services
   * with `forRootAsync({ useFactory })`. See docs/operations.md, "Session hooks and state".
   */
  onSession?: McpOnSession;
  /**
   * Runs when a legacy session ends, with the reason: `deleted` (the client's DELETE), `expired`
   * (idle past `idleTtlMs`), `evicted` (its owner's oldest, beyond `limits.sessionsPerPrincipal`
   * or `sessionsPerAddress`) or `closed` (`McpSessionAdmin.close()`). Runs on the instance that
   * saw the end; with `redis`, idle expiry is Redis's own and runs no hook.
   */
  onSessionClose?: McpOnSessionClose;
}

/** `sessions` with its defaults applied. @internal */
export type ResolvedMcpSessionOptions = Required<
  Omit<McpSessionOptions, 'store' | 'eventStore' | 'onSession' | 'onSessionClose'>
> &
  Pick<McpSessionOptions, 'store' | 'eventStore' | 'onSession' | 'onSessionClose'>;

/** @internal */
export const DEFAULT_SESSION_OPTIONS = { mode: 'stateful', idleTtlMs: 30 * 60_000, maxSessions: 10_000 } as const;
