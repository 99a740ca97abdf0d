import type { McpSession, McpSessionStore } from '../protocol/session-store.js';
import { RedisKeys, RedisScripts, type McpRedisClient } from './redis-client.js';
import { SESSION_CREATE, SESSION_DELETE, SESSION_GET, SESSION_UPDATE } from './redis-scripts.js';

export interface RedisSessionStoreOptions {
  idleTtlMs: number;
  maxSessions: number;
  onEvict?: (sessionId: string, reason: 'capacity') => void;
}

/**
 * Legacy sessions in Redis, so that any instance can serve any session. Each session is one JSON
 * string whose TTL is the idle timeout (refreshed on every read, as the in-memory store does);
 * a sorted set of last-access times lets `create` evict the least recently used beyond
 * `maxSessions`. Redis expiry does the sweeping.
 *
 * @publicApi
 */
export class RedisSessionStore implements McpSessionStore {
  private readonly scripts: RedisScripts;

  constructor(
    client: McpRedisClient,
    private readonly keys: RedisKeys,
    private readonly options: RedisSessionStoreOptions,
  ) {
    this.scripts = new RedisScripts(client);
  }

  async create(session: McpSession): Promise<void> {
    const evicted = (await this.scripts.run(SESSION_CREATE, [], [
      this.keys.prefix,
      session.id,
      JSON.stringify(session),
      this.options.idleTtlMs,
      Date.now(),
      this.options.maxSessions,
    ])) as string[];
    for (const id of evicted) this.options.onEvict?.(id, 'capacity');
  }

  async get(id: string): Promise<McpSession | undefined> {
    const value = (await this.scripts.run(SESSION_GET, [], [this.keys.prefix, id, this.options.idleTtlMs, Date.now()])) as string | null;
    if (value === null) return undefined;
    try {
      return JSON.parse(value) as McpSession;
    } catch {
      return undefined;
    }
  }

  async update(session: McpSession): Promise<void> {
    await this.scripts.run(SESSION_UPDATE, [], [this.keys.prefix, session.id, JSON.stringify(session), this.options.idleTtlMs]);
  }

  async delete(id: string): Promise<boolean> {
    const result = await this.scripts.run(SESSION_DELETE, [], [this.keys.prefix, id]);
    return result !== null;
  }

  /** The connection belongs to the Redis backend, which closes it. */
  close(): void {}
}
