import type { LogLevel } from '../protocol/mcp-types.js';

/**
 * What every transport (HTTP, stdio, in-process) reads of the resolved module options, which
 * declare each with its default. @internal
 */
export interface McpTransportSettings {
  /** `maxBodyBytes`: the largest message a transport accepts. */
  maxBodyBytes: number;
  /** `defaultLogLevel`; undefined for `'none'`. */
  defaultLogLevel?: LogLevel;
}

/** `defaultLogLevel` when unset. @internal */
export const DEFAULT_LOG_LEVEL: LogLevel = 'info';

/** `maxBodyBytes` when unset: 4 MiB. @internal */
export const DEFAULT_MAX_BODY_BYTES = 4 * 1024 * 1024;
