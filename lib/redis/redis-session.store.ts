import type { McpSession, McpSessionCreateOptions, McpSessionCreateResult, McpSessionEndReason, McpSessionStore } from '../protocol/session-store.js';
import { RedisKeys, RedisScripts, type McpRedisClient } from './redis-client.js';
import { SESSION_CREATE, SESSION_DELETE, SESSION_GET, SESSION_UPDATE } from './redis-scripts.js';

export interface RedisSessionStoreOptions {
  idleTtlMs: number;
  /** Most live sessions in all; beyond it `create` refuses (after dropping expired ones). */
  maxSessions: number;
  onEvict?: (sessionId: string, reason: 'capacity') => void;
}

/**
 * Legacy sessions in Redis, so that any instance can serve any session. Each session is one JSON
 * string whose TTL is the idle timeout (refreshed on every read, as the in-memory store does).
 * Sorted sets of last-access times, one in all and one per owner, let `create` end an owner's
 * least recently used session beyond its cap and refuse beyond `maxSessions`, in one script.
 * Redis expiry does the sweeping (a tailed GET stream of an expired session ends at its next read).
 *
 * @publicApi
 */
export class RedisSessionStore implements McpSessionStore {
  private readonly scripts: RedisScripts;
  private readonly listeners = new Set<(sessionId: string, reason: McpSessionEndReason) => void>();
  private lastAccess = 0;

  constructor(
    client: McpRedisClient,
    private readonly keys: RedisKeys,
    private readonly options: RedisSessionStoreOptions,
  ) {
    this.scripts = new RedisScripts(client);
  }

  /**
   * The access time to rank a session by: the clock in ms, raised by 1 µs when this instance
   * already used that time. A sorted set breaks equal scores by member name, so two accesses in
   * the same millisecond would otherwise rank by id, and the per-owner cap could end the session
   * used last. A µs step stays exact in a double at epoch-ms magnitude and keeps the ms unit the
   * scripts compare with the idle TTL.
   */
  private accessTime(): number {
    const now = Date.now();
    this.lastAccess = now > this.lastAccess ? now : this.lastAccess + 0.001;
    return this.lastAccess;
  }

  async create(session: McpSession, limits?: McpSessionCreateOptions): Promise<McpSessionCreateResult> {
    const [created, evicted] = (await this.scripts.run(SESSION_CREATE, [], [
      this.keys.prefix,
      session.id,
      JSON.stringify(session),
      this.options.idleTtlMs,
      this.accessTime(),
      this.options.maxSessions,
      limits && session.owner !== undefined ? session.owner : '',
      limits?.maxPerOwner ?? 0,
    ])) as [number, string[]];
    for (const id of evicted) {
      this.options.onEvict?.(id, 'capacity');
      for (const listener of this.listeners) listener(id, 'evicted');
    }
    return created === 1 ? { created: true } : { created: false, reason: 'capacity' };
  }

  onSessionEnd(listener: (sessionId: string, reason: McpSessionEndReason) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  async get(id: string): Promise<McpSession | undefined> {
    const value = (await this.scripts.run(SESSION_GET, [], [this.keys.prefix, id, this.options.idleTtlMs, this.accessTime()])) as string | null;
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
