import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { redisAddress, redisOptionProblems } from './redis-client.js';

describe('redis fault options', () => {
  it('refuses a command timeout or Retry-After that is not a positive integer, naming the option', () => {
    assert.deepEqual(redisOptionProblems({ redis: { url: 'redis://x', commandTimeoutMs: 0, retryAfterS: 1.5 } }), [
      '"redis.commandTimeoutMs" must be a positive integer',
      '"redis.retryAfterS" must be a positive integer',
    ]);
    assert.deepEqual(redisOptionProblems({ redis: { url: 'redis://x', commandTimeoutMs: 500, retryAfterS: 3 } }), []);
  });

  it('names Redis by host:port in messages, never with its password', () => {
    assert.equal(redisAddress('redis://user:secret@cache.internal:6380/2', undefined), 'cache.internal:6380');
    assert.equal(redisAddress('rediss://cache.internal', undefined), 'cache.internal:6379');
    assert.equal(redisAddress(undefined, { host: '10.0.0.5', port: 7000 }), '10.0.0.5:7000');
    assert.equal(redisAddress(undefined, undefined), '127.0.0.1:6379');
  });
});
