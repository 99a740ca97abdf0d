// `npm run lint`: the formatter, the linter, the import rules and the file-size bound, each run
// even when one before it fails, so one run reports everything; exits non-zero if any failed.
// The tools live in tools/lint (a package of their own: typescript-eslint and dependency-cruiser
// need TypeScript's JavaScript API, which TypeScript 7, the repository's compiler, does not ship);
// they are installed there on first use and again whenever its lockfile changes.
import { spawnSync } from 'node:child_process';
import { existsSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const tools = join(root, 'tools/lint');
const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
const bin = (name) => join(tools, 'node_modules', '.bin', process.platform === 'win32' ? `${name}.cmd` : name);

const installed = join(tools, 'node_modules/.package-lock.json');
if (!existsSync(installed) || statSync(installed).mtimeMs < statSync(join(tools, 'package-lock.json')).mtimeMs) {
  const install = spawnSync(npm, ['ci', '--no-audit', '--no-fund', '--prefer-offline'], {
    cwd: tools,
    stdio: 'inherit',
  });
  if (install.status !== 0) {
    console.error('lint: installing the lint tools (npm ci in tools/lint) failed; see above.');
    process.exit(install.status ?? 1);
  }
}

const steps = [
  ['prettier', bin('prettier'), ['--check', '--log-level', 'warn', '**/*.{ts,mts,cts,js,mjs,cjs}']],
  ['eslint', bin('eslint'), ['--config', 'tools/lint/eslint.config.mjs', '.']],
  ['depcruise', bin('depcruise'), ['--config', 'tools/lint/dependency-cruiser.cjs', 'lib']],
  ['file size', process.execPath, ['scripts/check-file-size.mjs']],
];
const only = process.argv.slice(2);
const failed = [];
for (const [name, command, args] of steps) {
  if (only.length > 0 && !only.includes(name.replace(' ', '-'))) continue;
  console.error(`\n── lint: ${name}`);
  const result = spawnSync(command, args, { cwd: root, stdio: 'inherit' });
  if (result.status !== 0) failed.push(name);
}
if (failed.length > 0) {
  console.error(`\nlint: failed: ${failed.join(', ')}.`);
  process.exit(1);
}
console.error('\nlint: all checks passed.');
