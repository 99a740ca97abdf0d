import { Injectable } from '@nestjs/common';
import { McpClients } from './mcp-clients.js';
import type { McpClientCaller } from './mcp-client.interfaces.js';

/** One upstream's health; `status` is what @nestjs/terminus reads. @publicApi */
export interface McpClientHealthDetails {
  status: 'up' | 'down';
  /** Round trip of a `ping`. */
  latencyMs?: number;
  /** Why the upstream is down. */
  message?: string;
  [detail: string]: unknown;
}

/**
 * Liveness of upstream MCP servers for @nestjs/terminus (or any health endpoint), without
 * importing terminus: each check pings the upstream over the client's connection. A client that
 * connects per caller (`pass-through`, `token-exchange`) is pinged as `caller` when one is given.
 *
 * @example
 * ```ts
 * @Get('health') @HealthCheck()
 * check() { return this.health.check([() => this.upstreams.isHealthy('crm')]); }
 * ```
 * @publicApi
 */
@Injectable()
export class McpClientHealthIndicator {
  constructor(private readonly clients: McpClients) {}

  async isHealthy<Key extends string>(
    name: Key,
    options: { timeoutMs?: number; caller?: McpClientCaller } = {},
  ): Promise<Record<Key, McpClientHealthDetails>> {
    const client = this.clients.get(name);
    const started = performance.now();
    try {
      await client.ping({ timeoutMs: options.timeoutMs ?? 2_000, caller: options.caller });
      return { [name]: { status: 'up', latencyMs: Math.round(performance.now() - started) } } as Record<
        Key,
        McpClientHealthDetails
      >;
    } catch (error) {
      return { [name]: { status: 'down', message: error instanceof Error ? error.message : String(error) } } as Record<
        Key,
        McpClientHealthDetails
      >;
    }
  }
}
