// Builds the package. `node scripts/build.mjs` compiles everything (library, specs, samples, tests)
// into dist/ for the repository's own tests, plus the CommonJS build of the library; `--lib`
// compiles only what the package ships (git installs run it through `prepare`).
// dist/lib is the ESM build and the very file the samples' `import 'nestjs-model-context'` reaches
// through `exports`, so tests and samples never load the library twice.
import { spawnSync } from 'node:child_process';
import { chmodSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const tsc = join(dirname(createRequire(import.meta.url).resolve('typescript/package.json')), 'bin/tsc');
const libOnly = process.argv.includes('--lib');

rmSync(new URL('../dist', import.meta.url), { recursive: true, force: true });
for (const project of [libOnly ? 'tsconfig.lib.json' : 'tsconfig.json', 'tsconfig.cjs.json']) {
  const result = spawnSync(process.execPath, [tsc, '-p', project], { cwd: root, stdio: 'inherit' });
  if (result.status !== 0) {
    console.error(`build: tsc -p ${project} failed`);
    process.exit(result.status ?? 1);
  }
}
// The root package.json says "type": "module"; this one makes Node (and TypeScript) read
// dist/cjs/**/*.js and *.d.ts as CommonJS.
mkdirSync(new URL('../dist/cjs', import.meta.url), { recursive: true });
writeFileSync(new URL('../dist/cjs/package.json', import.meta.url), '{\n  "type": "commonjs"\n}\n');
// The package's bin runs straight from a clone after a build (`npx nestjs-model-context` in the
// repository); npm sets the mode itself only when it installs the package.
chmodSync(new URL('../dist/lib/cli/main.js', import.meta.url), 0o755);
