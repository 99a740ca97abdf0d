/**
 * The README's Quick start compiles as written: its files are extracted (each starts at a
 * `// <name>.ts` line) and type-checked with tsc against the package as an app imports it
 * (`nestjs-model-context` resolves through `exports` to the built typings).
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, describe, it } from 'node:test';

const root = fileURLToPath(new URL('../../..', import.meta.url));
const tsc = join(dirname(createRequire(import.meta.url).resolve('typescript/package.json')), 'bin/tsc');

/** The files of the first ```ts block under "## Quick start". */
export function quickStartFiles(readme: string): Map<string, string> {
  const section = readme.slice(readme.indexOf('## Quick start'));
  const block = /```ts\n([\s\S]*?)```/.exec(section)?.[1];
  assert.ok(block, 'README.md has no ```ts block under "## Quick start"');
  const files = new Map<string, string>();
  let current: string | undefined;
  for (const line of block.split('\n')) {
    const header = /^\/\/ ([\w.-]+\.ts)$/.exec(line);
    if (header) {
      current = header[1];
      files.set(current, '');
    } else if (current) files.set(current, files.get(current) + line + '\n');
  }
  return files;
}

describe('README', () => {
  // Inside the repository (no package.json of its own), so `nestjs-model-context` is the package itself.
  const dir = join(root, 'dist', '.readme-quickstart');
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('Quick start compiles as written', async () => {
    const files = quickStartFiles(readFileSync(join(root, 'README.md'), 'utf8'));
    assert.deepEqual([...files.keys()], ['tasks.tools.ts', 'app.module.ts', 'main.ts']);
    rmSync(dir, { recursive: true, force: true });
    mkdirSync(dir, { recursive: true });
    for (const [name, text] of files) writeFileSync(join(dir, name), text);
    writeFileSync(
      join(dir, 'tsconfig.json'),
      JSON.stringify({
        compilerOptions: {
          target: 'ES2022',
          module: 'NodeNext',
          moduleResolution: 'NodeNext',
          types: ['node'],
          strict: true,
          experimentalDecorators: true,
          emitDecoratorMetadata: true,
          skipLibCheck: true,
          noEmit: true,
        },
        include: ['*.ts'],
      }),
    );
    const result = await new Promise<{ code: number; output: string }>((resolve) =>
      execFile(process.execPath, [tsc, '-p', join(dir, 'tsconfig.json')], { cwd: dir }, (error, stdout, stderr) =>
        resolve({ code: error ? 1 : 0, output: `${stdout}${stderr}` }),
      ),
    );
    assert.equal(result.code, 0, `tsc on the README Quick start:\n${result.output}`);
  });
});
