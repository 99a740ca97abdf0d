/**
 * The package has an ESM and a CommonJS build. `import` must reach the very file the repository's
 * tests load (one library per process), `require` the CommonJS build, and both copies must agree
 * on DI tokens and metadata keys, so an app that loads both still wires one module.
 */
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, it } from 'node:test';
import * as esmConstants from '../../lib/common/mcp.constants.js';
import { MCP_REDIS as esmRedis } from '../../lib/redis/redis-backend.js';
import { Emit as esmEmit } from '../../lib/protocol/emission.js';

const require = createRequire(import.meta.url);
const root = fileURLToPath(new URL('../../..', import.meta.url));

type Conditions = { import: { types: string; default: string }; require: { types: string; default: string } };
const manifest = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as {
  exports: Record<string, Conditions | string>;
  typesVersions: Record<string, Record<string, string[]>>;
};
const subpaths = Object.keys(manifest.exports).filter((key) => key !== '.' && key !== './package.json');

/** The names an entry's source exports, types included (what a consumer can import from it). */
function exportedNames(source: string): string[] {
  const text = readFileSync(join(root, source), 'utf8');
  assert.doesNotMatch(text, /export\s+\*/, `${source} re-exports a whole module: its names could not be counted`);
  return [...text.matchAll(/export\s+(?:type\s+)?\{([^}]*)\}/g)].flatMap((m) =>
    m[1]
      .split(',')
      .map((name) => name.trim().replace(/^type\s+/, ''))
      .filter(Boolean),
  );
}

describe('dual package', () => {
  it('resolves import to dist/lib (what tests load) and require to dist/cjs', () => {
    assert.equal(
      fileURLToPath(import.meta.resolve('nestjs-model-context')),
      fileURLToPath(new URL('../../lib/index.js', import.meta.url)),
    );
    assert.equal(
      require.resolve('nestjs-model-context'),
      fileURLToPath(new URL('../../cjs/index.js', import.meta.url)),
    );
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
    assert.equal(
      fileURLToPath(import.meta.resolve('nestjs-model-context/testing')),
      fileURLToPath(new URL('../../lib/testing/index.js', import.meta.url)),
    );
    assert.equal(
      require.resolve('nestjs-model-context/testing'),
      fileURLToPath(new URL('../../cjs/testing/index.js', import.meta.url)),
    );
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
      const files = (readdirSync(dir, { recursive: true }) as string[]).filter(
        (f) => f.endsWith('.js') && !f.startsWith('testing') && !f.startsWith('cli'),
      );
      assert.ok(files.includes('index.js'));
      for (const file of files)
        assert.doesNotMatch(
          readFileSync(join(dir, file), 'utf8'),
          /testing\/(index|mcp-test-client)\.js/,
          `dist/${build}/${file} loads the testing kit`,
        );
    }
  });

  it('keeps the root entry to what an app author writes against: under 80 names, types included', async () => {
    const names = exportedNames('lib/index.ts');
    assert.equal(new Set(names).size, names.length, 'a name is exported twice');
    assert.ok(
      names.length < 80,
      `the root entry exports ${names.length} names (80 or more): move what is not an app author's to a subpath`,
    );
    // Every runtime value of the built entry is among the counted names, so the count misses none.
    const values = Object.keys(await import('nestjs-model-context'));
    assert.deepEqual(
      values.filter((value) => !names.includes(value)),
      [],
    );
  });

  it('resolves every subpath in both builds, with typings for NodeNext and for moduleResolution node', async () => {
    assert.deepEqual(subpaths.sort(), [
      './catalog',
      './client',
      './options',
      './protocol',
      './redis',
      './sessions',
      './stores',
      './tasks',
      './telemetry',
      './testing',
      './transports',
    ]);
    const homes = new Map<string, string>(Object.keys(await import('nestjs-model-context')).map((name) => [name, '.']));
    for (const subpath of subpaths) {
      const specifier = `nestjs-model-context${subpath.slice(1)}`;
      const target = manifest.exports[subpath] as Conditions;
      assert.equal(fileURLToPath(import.meta.resolve(specifier)), join(root, target.import.default), specifier);
      assert.equal(require.resolve(specifier), join(root, target.require.default), specifier);
      for (const typings of [target.import.types, target.require.types])
        assert.ok(existsSync(join(root, typings)), `${typings} is missing`);
      // TypeScript's `moduleResolution: node` reads no `exports`: typesVersions carries the subpath.
      assert.deepEqual(
        manifest.typesVersions['*'][subpath.slice(2)],
        [target.require.types],
        `typesVersions of ${subpath}`,
      );

      const esm = Object.keys(await import(specifier)).sort();
      const cjs = Object.keys(require(specifier) as object)
        .filter((key) => key !== '__esModule')
        .sort();
      assert.ok(esm.length > 0, `${specifier} exports no value`);
      assert.deepEqual(cjs, esm, `${specifier}: require and import give the same names`);
      // One home per runtime value: an entry is chosen by intent, not by where a name was handy.
      for (const name of esm) {
        assert.equal(homes.get(name), undefined, `${name} is exported by both ${homes.get(name)} and ${subpath}`);
        homes.set(name, subpath);
      }
    }
  });
});
