import type { McpContext } from './context.js';
import type { LogLevel } from './mcp-types.js';

// A registry symbol, so an emission built by one copy of the package (ESM or CommonJS) is one to the other.
const EMISSION: unique symbol = Symbol.for('nestjs-model-context:emission');

/** A value an Observable handler emits to notify the client instead of producing a result. */
export interface McpEmission {
  readonly [EMISSION]: true;
  apply(ctx: McpContext): void;
}

export function isEmission(value: unknown): value is McpEmission {
  return typeof value === 'object' && value !== null && (value as McpEmission)[EMISSION] === true;
}

/**
 * Notifications an Observable handler can emit among its values. They travel on the call's SSE
 * stream; every other value is a candidate result (the last one wins).
 *
 * @example
 * ```ts
 * @Tool({ description: 'Import rows' })
 * import(): Observable<unknown> {
 *   return rows$.pipe(
 *     map((row, i) => Emit.progress(i + 1, total, `row ${i + 1}`)),
 *     endWith({ imported: total }),
 *   );
 * }
 * ```
 * @publicApi
 */
export const Emit = {
  /** `notifications/progress` (sent only when the request carried a progressToken). */
  progress(progress: number, total?: number, message?: string): McpEmission {
    return { [EMISSION]: true, apply: (ctx) => ctx.progress(progress, total, message) };
  },
  /** `notifications/message` (sent only at or above the client's log level). */
  log(level: LogLevel, data: unknown, logger?: string): McpEmission {
    return { [EMISSION]: true, apply: (ctx) => ctx.log(level, data, logger) };
  },
} as const;
