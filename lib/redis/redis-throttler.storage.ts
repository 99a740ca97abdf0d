import { createHash } from 'node:crypto';
import { RedisScripts, type McpRedisClient } from './redis-client.js';

/**
 * What `@nestjs/throttler`'s `ThrottlerStorage.increment` answers. Declared here, structurally,
 * so that this package's typings do not need `@nestjs/throttler` installed.
 *
 * @publicApi
 */
export interface McpThrottlerStorageRecord {
  totalHits: number;
  /** Seconds until the window ends. */
  timeToExpire: number;
  isBlocked: boolean;
  /** Seconds until the block ends (0 when not blocked). */
  timeToBlockExpire: number;
}

/**
 * The `ThrottlerStorage` shape of `@nestjs/throttler` (the interface an app passes as
 * `ThrottlerModule.forRoot({ storage })`).
 *
 * @publicApi
 */
export interface McpThrottlerStorage {
  increment(
    key: string,
    ttl: number,
    limit: number,
    blockDuration: number,
    throttlerName: string,
  ): Promise<McpThrottlerStorageRecord>;
}

/*
 * One hash per throttler key (hits, window end, block end), read and written by one script on
 * that one key, so that a Redis Cluster routes it (the key travels in KEYS and carries a hash
 * tag) and concurrent instances never interleave. Times come from the Redis server (TIME), so
 * instances with skewed clocks still agree on one window.
 */
const INCREMENT = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local ttl = tonumber(ARGV[1])
local limit = tonumber(ARGV[2])
local block = tonumber(ARGV[3])
local state = redis.call('HMGET', KEYS[1], 'hits', 'exp', 'blk')
local hits = tonumber(state[1]) or 0
local exp = tonumber(state[2]) or 0
local blk = tonumber(state[3]) or 0
if blk > now then
  return {hits, math.ceil((exp - now) / 1000), 1, math.ceil((blk - now) / 1000)}
end
if exp <= now then
  hits = 0
  exp = now + ttl
end
hits = hits + 1
local blocked = 0
local wait = 0
if hits > limit then
  blocked = 1
  if block > 0 then blk = now + block else blk = exp end
  wait = math.ceil((blk - now) / 1000)
end
redis.call('HSET', KEYS[1], 'hits', hits, 'exp', exp, 'blk', blk)
redis.call('PEXPIREAT', KEYS[1], math.max(exp, blk))
return {hits, math.ceil((exp - now) / 1000), blocked, wait}
`;

const PLAIN_KEY = /^[^{}\s]{1,200}$/;

/**
 * A `@nestjs/throttler` storage on Redis, so that a rate limit holds across every instance
 * sharing the Redis: one key per throttler key (tool and tracker), fixed window, blocked for
 * `blockDuration` once over the limit. McpModule uses it for MCP calls by itself when its `redis`
 * option is on and the app's `ThrottlerModule` was given no `storage`; pass it as that `storage`
 * to limit HTTP routes globally too.
 *
 * @example
 * ```ts
 * ThrottlerModule.forRoot({ throttlers: [{ ttl: 60_000, limit: 100 }], storage: new McpRedisThrottlerStorage(redis) })
 * ```
 * @publicApi
 */
export class McpRedisThrottlerStorage implements McpThrottlerStorage {
  private readonly scripts: RedisScripts;

  constructor(
    client: McpRedisClient,
    private readonly keyPrefix = 'mcp:throttle:',
  ) {
    this.scripts = new RedisScripts(client);
  }

  /** The Redis key of a throttler key: its own hash tag, so each key is one Cluster slot. */
  keyOf(key: string): string {
    const tag = PLAIN_KEY.test(key) ? key : createHash('sha256').update(key).digest('base64url');
    return `${this.keyPrefix}{${tag}}`;
  }

  async increment(
    key: string,
    ttl: number,
    limit: number,
    blockDuration: number,
    _throttlerName: string,
  ): Promise<McpThrottlerStorageRecord> {
    const reply = (await this.scripts.run(
      INCREMENT,
      [this.keyOf(key)],
      [Math.max(1, Math.ceil(ttl)), limit, Math.max(0, Math.ceil(blockDuration))],
    )) as number[];
    return {
      totalHits: Number(reply[0]),
      timeToExpire: Number(reply[1]),
      isBlocked: Number(reply[2]) === 1,
      timeToBlockExpire: Number(reply[3]),
    };
  }
}
