import { Inject, Injectable } from '@nestjs/common';
import { MCP_REDIS, type McpRedisBackend } from '../redis/redis-backend.js';
import { describeError } from '../redis/redis-client.js';

/** The details of one indicator; `status` is what @nestjs/terminus reads. @publicApi */
export interface McpHealthDetails {
  status: 'up' | 'down';
  /** Where sessions, SSE events and notifications live. */
  store: 'memory' | 'redis';
  /** Redis round trip of a PING. */
  latencyMs?: number;
  /** Why the store is down. */
  message?: string;
  [detail: string]: unknown;
}

/** The shape of a @nestjs/terminus `HealthIndicatorResult`. @publicApi */
export type McpHealthResult<Key extends string = string> = Record<Key, McpHealthDetails>;

/**
 * Readiness of the module's shared state, for @nestjs/terminus or any health endpoint. With the
 * `redis` option it PINGs Redis (an instance that cannot reach Redis cannot serve sessions held
 * elsewhere, so it should leave the load balancer); in memory it is always up. It never throws and
 * does not import terminus: a `down` result fails `HealthCheckService.check` all the same.
 *
 * @example
 * ```ts
 * @Get('ready') @HealthCheck()
 * ready() { return this.health.check([() => this.mcpHealth.isHealthy('mcp')]); }
 * ```
 * @publicApi
 */
@Injectable()
export class McpHealthIndicator {
  constructor(@Inject(MCP_REDIS) private readonly redis: McpRedisBackend | null) {}

  async isHealthy<Key extends string>(key: Key, options: { timeoutMs?: number } = {}): Promise<McpHealthResult<Key>> {
    return { [key]: await this.details(options.timeoutMs) } as McpHealthResult<Key>;
  }

  private async details(timeoutMs = 2_000): Promise<McpHealthDetails> {
    if (!this.redis) return { status: 'up', store: 'memory' };
    const connections = this.redis.status;
    try {
      const latencyMs = await this.redis.ping(timeoutMs);
      if (connections.subscriber !== 'ready') {
        return {
          status: 'down',
          store: 'redis',
          latencyMs,
          message: `the pub/sub connection is ${connections.subscriber}`,
          connections,
        };
      }
      return { status: 'up', store: 'redis', latencyMs, connections };
    } catch (error) {
      return {
        status: 'down',
        store: 'redis',
        message: `Redis did not answer a PING: ${describeError(error)}`,
        connections,
      };
    }
  }
}
