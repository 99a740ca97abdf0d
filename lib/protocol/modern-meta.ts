import { isLogLevel } from './context.js';
import { ErrorCode, failure, type JsonRpcFailure, type JsonRpcId } from './json-rpc.js';
import { LOG_LEVELS, type Implementation, type JsonObject, type LogLevel } from './mcp-types.js';
import {
  LEGACY_PROTOCOL_VERSIONS,
  META_CLIENT_CAPABILITIES,
  META_CLIENT_INFO,
  META_LOG_LEVEL,
  META_PROTOCOL_VERSION,
  MODERN_PROTOCOL_VERSIONS,
  isSupportedModernVersion,
} from './versions.js';

/** What the per-request `_meta` of a 2026-07-28 request says about its sender. */
export interface ModernMeta {
  protocolVersion: string;
  capabilities: JsonObject;
  clientInfo?: Implementation;
  logLevel?: LogLevel;
}

/**
 * Reads and validates the `_meta` envelope every 2026-07-28 request carries, the same way for
 * every transport: a missing `_meta`, version or capabilities object is -32602, an unsupported
 * version -32022 with `data.supported` and `data.requested`, an unknown log level -32602.
 *
 * `checkTransportVersion` runs after the version is read and before it is checked against the
 * supported ones, for transports that repeat the version outside the body (HTTP's
 * `MCP-Protocol-Version` header): a disagreement there outranks an unsupported version.
 */
export function readModernMeta(
  params: Record<string, unknown> | undefined,
  id: JsonRpcId | null,
  checkTransportVersion?: (version: string) => JsonRpcFailure | undefined,
): ModernMeta | JsonRpcFailure {
  const meta = params?._meta;
  if (!isObject(meta) || typeof meta[META_PROTOCOL_VERSION] !== 'string') {
    return failure(
      id,
      ErrorCode.InvalidParams,
      `Invalid params: a ${MODERN_PROTOCOL_VERSIONS[0]} request needs params._meta["${META_PROTOCOL_VERSION}"] (a version string) and params._meta["${META_CLIENT_CAPABILITIES}"] (an object).`,
    );
  }
  const version = meta[META_PROTOCOL_VERSION] as string;
  const transportProblem = checkTransportVersion?.(version);
  if (transportProblem) return transportProblem;
  if (!isSupportedModernVersion(version)) {
    return failure(
      id,
      ErrorCode.UnsupportedProtocolVersion,
      `Unsupported protocol version "${version}". This server supports ${[...MODERN_PROTOCOL_VERSIONS, ...LEGACY_PROTOCOL_VERSIONS].join(', ')} (the legacy ones through initialize).`,
      { supported: [...MODERN_PROTOCOL_VERSIONS], requested: version },
    );
  }
  const capabilities = meta[META_CLIENT_CAPABILITIES];
  if (!isObject(capabilities)) {
    return failure(
      id,
      ErrorCode.InvalidParams,
      `Invalid params: params._meta["${META_CLIENT_CAPABILITIES}"] must be an object (use {} for none).`,
    );
  }
  const logLevel = meta[META_LOG_LEVEL];
  if (logLevel !== undefined && !isLogLevel(logLevel)) {
    return failure(
      id,
      ErrorCode.InvalidParams,
      `Invalid params: unknown log level ${JSON.stringify(logLevel)} in params._meta["${META_LOG_LEVEL}"]. Use one of: ${LOG_LEVELS.join(', ')}.`,
    );
  }
  const clientInfo = meta[META_CLIENT_INFO];
  const result: ModernMeta = { protocolVersion: version, capabilities };
  if (isObject(clientInfo)) result.clientInfo = clientInfo as unknown as Implementation;
  if (logLevel !== undefined) result.logLevel = logLevel;
  return result;
}

/** True when a message's `_meta` marks it as a 2026-07-28 (stateless) request. */
export function hasModernMeta(params: Record<string, unknown> | undefined): boolean {
  const meta = params?._meta;
  return isObject(meta) && META_PROTOCOL_VERSION in meta;
}

function isObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
