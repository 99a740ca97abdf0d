import type { ReplayGuard } from '../protocol/interaction.js';
import { type RedisKeys, type McpRedisClient } from './redis-client.js';

/**
 * Single-use requestState nonces shared by every instance: `SET NX` with the state's remaining
 * lifetime as TTL, so a state redeemed on one instance is refused on all, and nothing outlives it.
 *
 * @publicApi
 */
export class RedisReplayGuard implements ReplayGuard {
  constructor(
    private readonly client: McpRedisClient,
    private readonly keys: RedisKeys,
  ) {}

  async consume(nonce: string, expiresAt: number): Promise<boolean> {
    const ttl = Math.max(1, Math.ceil(expiresAt - Date.now()));
    const reply = await this.client.call('SET', this.keys.nonce(nonce), '1', 'PX', ttl, 'NX');
    return reply === 'OK';
  }
}
