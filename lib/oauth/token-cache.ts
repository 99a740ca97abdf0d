import type { McpRedisClient } from '../redis/redis-client.js';

/** Introspection answers by token digest, each dropped when its time is up. */
export interface IntrospectionCache {
  get(key: string): Promise<Record<string, unknown> | undefined>;
  set(key: string, claims: Record<string, unknown>, ttlMs: number): Promise<void>;
}

/** In memory, bounded: the oldest entry leaves when a new one would pass `maxEntries`. */
export class MemoryIntrospectionCache implements IntrospectionCache {
  private readonly entries = new Map<string, { claims: Record<string, unknown>; expiresAt: number }>();

  constructor(private readonly maxEntries: number) {}

  async get(key: string): Promise<Record<string, unknown> | undefined> {
    const entry = this.entries.get(key);
    if (!entry) return undefined;
    if (entry.expiresAt <= Date.now()) {
      this.entries.delete(key);
      return undefined;
    }
    return entry.claims;
  }

  async set(key: string, claims: Record<string, unknown>, ttlMs: number): Promise<void> {
    if (this.maxEntries <= 0) return;
    this.entries.delete(key);
    while (this.entries.size >= this.maxEntries) this.entries.delete(this.entries.keys().next().value as string);
    this.entries.set(key, { claims, expiresAt: Date.now() + ttlMs });
  }

  get size(): number {
    return this.entries.size;
  }
}

/** In Redis, shared by every instance; Redis expires each entry with its token. */
export class RedisIntrospectionCache implements IntrospectionCache {
  constructor(
    private readonly client: McpRedisClient,
    private readonly prefix: string,
  ) {}

  async get(key: string): Promise<Record<string, unknown> | undefined> {
    const value = await this.client.call('GET', `${this.prefix}oauth:introspection:${key}`);
    return typeof value === 'string' || Buffer.isBuffer(value)
      ? (JSON.parse(value.toString()) as Record<string, unknown>)
      : undefined;
  }

  async set(key: string, claims: Record<string, unknown>, ttlMs: number): Promise<void> {
    await this.client.call(
      'SET',
      `${this.prefix}oauth:introspection:${key}`,
      JSON.stringify(claims),
      'PX',
      Math.max(1, Math.floor(ttlMs)),
    );
  }
}
