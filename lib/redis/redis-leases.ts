import { createHash, randomBytes } from 'node:crypto';
import { RedisScripts, type McpRedisClient } from './redis-client.js';

/*
 * Concurrency leases of one capability: a sorted set of lease ids scored by their expiry (Redis
 * server time). Acquiring drops expired leases first, so the slots of an instance that died come
 * back once its leases run out; a running call renews its lease. One key per capability, passed
 * in KEYS with a hash tag, so a Redis Cluster routes every script.
 */
const ACQUIRE = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
local active = redis.call('ZCARD', KEYS[1])
if active >= tonumber(ARGV[1]) then return {0, active} end
redis.call('ZADD', KEYS[1], now + tonumber(ARGV[2]), ARGV[3])
redis.call('PEXPIRE', KEYS[1], tonumber(ARGV[2]))
return {1, active + 1}
`;

const RENEW = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local renewed = redis.call('ZADD', KEYS[1], 'XX', 'CH', now + tonumber(ARGV[1]), ARGV[2])
redis.call('PEXPIRE', KEYS[1], tonumber(ARGV[1]))
return renewed
`;

/** A held slot; `release()` is idempotent and settles once the slot is free again. */
export interface McpLease {
  release(): Promise<void>;
}

/** Outcome of asking for a slot: the lease, or how many calls hold the slots. */
export type McpLeaseOutcome = { ok: true; lease: McpLease } | { ok: false; active: number };

/** Concurrency slots per capability key. */
export interface McpLeaseBackend {
  acquire(key: string, max: number): Promise<McpLeaseOutcome>;
}

/** A granted lease whose release runs once, however often a call's teardown paths ask for it. */
function granted(release: () => Promise<void>): McpLeaseOutcome {
  let held = true;
  return {
    ok: true,
    lease: {
      release: async () => {
        if (!held) return;
        held = false;
        await release();
      },
    },
  };
}

/** Slots counted in this process. */
export class InMemoryLeases implements McpLeaseBackend {
  private readonly running = new Map<string, number>();

  async acquire(key: string, max: number): Promise<McpLeaseOutcome> {
    const active = this.running.get(key) ?? 0;
    if (active >= max) return { ok: false, active };
    this.running.set(key, active + 1);
    return granted(async () => {
      const left = (this.running.get(key) ?? 1) - 1;
      if (left > 0) this.running.set(key, left);
      else this.running.delete(key);
    });
  }
}

/** Slots shared by every instance on one Redis; a lease lives `leaseMs` unless renewed. */
export class RedisLeases implements McpLeaseBackend {
  private readonly scripts: RedisScripts;

  constructor(
    client: McpRedisClient,
    private readonly keyPrefix: string,
    private readonly leaseMs: number,
    private readonly onError: (error: unknown) => void = () => undefined,
  ) {
    this.scripts = new RedisScripts(client);
  }

  /** One key per capability, its own hash tag (hashed when the key could break the tag). */
  keyOf(key: string): string {
    const tag = /^[^{}\s]{1,200}$/.test(key) ? key : createHash('sha256').update(key).digest('base64url');
    return `${this.keyPrefix}leases:{${tag}}`;
  }

  async acquire(key: string, max: number): Promise<McpLeaseOutcome> {
    const redisKey = this.keyOf(key);
    const id = randomBytes(9).toString('base64url');
    const [ok, active] = (await this.scripts.run(ACQUIRE, [redisKey], [max, this.leaseMs, id])) as [number, number];
    if (Number(ok) !== 1) return { ok: false, active: Number(active) };
    // Renewed well before expiry, so a slow Redis round trip cannot let a live lease lapse.
    const renew = setInterval(
      () => void this.scripts.run(RENEW, [redisKey], [this.leaseMs, id]).catch(this.onError),
      Math.max(50, Math.floor(this.leaseMs / 3)),
    );
    renew.unref();
    return granted(async () => {
      clearInterval(renew);
      // A failed release only keeps the slot until the lease expires.
      await this.scripts.run(RELEASE, [redisKey], [id]).then(() => undefined, this.onError);
    });
  }
}

const RELEASE = `return redis.call('ZREM', KEYS[1], ARGV[1])`;
