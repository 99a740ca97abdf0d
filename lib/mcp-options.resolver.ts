import { DEFAULT_TOOL_NAME_PATTERN } from './discovery/tool-types.js';
import { randomBytes } from 'node:crypto';
import { isLogLevel } from './protocol/context.js';
import {
  DEFAULT_MCP_LIMITS,
  type McpModuleOptions,
  type ResolvedMcpLimits,
  type ResolvedMcpOptions,
} from './interfaces/mcp-module-options.interface.js';
import * as messages from './common/mcp.messages.js';
import { redisOptionProblems } from './redis/redis-client.js';
import { DEFAULT_SESSION_OPTIONS } from './engine/session-options.js';
import { DEFAULT_SHUTDOWN_OPTIONS } from './transport/shutdown-options.js';
import { DEFAULT_LOG_LEVEL, DEFAULT_MAX_BODY_BYTES } from './transport/transport-settings.js';
import { DEFAULT_CACHE_HINTS } from './protocol/catalog.js';
import { DEFAULT_PAGE_SIZE } from './protocol/paging.js';

/** Merges defaults once and validates, so that a wrong option fails the bootstrap with a reason. */
export function resolveMcpOptions(options: McpModuleOptions): ResolvedMcpOptions {
  if (!options || typeof options !== 'object') throw new Error(messages.INVALID_OPTIONS('no options object was given'));
  const problems: string[] = [];
  if (typeof options.name !== 'string' || options.name.length === 0) problems.push('"name" must be a non-empty string');
  if (typeof options.version !== 'string' || options.version.length === 0)
    problems.push('"version" must be a non-empty string');
  const sessions = options.sessions ?? {};
  const mode = sessions.mode ?? DEFAULT_SESSION_OPTIONS.mode;
  if (mode !== 'stateful' && mode !== 'stateless') problems.push('"sessions.mode" must be "stateful" or "stateless"');
  const positive = (value: unknown, label: string, fallback: number): number => {
    if (value === undefined) return fallback;
    if (typeof value !== 'number' || !Number.isFinite(value) || value <= 0)
      problems.push(`"${label}" must be a positive number`);
    return value as number;
  };
  const idleTtlMs = positive(sessions.idleTtlMs, 'sessions.idleTtlMs', DEFAULT_SESSION_OPTIONS.idleTtlMs);
  const maxSessions = positive(sessions.maxSessions, 'sessions.maxSessions', DEFAULT_SESSION_OPTIONS.maxSessions);
  const maxBodyBytes = positive(options.maxBodyBytes, 'maxBodyBytes', DEFAULT_MAX_BODY_BYTES);
  const keepAliveMs = positive(options.keepAliveMs, 'keepAliveMs', 15_000);
  const clientRequestTimeoutMs = positive(options.clientRequestTimeoutMs, 'clientRequestTimeoutMs', 300_000);
  const stateTtlMs = positive(options.requestState?.ttlMs, 'requestState.ttlMs', 600_000);
  const secret = options.requestState?.secret;
  if (
    secret !== undefined &&
    (typeof secret === 'string' ? secret.length < 16 : !Buffer.isBuffer(secret) || secret.length < 16)
  ) {
    problems.push('"requestState.secret" must be a string or Buffer of at least 16 characters/bytes');
  }
  if (options.toolNamePattern !== undefined && !(options.toolNamePattern instanceof RegExp)) {
    problems.push('"toolNamePattern" must be a RegExp');
  }
  const level = options.defaultLogLevel ?? DEFAULT_LOG_LEVEL;
  if (level !== 'none' && !isLogLevel(level))
    problems.push('"defaultLogLevel" must be an RFC 5424 level name or "none"');
  for (const key of ['allowedOrigins', 'allowedHosts', 'include'] as const) {
    if (options[key] !== undefined && !Array.isArray(options[key])) problems.push(`"${key}" must be an array`);
  }
  const pageSize = options.pageSize ?? DEFAULT_PAGE_SIZE;
  if (!Number.isSafeInteger(pageSize) || pageSize < 1) problems.push('"pageSize" must be a positive integer');
  for (const key of ['discover', 'lists', 'reads'] as const) {
    const hint = options.cache?.[key];
    if (hint !== undefined && !isCacheHint(hint) && !(key === 'lists' && typeof hint === 'function')) {
      problems.push(
        `"cache.${key}" must be { ttlMs: a non-negative integer, cacheScope: "public" | "private" }${key === 'lists' ? ' or a function (list, ctx) returning one' : ''}`,
      );
    }
  }
  const limits = { ...DEFAULT_MCP_LIMITS } as ResolvedMcpLimits;
  if (options.limits !== undefined && (typeof options.limits !== 'object' || options.limits === null))
    problems.push('"limits" must be an object');
  for (const key of Object.keys(DEFAULT_MCP_LIMITS) as Array<keyof ResolvedMcpLimits>) {
    const value = options.limits?.[key];
    if (value === undefined) continue;
    if (!Number.isSafeInteger(value) || value < 1) problems.push(`"limits.${key}" must be a positive integer`);
    else limits[key] = value;
  }
  problems.push(...redisOptionProblems(options));
  for (const key of ['onSession', 'onSessionClose'] as const) {
    if (sessions[key] !== undefined && typeof sessions[key] !== 'function')
      problems.push(`"sessions.${key}" must be a function`);
  }
  const graceMs = options.shutdown?.graceMs ?? DEFAULT_SHUTDOWN_OPTIONS.graceMs;
  if (!Number.isSafeInteger(graceMs) || graceMs < 0) problems.push('"shutdown.graceMs" must be a non-negative integer');
  const retryAfterS = options.shutdown?.retryAfterS ?? DEFAULT_SHUTDOWN_OPTIONS.retryAfterS;
  if (!Number.isSafeInteger(retryAfterS) || retryAfterS < 1)
    problems.push('"shutdown.retryAfterS" must be a positive integer');
  if (problems.length) throw new Error(messages.INVALID_OPTIONS(problems.join('; ')));
  const {
    sessions: _s,
    cache,
    defaultLogLevel: _l,
    requestState: _r,
    clientRequestTimeoutMs: _c,
    pageSize: _p,
    limits: _lim,
    shutdown: _sd,
    ...rest
  } = options;
  return {
    ...rest,
    clientRequestTimeoutMs,
    limits,
    guardAwareLists: options.guardAwareLists ?? true,
    schemas: { nullableOptionals: options.schemas?.nullableOptionals ?? false },
    requestState: {
      secret: secret === undefined ? randomBytes(32) : Buffer.isBuffer(secret) ? secret : Buffer.from(secret, 'utf8'),
      ttlMs: stateTtlMs,
      shared: secret === undefined && options.redis !== undefined,
    },
    maxBodyBytes,
    keepAliveMs,
    toolNamePattern: options.toolNamePattern ?? DEFAULT_TOOL_NAME_PATTERN,
    exposeInternalErrors: options.exposeInternalErrors ?? false,
    sessions: {
      mode,
      idleTtlMs,
      maxSessions,
      store: sessions.store,
      eventStore: sessions.eventStore,
      onSession: sessions.onSession,
      onSessionClose: sessions.onSessionClose,
    },
    shutdown: { graceMs, retryAfterS },
    cache: {
      discover: cache?.discover ?? { ...DEFAULT_CACHE_HINTS.discover },
      lists: cache?.lists ?? { ...DEFAULT_CACHE_HINTS.lists },
      reads: cache?.reads ?? { ...DEFAULT_CACHE_HINTS.reads },
    },
    defaultLogLevel: level === 'none' ? undefined : level,
    pageSize,
  };
}

function isCacheHint(value: unknown): boolean {
  if (typeof value !== 'object' || value === null) return false;
  const { ttlMs, cacheScope } = value as { ttlMs?: unknown; cacheScope?: unknown };
  return Number.isSafeInteger(ttlMs) && (ttlMs as number) >= 0 && (cacheScope === 'public' || cacheScope === 'private');
}
