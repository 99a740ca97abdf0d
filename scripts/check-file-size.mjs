// `npm run lint`: no lib file over 450 lines, so no file grows back into a hub that every feature
// edits (issue 28). The URI template matcher (RFC 6570) stays whole: it is one algorithm. Unit
// specs are not counted (as in the measure): a spec's length follows its cases, not its jobs.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const MAX_LINES = 450;
const EXEMPT = new Set(['lib/protocol/uri-template.ts']);
const root = fileURLToPath(new URL('..', import.meta.url));

function walk(dir, out = []) {
  for (const entry of readdirSync(dir)) {
    const full = join(dir, entry);
    if (statSync(full).isDirectory()) walk(full, out);
    else if (/\.(ts|mts|js|mjs)$/.test(entry) && !/\.spec\.[cm]?[jt]s$/.test(entry)) out.push(full);
  }
  return out;
}

/** Lines as `wc -l` counts them, plus a last line that has no newline. */
function lineCount(text) {
  const newlines = text.split('\n').length - 1;
  return text.length === 0 || text.endsWith('\n') ? newlines : newlines + 1;
}

const over = walk(join(root, 'lib'))
  .map((file) => ({ file: relative(root, file).split('\\').join('/'), lines: lineCount(readFileSync(file, 'utf8')) }))
  .filter(({ file, lines }) => lines > MAX_LINES && !EXEMPT.has(file))
  .sort((a, b) => b.lines - a.lines);
for (const { file, lines } of over) console.error(`${file}: ${lines} lines (at most ${MAX_LINES}): split it by job`);
if (over.length > 0) {
  console.error(`check-file-size: ${over.length} lib file(s) over ${MAX_LINES} lines.`);
  process.exit(1);
}
console.error(`check-file-size: no lib file over ${MAX_LINES} lines.`);
