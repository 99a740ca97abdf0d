/**
 * The package has an ESM and a CommonJS build. `import` must reach the very file the repository's
 * tests load (one library per process), `require` the CommonJS build, and both copies must agree
 * on DI tokens and metadata keys, so an app that loads both still wires one module.
 */
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, it } from 'node:test';
import * as esmConstants from '../../lib/common/mcp.constants.js';
import { MCP_REDIS as esmRedis } from '../../lib/redis/redis-backend.js';
import { Emit as esmEmit } from '../../lib/protocol/emission.js';

const require = createRequire(import.meta.url);

describe('dual package', () => {
  it('resolves import to dist/lib (what tests load) and require to dist/cjs', () => {
    assert.equal(fileURLToPath(import.meta.resolve('nestjs-model-context')), fileURLToPath(new URL('../../lib/index.js', import.meta.url)));
    assert.equal(require.resolve('nestjs-model-context'), fileURLToPath(new URL('../../cjs/index.js', import.meta.url)));
  });

  it('gives both builds the same DI tokens, metadata keys and emission marker', async () => {
    const cjsConstants = require('../../cjs/common/mcp.constants.js') as Record<string, unknown>;
    const keys = Object.keys(esmConstants).filter((k) => k.startsWith('MCP_'));
    assert.ok(keys.length >= 10, keys.join());
    for (const key of keys) assert.equal(cjsConstants[key], (esmConstants as Record<string, unknown>)[key], key);
    assert.equal((require('../../cjs/redis/redis-backend.js') as { MCP_REDIS: symbol }).MCP_REDIS, esmRedis);
    const { isEmission } = require('../../cjs/protocol/emission.js') as { isEmission(value: unknown): boolean };
    assert.equal(isEmission(esmEmit.progress(1)), true);
  });

  it('resolves the testing subpath in both builds, each on its own copy of the library', () => {
    assert.equal(fileURLToPath(import.meta.resolve('nestjs-model-context/testing')), fileURLToPath(new URL('../../lib/testing/index.js', import.meta.url)));
    assert.equal(require.resolve('nestjs-model-context/testing'), fileURLToPath(new URL('../../cjs/testing/index.js', import.meta.url)));
    const cjs = require('nestjs-model-context/testing') as Record<string, unknown>;
    assert.equal(typeof cjs.McpTestClient, 'function');
    assert.equal(typeof cjs.McpTestError, 'function');
    // The CommonJS kit reaches the CommonJS transport, not the ESM one.
    assert.ok(require.cache[fileURLToPath(new URL('../../cjs/transport/in-process.transport.js', import.meta.url))]);
  });

  it('keeps the testing kit out of the main entry', () => {
    for (const build of ['lib', 'cjs']) {
      const dir = fileURLToPath(new URL(`../../${build}/`, import.meta.url));
      // The catalog command (cli/, the package's bin) takes the lists through the testing client;
      // it is an entry of its own that nothing under the main entry imports.
      const files = (readdirSync(dir, { recursive: true }) as string[]).filter((f) => f.endsWith('.js') && !f.startsWith('testing') && !f.startsWith('cli'));
      assert.ok(files.includes('index.js'));
      for (const file of files) assert.doesNotMatch(readFileSync(join(dir, file), 'utf8'), /testing\/(index|mcp-test-client)\.js/, `dist/${build}/${file} loads the testing kit`);
    }
  });
});
