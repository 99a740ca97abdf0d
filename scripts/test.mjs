// Runs the compiled unit specs (dist/lib/**/*.spec.js) and end-to-end specs
// (dist/test/**/*.e2e-spec.js) with Node's built-in test runner.
// Usage: node scripts/test.mjs [unit|e2e] [name-filter]
import { spawnSync } from 'node:child_process';
import { readdirSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const [kind = 'all', filter] = process.argv.slice(2);

function walk(dir, out = []) {
  for (const entry of readdirSync(dir)) {
    const full = join(dir, entry);
    if (statSync(full).isDirectory()) walk(full, out);
    else out.push(full);
  }
  return out;
}

const files = [];
if (kind === 'all' || kind === 'unit') {
  files.push(...walk(join(root, 'dist/lib')).filter((f) => f.endsWith('.spec.js')));
}
if (kind === 'all' || kind === 'e2e') {
  files.push(...walk(join(root, 'dist/test')).filter((f) => f.endsWith('.e2e-spec.js')));
}
const selected = files
  .filter((f) => !filter || f.includes(filter))
  .map((f) => relative(root, f))
  .sort();
if (selected.length === 0) {
  console.error(`No test files matched (kind=${kind}, filter=${filter ?? 'none'}). Did the build run?`);
  process.exit(1);
}
// Node's runner bounds each FILE by --test-timeout too, whatever its suites declare: a guard
// against a hang, not a speed check, so it leaves room for a machine whose every core is busy.
// The files that install packages from the registry or start a process per stdio test (each wait
// inside bounded by its own guard) run in a second pass with a wider bound.
const SLOW = /(consumers|interop|agent-clients)\.e2e-spec\.js$/;
const passes = [
  { files: selected.filter((f) => !SLOW.test(f)), timeout: 300_000 },
  { files: selected.filter((f) => SLOW.test(f)), timeout: 1_800_000 },
].filter((pass) => pass.files.length > 0);
let status = 0;
for (const pass of passes) {
  const result = spawnSync(
    process.execPath,
    // test-setup.mjs fails the run on an unhandled rejection or uncaught exception anywhere.
    [
      '--enable-source-maps',
      '--import',
      join(root, 'scripts/test-setup.mjs'),
      '--test',
      '--test-concurrency=1',
      `--test-timeout=${pass.timeout}`,
      ...pass.files,
    ],
    { cwd: root, stdio: 'inherit' },
  );
  if (result.status !== 0) status = result.status ?? 1;
}
process.exit(status);
