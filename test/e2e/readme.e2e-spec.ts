/**
 * The README's Quick start compiles as written, in an ESM and in a CommonJS app: its files are
 * extracted (each starts at a `// <name>.ts` line) and type-checked with tsc against the package as
 * an app imports it (`nestjs-model-context` resolves through `exports` to the built typings). The
 * testing examples of docs/testing.md run against that app. (test/e2e/docs.e2e-spec.ts compiles
 * every other snippet.)
 */
import assert from 'node:assert/strict';
import { mkdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, describe, it } from 'node:test';
import { README_SPEC_SECTIONS } from '../utils/markdown.js';
import { appCompilerOptions as compilerOptions, run, tscRun } from '../utils/tsc.js';

const root = fileURLToPath(new URL('../../..', import.meta.url));
const [QUICK_START, TESTING] = README_SPEC_SECTIONS as [
  { page: string; heading: string },
  { page: string; heading: string },
];
const read = (page: string): string => readFileSync(join(root, page), 'utf8');

/** The files of the first ```ts block under "## Quick start". */
export function quickStartFiles(readme: string): Map<string, string> {
  return blockFiles(readme, QUICK_START.heading);
}

/**
 * The files of the ```ts blocks under `heading` (up to the next `## ` heading), each starting at a
 * `// <name>.ts` line; `blocks` is how many blocks to read (the first by default).
 */
export function blockFiles(readme: string, heading: string, blocks = 1): Map<string, string> {
  const start = readme.indexOf(`${heading}\n`);
  assert.ok(start >= 0, `no "${heading}" section`);
  const end = readme.indexOf('\n## ', start + heading.length);
  const section = readme.slice(start, end < 0 ? undefined : end);
  const found = [...section.matchAll(/```ts\n([\s\S]*?)```/g)].map((m) => m[1]);
  assert.ok(found.length >= blocks, `${found.length} \`\`\`ts block(s) under "${heading}", not ${blocks}`);
  const files = new Map<string, string>();
  for (const block of found.slice(0, blocks)) readFiles(block, files);
  return files;
}

function readFiles(block: string, files: Map<string, string>): void {
  let current: string | undefined;
  for (const line of block.split('\n')) {
    const header = /^\/\/ ([\w.-]+\.ts)$/.exec(line);
    if (header) {
      current = header[1];
      files.set(current, '');
    } else if (current) files.set(current, files.get(current) + line + '\n');
  }
}

/**
 * Type-checks `files` as an app of its own with `"type": type` (CommonJS: Nest 11's default, where
 * top-level await is TS1309), importing the package from node_modules as an installed app does.
 */
async function typeCheckApp(
  dir: string,
  type: 'module' | 'commonjs',
  files: ReadonlyMap<string, string>,
): Promise<{ code: number; output: string }> {
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(join(dir, 'node_modules'), { recursive: true });
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: `readme-${type}`, private: true, type }));
  symlinkSync(root, join(dir, 'node_modules', 'nestjs-model-context'), 'dir');
  for (const [name, text] of files) writeFileSync(join(dir, name), text);
  writeFileSync(
    join(dir, 'tsconfig.json'),
    JSON.stringify({ compilerOptions: { ...compilerOptions, noEmit: true }, include: ['*.ts'] }),
  );
  return tscRun(join(dir, 'tsconfig.json'), dir);
}

/** Just what the Jest example uses, so it type-checks without @types/jest. */
const JEST_GLOBALS = `
declare function describe(name: string, fn: () => void): void;
declare function it(name: string, fn: () => Promise<void> | void): void;
declare function beforeAll(fn: () => Promise<void> | void): void;
declare function afterAll(fn: () => Promise<void> | void): void;
interface Matchers { toBe(value: unknown): void; toEqual(value: unknown): void; toMatch(value: RegExp | string): void; toBeUndefined(): void }
declare function expect(value: unknown): Matchers;
`;

describe('README', () => {
  // Each app has its package.json and the package linked into its node_modules.
  const dir = join(root, 'dist', '.readme-quickstart');
  const testingDir = join(root, 'dist', '.readme-testing');
  after(() => {
    rmSync(dir, { recursive: true, force: true });
    rmSync(testingDir, { recursive: true, force: true });
  });

  for (const type of ['module', 'commonjs'] as const) {
    it(`Quick start compiles as written in ${type === 'module' ? 'an ESM' : 'a CommonJS'} app`, async () => {
      const files = quickStartFiles(read(QUICK_START.page));
      assert.deepEqual([...files.keys()], ['tasks.tools.ts', 'app.module.ts', 'main.ts']);
      const result = await typeCheckApp(join(dir, type), type, files);
      assert.equal(result.code, 0, `tsc on the README Quick start (${type}):\n${result.output}`);
    });
  }

  it('docs/testing.md: the node:test example compiles and passes against the Quick start app', async () => {
    const app = quickStartFiles(read(QUICK_START.page));
    const examples = blockFiles(read(TESTING.page), TESTING.heading, 2);
    assert.deepEqual([...examples.keys()], ['tasks.tools.spec.ts', 'tasks.tools.jest-spec.ts']);
    const esm = join(testingDir, 'node-test');
    rmSync(esm, { recursive: true, force: true });
    mkdirSync(esm, { recursive: true });
    for (const name of ['tasks.tools.ts', 'app.module.ts']) writeFileSync(join(esm, name), app.get(name)!);
    writeFileSync(join(esm, 'tasks.tools.spec.ts'), examples.get('tasks.tools.spec.ts')!);
    writeFileSync(
      join(esm, 'tsconfig.json'),
      JSON.stringify({ compilerOptions: { ...compilerOptions, outDir: 'out' }, include: ['*.ts'] }),
    );
    const compiled = await tscRun(join(esm, 'tsconfig.json'), esm);
    assert.equal(compiled.code, 0, `tsc on the README node:test example:\n${compiled.output}`);
    const tested = await run(process.execPath, ['--test', join(esm, 'out', 'tasks.tools.spec.js')], esm);
    assert.equal(tested.code, 0, `node --test on the README node:test example:\n${tested.output}`);
    assert.match(tested.output, /# pass 8\b/);
    assert.match(tested.output, /# fail 0\b/);
  });

  it('docs/testing.md: the Jest example type-checks as CommonJS against the require build', async () => {
    const app = quickStartFiles(read(QUICK_START.page));
    const example = blockFiles(read(TESTING.page), TESTING.heading, 2).get('tasks.tools.jest-spec.ts');
    assert.ok(example);
    const cjs = join(testingDir, 'jest');
    rmSync(cjs, { recursive: true, force: true });
    mkdirSync(join(cjs, 'node_modules'), { recursive: true });
    // A CommonJS app of its own: the package comes from node_modules, through its "require" condition.
    writeFileSync(join(cjs, 'package.json'), JSON.stringify({ name: 'readme-jest', private: true, type: 'commonjs' }));
    symlinkSync(root, join(cjs, 'node_modules', 'nestjs-model-context'), 'dir');
    for (const name of ['tasks.tools.ts', 'app.module.ts']) writeFileSync(join(cjs, name), app.get(name)!);
    writeFileSync(join(cjs, 'tasks.tools.jest-spec.ts'), example);
    writeFileSync(join(cjs, 'jest-globals.d.ts'), JEST_GLOBALS);
    writeFileSync(
      join(cjs, 'tsconfig.json'),
      JSON.stringify({ compilerOptions: { ...compilerOptions, noEmit: true, listFiles: true }, include: ['*.ts'] }),
    );
    const checked = await tscRun(join(cjs, 'tsconfig.json'), cjs);
    assert.equal(
      checked.code,
      0,
      `tsc on the README Jest example:\n${checked.output
        .split('\n')
        .filter((l) => /error TS/.test(l))
        .join('\n')}`,
    );
    const files = checked.output.split('\n').map((line) => line.trim());
    assert.ok(
      files.includes(join(root, 'dist/cjs/testing/index.d.ts')),
      'the Jest example is checked against the CommonJS typings',
    );
    assert.ok(
      !files.includes(join(root, 'dist/lib/testing/index.d.ts')),
      'the Jest example must not reach the ESM typings',
    );
    assert.equal(
      createRequire(join(cjs, 'package.json')).resolve('nestjs-model-context/testing'),
      join(root, 'dist/cjs/testing/index.js'),
    );
  });
});
