import {
  HttpException,
  HttpStatus,
  Injectable,
  RequestTimeoutException,
  SetMetadata,
  UseInterceptors,
  applyDecorators,
  type CallHandler,
  type ExecutionContext,
  type NestInterceptor,
} from '@nestjs/common';
import { Observable, finalize, throwError, timeout } from 'rxjs';
import type { McpCall } from './mcp-call.interface.js';
import { MCP_CONTEXT_TYPE } from './mcp-execution-context.js';

const TIMEOUT_METADATA = 'mcp:policy:timeout';
const CONCURRENCY_METADATA = 'mcp:policy:concurrency';
const RATE_LIMIT_METADATA = 'mcp:policy:rate-limit';

/** @publicApi */
export interface McpRateLimitOptions {
  /** Calls allowed per window. */
  limit: number;
  /** Window length in milliseconds. */
  windowMs: number;
  /**
   * What the limit is counted by. @default the authenticated principal, else the session, else
   * one shared bucket
   */
  key?: (call: McpCall) => string;
}

function metadataOf<T>(context: ExecutionContext, key: string): T | undefined {
  return (Reflect.getMetadata(key, context.getHandler()) ?? Reflect.getMetadata(key, context.getClass())) as T | undefined;
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

/** Refuses a call while too many calls of the same handler run. */
@Injectable()
export class McpConcurrencyInterceptor implements NestInterceptor {
  private readonly running = new WeakMap<Function, number>();

  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    const max = metadataOf<number>(context, CONCURRENCY_METADATA);
    const call = callOf(context);
    if (!max || !call) return next.handle();
    const handler = context.getHandler();
    const active = this.running.get(handler) ?? 0;
    if (active >= max) {
      throw new HttpException(
        `Tool "${call.name}" is busy: ${active} call(s) are running and the limit is ${max}. Try again shortly.`,
        HttpStatus.TOO_MANY_REQUESTS,
      );
    }
    this.running.set(handler, active + 1);
    return next.handle().pipe(finalize(() => this.running.set(handler, (this.running.get(handler) ?? 1) - 1)));
  }
}

/** Fixed-window rate limit per key (principal, session, or a function of the call). */
@Injectable()
export class McpRateLimitInterceptor implements NestInterceptor {
  private readonly windows = new WeakMap<Function, Map<string, { count: number; resetAt: number }>>();

  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    const options = metadataOf<McpRateLimitOptions>(context, RATE_LIMIT_METADATA);
    const call = callOf(context);
    if (!options || !call) return next.handle();
    const handler = context.getHandler();
    let buckets = this.windows.get(handler);
    if (!buckets) this.windows.set(handler, (buckets = new Map()));
    const key = options.key?.(call) ?? call.context.principal ?? call.context.sessionId ?? '*';
    const now = Date.now();
    let bucket = buckets.get(key);
    if (!bucket || bucket.resetAt <= now) {
      if (buckets.size > 10_000) for (const [k, b] of buckets) if (b.resetAt <= now) buckets.delete(k);
      bucket = { count: 0, resetAt: now + options.windowMs };
      buckets.set(key, bucket);
    }
    if (++bucket.count > options.limit) {
      const seconds = Math.ceil((bucket.resetAt - now) / 1000);
      throw new HttpException(
        `Rate limit for tool "${call.name}" reached: ${options.limit} call(s) per ${options.windowMs} ms. Try again in ${seconds} s.`,
        HttpStatus.TOO_MANY_REQUESTS,
      );
    }
    return next.handle();
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
 * At most `max` calls of this handler run at once in this process; more are refused with a
 * readable tool error.
 *
 * @publicApi
 */
export function McpConcurrency(max: number): MethodDecorator & ClassDecorator {
  return applyDecorators(SetMetadata(CONCURRENCY_METADATA, max), UseInterceptors(McpConcurrencyInterceptor));
}

/**
 * At most `limit` calls per `windowMs` per key (by default the authenticated principal, else the
 * session); more are refused with a readable tool error.
 *
 * @publicApi
 */
export function McpRateLimit(options: McpRateLimitOptions): MethodDecorator & ClassDecorator {
  return applyDecorators(SetMetadata(RATE_LIMIT_METADATA, options), UseInterceptors(McpRateLimitInterceptor));
}
