/**
 * Consumer apps (test/consumers/*) install the package from its `npm pack` tarball, not from the
 * source tree, and run their own tests: a Nest 12 ESM enterprise-style app on Express and the same
 * app on Fastify (node:test, both MCP eras, the SDK over HTTP and the testing kit), a Nest 11
 * CommonJS app under Jest 29 + ts-jest in the default `nest new` setup, and an existing Nest 11
 * enterprise app (TypeORM on SQLite, a passport-jwt global guard, Swagger DTOs, prefix and
 * versioning, catch-all filter, throttler) with MCP added, whose Jest e2e runs on Express and Fastify,
 * and there also serves its customers tools to agents through the built-in verification (auth.jwt
 * on jose 5, the major Jest's CommonJS loader can load, against a JWKS its test serves).
 * npm's cache serves repeated runs (`--prefer-offline`); the only network used is the registry.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, describe, it } from 'node:test';

const root = fileURLToPath(new URL('../../..', import.meta.url));
const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';

function run(command: string, args: string[], cwd: string): Promise<{ code: number; output: string }> {
  return new Promise((resolve) => {
    execFile(
      command,
      args,
      {
        cwd,
        timeout: 300_000,
        maxBuffer: 32 * 1024 * 1024,
        env: { ...process.env, NO_COLOR: '1', FORCE_COLOR: '0', CI: 'true' },
      },
      (error, stdout, stderr) =>
        resolve({
          code: error ? (typeof error.code === 'number' ? error.code : 1) : 0,
          output: `${stdout}\n${stderr}`,
        }),
    );
  });
}

// Its own bound: three registry installs outlast the runner's per-test default (--test-timeout) on a loaded machine.
describe('consumer apps installed from the packed tarball', { timeout: 1_800_000 }, () => {
  let work: string;
  let tarball: string;
  let packedFiles: string[] = [];
  let manifestBefore = '';
  // Installing from the registry the first time (no npm cache yet) takes longer than one e2e test.
  before(
    async () => {
      work = mkdtempSync(join(tmpdir(), 'nmc-consumers-'));
      // The repository's own build (npm test ran it) is the library; prepack checks it is complete,
      // and leaves install-time scripts out of the packed package.json.
      manifestBefore = readFileSync(join(root, 'package.json'), 'utf8');
      const pack = await run(npm, ['pack', '--pack-destination', work, '--json'], root);
      assert.equal(pack.code, 0, pack.output);
      packedFiles = (
        JSON.parse(pack.output.slice(pack.output.indexOf('['), pack.output.lastIndexOf(']') + 1)) as {
          files: { path: string }[];
        }[]
      )[0].files.map((f) => f.path);
      const packed = readdirSync(work).find((f) => f.endsWith('.tgz'));
      assert.ok(packed, pack.output);
      tarball = join(work, 'nestjs-model-context.tgz');
      renameSync(join(work, packed), tarball);
    },
    { timeout: 600_000 },
  );
  after(() => rmSync(work, { recursive: true, force: true }));

  it('packs the built library (ESM and CommonJS), its typings, LICENSE and README, and nothing else', () => {
    const outside = packedFiles.filter((f) => !/^dist\/(lib|cjs)\//.test(f));
    assert.deepEqual(outside.sort(), ['LICENSE', 'README.md', 'package.json']);
    assert.deepEqual(
      packedFiles.filter((f) => /\.spec\.|(^|\/)(test|tests|sample)\//.test(f)),
      [],
    );
    for (const build of ['lib', 'cjs']) {
      for (const file of [
        'index.js',
        'index.d.ts',
        'mcp.module.js',
        'schema/json-schema.factory.js',
        'testing/index.js',
        'testing/index.d.ts',
      ]) {
        assert.ok(packedFiles.includes(`dist/${build}/${file}`), `dist/${build}/${file} is not packed`);
      }
    }
    assert.ok(packedFiles.includes('dist/cjs/package.json'));
    // The catalog command ships as the package's bin.
    assert.ok(packedFiles.includes('dist/lib/cli/main.js'), 'dist/lib/cli/main.js (the bin) is not packed');
    // Source maps carry their sources, since lib/*.ts is not shipped.
    const map = JSON.parse(readFileSync(join(root, 'dist/lib/mcp.module.js.map'), 'utf8')) as {
      sourcesContent?: unknown[];
    };
    assert.equal(typeof map.sourcesContent?.[0], 'string');
  });

  it("ships a package.json with no install-time script, and leaves the repository's own as it was", async () => {
    const listed = await run('tar', ['-xOzf', tarball, 'package/package.json'], work);
    assert.equal(listed.code, 0, listed.output);
    const packed = JSON.parse(listed.output) as { scripts?: Record<string, string> };
    for (const script of ['preinstall', 'install', 'postinstall', 'preprepare', 'prepare', 'postprepare']) {
      assert.equal(packed.scripts?.[script], undefined, `the packed package.json keeps a "${script}" script`);
    }
    assert.equal(readFileSync(join(root, 'package.json'), 'utf8'), manifestBefore);
    assert.ok(!existsSync(join(root, '.package.json.prepack')), 'the set-aside manifest is left behind');
  });

  for (const consumer of ['nest12-esm', 'nest12-fastify', 'nest11-cjs-jest', 'nest11-enterprise']) {
    it(`${consumer}: installs the tarball and passes its own tests`, { timeout: 600_000 }, async () => {
      const dir = join(work, consumer);
      cpSync(join(root, 'test/consumers', consumer), dir, {
        recursive: true,
        filter: (src) => !/node_modules|[\\/]dist$/.test(src),
      });
      const manifestPath = join(dir, 'package.json');
      const manifest = JSON.parse(readFileSync(manifestPath, 'utf8')) as { dependencies: Record<string, string> };
      manifest.dependencies['nestjs-model-context'] = `file:${tarball}`;
      writeFileSync(manifestPath, JSON.stringify(manifest, null, 2));
      const install = await run(
        npm,
        ['install', '--no-audit', '--no-fund', '--prefer-offline', '--no-package-lock'],
        dir,
      );
      assert.equal(install.code, 0, install.output);
      const installed = JSON.parse(
        readFileSync(join(dir, 'node_modules/nestjs-model-context/package.json'), 'utf8'),
      ) as { name: string };
      assert.equal(installed.name, 'nestjs-model-context');
      const test = await run(npm, ['test'], dir);
      assert.equal(test.code, 0, test.output);
      if (consumer === 'nest12-esm') {
        // The bin as the consumer's CI calls it, on the module its tests just compiled.
        const listed = await run(
          npm,
          [
            'exec',
            '--no',
            '--',
            'nestjs-model-context',
            'catalog',
            '--module',
            'dist/src/app.module.js',
            '--format',
            'json',
            '--quiet',
          ],
          dir,
        );
        assert.equal(listed.code, 0, listed.output);
        const catalog = JSON.parse(
          listed.output.slice(listed.output.indexOf('{'), listed.output.lastIndexOf('}') + 1),
        ) as { tools: { name: string }[] };
        assert.ok(catalog.tools.length > 0, listed.output);
      }
    });
  }
});
