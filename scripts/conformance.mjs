// Runs one leg of the official MCP conformance suite against a running server, then prints every
// FAILURE and WARNING check with its details, and the suite's own `Total:` line.
// Usage: node scripts/conformance.mjs --url http://127.0.0.1:3000/mcp --leg 2025|2026|latest [--scenario name]
// Exits non-zero when the suite did, or when any FAILURE check was recorded.
import { parseArgs } from 'node:util';
import { formatIssues, LEGS, runConformance } from './conformance-lib.mjs';

const usage =
  'Usage: node scripts/conformance.mjs --url <mcp endpoint URL> --leg <2025|2026|latest> [--scenario <name>] [--timeout <ms>]';

let values;
try {
  ({ values } = parseArgs({
    options: {
      url: { type: 'string' },
      leg: { type: 'string' },
      scenario: { type: 'string' },
      timeout: { type: 'string' },
      quiet: { type: 'boolean', default: false },
      help: { type: 'boolean', short: 'h', default: false },
    },
    strict: true,
  }));
} catch (error) {
  console.error(`${error instanceof Error ? error.message : String(error)}\n${usage}`);
  process.exit(2);
}
if (values.help) {
  console.log(usage);
  process.exit(0);
}
if (!values.url || !values.leg || !Object.hasOwn(LEGS, values.leg)) {
  console.error(
    `Missing or invalid arguments: --url and --leg (one of ${Object.keys(LEGS).join(', ')}) are required.\n${usage}`,
  );
  process.exit(2);
}
const timeoutMs = values.timeout === undefined ? undefined : Number(values.timeout);
if (timeoutMs !== undefined && !(timeoutMs > 0)) {
  console.error(`--timeout must be a positive number of milliseconds, got "${values.timeout}".`);
  process.exit(2);
}

const result = await runConformance({
  url: values.url,
  leg: /** @type {'2025' | '2026' | 'latest'} */ (values.leg),
  scenario: values.scenario,
  timeoutMs,
  stream: !values.quiet,
});

console.log(`\n=== conformance leg ${values.leg} summary (${result.outDir}) ===`);
if (result.failures.length > 0) {
  console.log(`\n${result.failures.length} FAILURE check(s):\n${formatIssues(result.failures)}`);
}
if (result.warnings.length > 0) {
  console.log(`\n${result.warnings.length} WARNING check(s):\n${formatIssues(result.warnings)}`);
}
if (result.checked === 0) {
  console.log('\nNo checks.json was written: the suite did not run any scenario (see its output above).');
}
console.log(`\n${result.total || 'The suite printed no Total: line (see its output above).'}`);
console.log(`suite exit code: ${result.exitCode}`);

const failed = result.exitCode !== 0 || result.failures.length > 0 || result.checked === 0;
process.exit(failed ? 1 : 0);
