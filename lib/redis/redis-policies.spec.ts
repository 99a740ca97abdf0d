import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { Redis } from 'ioredis';
import { REDIS_URL, clearRedisPrefix, redisAvailable } from '../../test/utils/redis.js';
import type { McpRedisClient } from './redis-client.js';
import { RedisLeases } from './redis-leases.js';
import { McpRedisThrottlerStorage } from './redis-throttler.storage.js';

const skip = (await redisAvailable()) ? false : `no Redis at ${REDIS_URL}`;

describe('Redis policy state (throttler storage, concurrency leases)', { skip }, () => {
  const prefix = `mcp-test:policy-unit:${randomBytes(6).toString('hex')}:`;
  let redis: Redis;

  before(() => {
    redis = new Redis(REDIS_URL);
  });
  after(async () => {
    redis?.disconnect();
    await clearRedisPrefix(prefix);
  });

  it('counts hits in one window and blocks past the limit for blockDuration', async () => {
    const storage = new McpRedisThrottlerStorage(redis as unknown as McpRedisClient, `${prefix}throttle:`);
    const first = await storage.increment('tool:a:default:principal:p1', 60_000, 2, 120_000, 'default');
    assert.deepEqual(
      { hits: first.totalHits, blocked: first.isBlocked, wait: first.timeToBlockExpire },
      { hits: 1, blocked: false, wait: 0 },
    );
    assert.ok(first.timeToExpire > 0 && first.timeToExpire <= 60, `timeToExpire ${first.timeToExpire}`);
    assert.equal(
      (await storage.increment('tool:a:default:principal:p1', 60_000, 2, 120_000, 'default')).isBlocked,
      false,
    );
    const third = await storage.increment('tool:a:default:principal:p1', 60_000, 2, 120_000, 'default');
    assert.equal(third.isBlocked, true);
    assert.ok(
      third.timeToBlockExpire > 60 && third.timeToBlockExpire <= 120,
      `timeToBlockExpire ${third.timeToBlockExpire}`,
    );
    // While blocked, calls are refused without counting further.
    const fourth = await storage.increment('tool:a:default:principal:p1', 60_000, 2, 120_000, 'default');
    assert.equal(fourth.isBlocked, true);
    assert.equal(fourth.totalHits, 3);
    // Another caller has a bucket of its own.
    assert.equal((await storage.increment('tool:a:default:principal:p2', 60_000, 2, 120_000, 'default')).totalHits, 1);
    // The key expires with its window (or block), so Redis keeps nothing for idle callers.
    const ttl = await redis.pttl(`${prefix}throttle:{tool:a:default:principal:p1}`);
    assert.ok(ttl > 60_000 && ttl <= 120_000, `PTTL ${ttl}`);
  });

  it('gives a key that could break its hash tag a hashed tag', () => {
    const storage = new McpRedisThrottlerStorage(redis as unknown as McpRedisClient, 'p:');
    assert.equal(storage.keyOf('tool:a:default:address:127.0.0.1'), 'p:{tool:a:default:address:127.0.0.1}');
    assert.match(storage.keyOf('tool:a:default:principal:{evil}'), /^p:\{[A-Za-z0-9_-]{43}\}$/);
  });

  it('grants at most max leases, and a released one is free again at once', async () => {
    const leases = new RedisLeases(redis as unknown as McpRedisClient, prefix, 30_000);
    const one = await leases.acquire('tool:x', 2);
    const two = await leases.acquire('tool:x', 2);
    assert.ok(one.ok && two.ok);
    assert.deepEqual(await leases.acquire('tool:x', 2), { ok: false, active: 2 });
    await one.lease.release();
    await one.lease.release();
    const three = await leases.acquire('tool:x', 2);
    assert.ok(three.ok, 'a released slot was not given back');
    await two.lease.release();
    if (three.ok) await three.lease.release();
    assert.equal(await redis.exists(leases.keyOf('tool:x')), 0);
  });
});
