import { INVALID_OPTIONS } from '../common/mcp.messages.js';
import type { McpSessionIds } from './observer.js';

/**
 * OpenTelemetry options of McpModule. Tracing and metrics follow the OpenTelemetry semantic
 * conventions for MCP and go to whatever SDK the app registers (`NodeSDK`, a `TracerProvider`);
 * before one is registered they cost next to nothing.
 *
 * @publicApi
 */
export interface McpTelemetryOptions {
  /**
   * `true` fails the bootstrap when `@opentelemetry/api` cannot be loaded; `false` turns telemetry
   * off. @default on when `@opentelemetry/api` is installed, off otherwise
   */
  enabled?: boolean;
  /** The instrumentation scope name of the tracer and meter. @default 'nestjs-model-context' */
  tracerName?: string;
  /** The instrumentation scope version. @default none */
  tracerVersion?: string;
  /**
   * How spans carry `mcp.session.id`: a keyed hash (tells sessions apart, names none), the raw
   * id (which on a server without auth is all a trace reader needs to use the session), or
   * nothing. See {@link McpSessionIds}. @default 'hashed'
   */
  sessionIds?: McpSessionIds;
}

/** Telemetry after defaults. @internal */
export interface ResolvedMcpTelemetry {
  /** `auto`: on when `@opentelemetry/api` loads; `true`: the bootstrap fails without it. */
  enabled: boolean | 'auto';
  tracerName: string;
  tracerVersion?: string;
  sessionIds: McpSessionIds;
}

/** The instrumentation scope of this package's spans and metrics. */
export const MCP_TRACER_NAME = 'nestjs-model-context';

const SESSION_ID_MODES: readonly McpSessionIds[] = ['hashed', 'raw', 'omitted'];

/** Whether a `sessionIds` option is one of the modes. @internal */
export function isSessionIdMode(value: unknown): value is McpSessionIds {
  return (SESSION_ID_MODES as readonly unknown[]).includes(value);
}

/** The `telemetry` slice of the module options (null without it). @internal */
export const MCP_TELEMETRY_OPTIONS = Symbol.for('nestjs-model-context:MCP_TELEMETRY_OPTIONS');

/** `telemetry` after defaults; throws naming the option when it is malformed. @internal */
export function resolveTelemetry(option: boolean | McpTelemetryOptions | undefined): ResolvedMcpTelemetry {
  if (option === undefined) return { enabled: 'auto', tracerName: MCP_TRACER_NAME, sessionIds: 'hashed' };
  if (typeof option === 'boolean') return { enabled: option, tracerName: MCP_TRACER_NAME, sessionIds: 'hashed' };
  const problems: string[] = [];
  if (typeof option !== 'object' || option === null)
    problems.push('"telemetry" must be a boolean or { enabled?, tracerName?, tracerVersion?, sessionIds? }');
  else {
    if (option.enabled !== undefined && typeof option.enabled !== 'boolean')
      problems.push('"telemetry.enabled" must be a boolean');
    if (option.tracerName !== undefined && (typeof option.tracerName !== 'string' || option.tracerName.length === 0))
      problems.push('"telemetry.tracerName" must be a non-empty string');
    if (option.tracerVersion !== undefined && typeof option.tracerVersion !== 'string')
      problems.push('"telemetry.tracerVersion" must be a string');
    if (option.sessionIds !== undefined && !isSessionIdMode(option.sessionIds))
      problems.push(`"telemetry.sessionIds" must be one of ${SESSION_ID_MODES.map((m) => `'${m}'`).join(', ')}`);
  }
  if (problems.length) throw new Error(INVALID_OPTIONS(problems.join('; ')));
  return {
    enabled: option.enabled ?? 'auto',
    tracerName: option.tracerName ?? MCP_TRACER_NAME,
    tracerVersion: option.tracerVersion,
    sessionIds: option.sessionIds ?? 'hashed',
  };
}
