import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { loadThrottler } from './mcp-policy-gate.js';

describe('loading @nestjs/throttler', () => {
  it('loads the installed package, exports and all', async () => {
    const throttler = await loadThrottler('a test');
    assert.equal(typeof throttler.ThrottlerStorage, 'symbol');
    assert.equal(typeof throttler.ThrottlerStorageService, 'function');
    assert.equal(typeof throttler.ThrottlerGuard, 'function');
  });

  it('names the package and how to install it when it is missing', async () => {
    await assert.rejects(
      loadThrottler(
        'The rate limit of tool "search" (@Throttle or @McpRateLimit)',
        '@nestjs/throttler-that-is-not-installed',
      ),
      (error: Error) => {
        assert.match(
          error.message,
          /^McpModule: The rate limit of tool "search" \(@Throttle or @McpRateLimit\) needs the "@nestjs\/throttler" package, which could not be loaded/,
        );
        assert.match(error.message, /Install it with "npm install @nestjs\/throttler@6", or remove the rate limit\.$/);
        return true;
      },
    );
  });
});
