import {
  Injectable,
  RequestTimeoutException,
  SetMetadata,
  UseInterceptors,
  applyDecorators,
  type CallHandler,
  type ExecutionContext,
  type NestInterceptor,
} from '@nestjs/common';
import { Observable, throwError, timeout } from 'rxjs';
import type { McpCall } from '../protocol/mcp-call.js';
import { MCP_CONTEXT_TYPE } from './mcp-execution-context.js';

const TIMEOUT_METADATA = 'mcp:policy:timeout';
/** @internal Read by McpPolicyGate. */
export const CONCURRENCY_METADATA = 'mcp:policy:concurrency';
// @nestjs/throttler's metadata keys for its "default" throttler: @McpRateLimit writes what
// @Throttle({ default: ... }) writes, so both take one path.
const THROTTLE_LIMIT_DEFAULT = 'THROTTLER:LIMIT' + 'default';
const THROTTLE_TTL_DEFAULT = 'THROTTLER:TTL' + 'default';
const THROTTLE_TRACKER_DEFAULT = 'THROTTLER:TRACKER' + 'default';

/** @publicApi */
export interface McpRateLimitOptions {
  /** Calls allowed per window. */
  limit: number;
  /** Window length in milliseconds. */
  windowMs: number;
  /**
   * What the limit is counted by. @default the authenticated principal, else the client address
   * (Express's `trust proxy` / Fastify's `trustProxy` decide which one), whatever session or
   * protocol era the caller uses
   */
  key?: (call: McpCall) => string;
}

function metadataOf<T>(context: ExecutionContext, key: string): T | undefined {
  return (Reflect.getMetadata(key, context.getHandler()) ?? Reflect.getMetadata(key, context.getClass())) as
    T | undefined;
}

function callOf(context: ExecutionContext): McpCall | undefined {
  return context.getType<string>() === MCP_CONTEXT_TYPE ? context.getArgByIndex<McpCall>(2) : undefined;
}

/** Cancels a call that runs too long, through the same path as a client cancellation. */
@Injectable()
export class McpTimeoutInterceptor implements NestInterceptor {
  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    const ms = metadataOf<number>(context, TIMEOUT_METADATA);
    const call = callOf(context);
    if (!ms || !call) return next.handle();
    return next.handle().pipe(
      timeout({
        first: ms,
        with: () => {
          const message = `Tool "${call.name}" took longer than ${ms} ms and was cancelled. Try a smaller request.`;
          call.context.cancel(message);
          return throwError(() => new RequestTimeoutException(message));
        },
      }),
    );
  }
}

/**
 * Cancels the call (its AbortSignal fires, an Observable handler is torn down) after `ms`
 * milliseconds; the model gets a readable tool error.
 *
 * @publicApi
 */
export function McpTimeout(ms: number): MethodDecorator & ClassDecorator {
  return applyDecorators(SetMetadata(TIMEOUT_METADATA, ms), UseInterceptors(McpTimeoutInterceptor));
}

/**
 * At most `max` calls of this capability run at once (on a class: of each of its capabilities);
 * more are refused with a readable tool error. Counted per capability, whatever the provider's
 * scope; with the `redis` option, across every instance (leases of `limits.concurrencyLeaseMs`
 * that a running call renews, so the slots of an instance that died come back).
 *
 * @publicApi
 */
export function McpConcurrency(max: number): MethodDecorator & ClassDecorator {
  if (!Number.isSafeInteger(max) || max < 1) {
    throw new Error(
      `@McpConcurrency(${String(max)}): the limit must be a positive integer, such as @McpConcurrency(1).`,
    );
  }
  return SetMetadata(CONCURRENCY_METADATA, max);
}

/**
 * Shorthand for `@Throttle({ default: { limit, ttl: windowMs } })` of `@nestjs/throttler` (an
 * optional peer dependency, needed once a limited capability is called): at most `limit` calls
 * per `windowMs` per caller, through the app's ThrottlerModule storage (Redis with the `redis`
 * option), refused with a readable tool error.
 *
 * @publicApi
 */
export function McpRateLimit(options: McpRateLimitOptions): MethodDecorator & ClassDecorator {
  const { limit, windowMs, key } = options ?? ({} as McpRateLimitOptions);
  if (!Number.isSafeInteger(limit) || limit < 1 || !Number.isSafeInteger(windowMs) || windowMs < 1) {
    throw new Error(
      '@McpRateLimit needs a positive integer "limit" and "windowMs", such as @McpRateLimit({ limit: 5, windowMs: 60_000 }).',
    );
  }
  const decorators = [SetMetadata(THROTTLE_LIMIT_DEFAULT, limit), SetMetadata(THROTTLE_TTL_DEFAULT, windowMs)];
  if (key)
    decorators.push(
      SetMetadata(THROTTLE_TRACKER_DEFAULT, (_req: unknown, context: ExecutionContext) =>
        key(context.getArgByIndex<McpCall>(2)),
      ),
    );
  return applyDecorators(...decorators);
}
