// The `shutdown` slice of the module options: the transport lifecycle drains with `graceMs`, the
// HTTP handler refuses with `retryAfterS`.

/** @publicApi */
export interface McpShutdownOptions {
  /** How long running calls may go on after the signal before they are cancelled. @default 10000 */
  graceMs?: number;
  /** The `Retry-After` (seconds) of requests refused while shutting down. @default 1 */
  retryAfterS?: number;
}

/** `shutdown` with its defaults applied. @internal */
export type ResolvedMcpShutdownOptions = Required<McpShutdownOptions>;

/** @internal */
export const DEFAULT_SHUTDOWN_OPTIONS: ResolvedMcpShutdownOptions = { graceMs: 10_000, retryAfterS: 1 };
