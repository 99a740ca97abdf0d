// Module-resolution hooks registered by conformance-register.mjs (see there for why).
// Only imports of `fs` / `node:fs` made from inside an installed conformance package are redirected;
// every other module, including the shim's own `node:fs` import, resolves normally.

// The package folder name, or the `conformance-latest` npm alias folder of the 0.1.x line.
const CONFORMANCE_PARENT = /\/(?:@modelcontextprotocol\/conformance|conformance-latest)\//;

// The shim is served as a `data:` module so that no extra file has to exist next to the hooks.
// The bundles only call `globSync('**/checks.json', { cwd })` (tier-check), so this supports exactly
// `**/<name>` patterns (`*` allowed inside <name>) and fails loudly on anything else rather than
// silently matching nothing.
const SHIM_SOURCE = `
import fsDefault from 'node:fs';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
export * from 'node:fs';
export default fsDefault;

export function globSync(pattern, options = {}) {
  const patterns = Array.isArray(pattern) ? pattern : [pattern];
  const matchers = patterns.map((p) => {
    const m = /^\\*\\*\\/([^/]+)$/.exec(String(p));
    if (!m) {
      throw new Error(
        'conformance fs shim: globSync pattern "' + p + '" is not supported on Node ' + process.versions.node +
          '; only "**/<name>" is. Run the conformance suite on Node 22+ or extend scripts/conformance-hooks.mjs.',
      );
    }
    const body = m[1].split('*').map((s) => s.replace(/[.+?^$()[\\]{}|\\\\]/g, '\\\\$&')).join('[^/]*');
    return new RegExp('^' + body + '$');
  });
  const cwd = options.cwd instanceof URL ? fileURLToPath(options.cwd) : String(options.cwd ?? process.cwd());
  const found = [];
  const walk = (rel) => {
    let entries;
    try {
      entries = readdirSync(rel ? join(cwd, rel) : cwd, { withFileTypes: true });
    } catch {
      return;
    }
    for (const entry of entries) {
      const child = rel ? join(rel, entry.name) : entry.name;
      if (matchers.some((re) => re.test(entry.name))) found.push(child);
      if (entry.isDirectory()) walk(child);
    }
  };
  walk('');
  return found;
}
`;

const SHIM_URL = `data:text/javascript;charset=utf-8,${encodeURIComponent(SHIM_SOURCE)}`;

/** @type {import('node:module').ResolveHook} */
export async function resolve(specifier, context, nextResolve) {
  if (
    (specifier === 'fs' || specifier === 'node:fs') &&
    context.parentURL !== undefined &&
    CONFORMANCE_PARENT.test(context.parentURL)
  ) {
    return { url: SHIM_URL, format: 'module', shortCircuit: true };
  }
  return nextResolve(specifier, context);
}
