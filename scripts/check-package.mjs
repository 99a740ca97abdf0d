// `prepack`: refuses to pack (or publish) a package whose build is missing, incomplete or older
// than its sources, so a tarball never ships without the library it advertises. `prepare` runs
// it with --quiet to skip the library build when the full build (tests included) is already fresh.
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const problems = [];

function walk(dir, out = []) {
  for (const entry of readdirSync(dir)) {
    const full = join(dir, entry);
    if (statSync(full).isDirectory()) walk(full, out);
    else out.push(full);
  }
  return out;
}

const sources = walk(join(root, 'lib')).filter(
  (f) => f.endsWith('.ts') && !f.endsWith('.d.ts') && !f.endsWith('.spec.ts'),
);
for (const source of sources) {
  const stem = relative(join(root, 'lib'), source).replace(/\.ts$/, '');
  for (const out of [`dist/lib/${stem}.js`, `dist/lib/${stem}.d.ts`, `dist/cjs/${stem}.js`, `dist/cjs/${stem}.d.ts`]) {
    const file = join(root, out);
    if (!existsSync(file)) problems.push(`${out} is missing`);
    else if (statSync(file).mtimeMs < statSync(source).mtimeMs) problems.push(`${out} is older than lib/${stem}.ts`);
  }
}
if (!existsSync(join(root, 'dist/cjs/package.json'))) problems.push('dist/cjs/package.json is missing');
if (!existsSync(join(root, 'LICENSE'))) problems.push('LICENSE is missing');

if (problems.length > 0) {
  // `prepare` asks quietly whether a build is needed at all.
  if (process.argv.includes('--quiet')) process.exit(1);
  console.error(`prepack: the build is not complete (${problems.length} problem(s)):`);
  for (const problem of problems.slice(0, 20)) console.error(`  - ${problem}`);
  console.error('Run "npm run build:lib" (or "npm run build") and pack again.');
  process.exit(1);
}
if (!process.argv.includes('--quiet'))
  console.error(`prepack: build complete (${sources.length} modules, ESM and CommonJS).`);
