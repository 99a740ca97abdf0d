// Runs the official MCP conformance suite (server mode) against a running server and summarises
// the FAILURE / WARNING checks it wrote to disk. Used by scripts/conformance.mjs and by tests.
import { spawn } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const registerUrl = pathToFileURL(join(root, 'scripts', 'conformance-register.mjs')).href;
const require = createRequire(join(root, 'package.json'));

/**
 * The suite runs that gate this project. The 0.2.0 alpha is pinned because only it has the
 * 2026-07-28 leg; `--suite all` is required there, because the default `active` suite silently
 * drops every 2026-only scenario. `latest` is the 0.1.x line's default run, kept as a cross-check.
 */
export const LEGS = Object.freeze({
  2025: {
    packageName: '@modelcontextprotocol/conformance',
    args: ['--suite', 'all', '--spec-version', '2025-11-25'],
  },
  2026: {
    packageName: '@modelcontextprotocol/conformance',
    args: ['--suite', 'all', '--spec-version', '2026-07-28'],
  },
  latest: {
    packageName: 'conformance-latest',
    args: [],
  },
  // Extension scenarios (io.modelcontextprotocol/tasks, ...) belong to no suite and run one at a
  // time with --scenario; an explicit --spec-version would skip them.
  extension: {
    packageName: '@modelcontextprotocol/conformance',
    args: [],
  },
});

// The suite colours its output; summaries and the returned `total` must be plain text.
const ANSI = /\u001b\[[0-9;]*m/g;

/** Removes ANSI colour codes from suite output. */
export function stripAnsi(text) {
  return text.replace(ANSI, '');
}

/**
 * Absolute path of the `conformance` bin of an installed conformance package, read from its
 * package.json so that a moved bin entry in a future release does not break the runner.
 * @param {string} packageName `@modelcontextprotocol/conformance` or the `conformance-latest` alias.
 * @returns {string}
 */
export function conformanceBin(packageName) {
  let manifestPath;
  try {
    manifestPath = require.resolve(`${packageName}/package.json`);
  } catch {
    throw new Error(
      `Cannot find the conformance package "${packageName}" from ${root}. Run \`npm install\` in the repo root; ` +
        'it is a pinned devDependency.',
    );
  }
  const manifest = JSON.parse(readFileSync(manifestPath, 'utf8'));
  const bin = typeof manifest.bin === 'string' ? manifest.bin : manifest.bin?.conformance;
  if (typeof bin !== 'string') {
    throw new Error(
      `The package.json of "${packageName}" (${manifestPath}) has no "conformance" bin entry; ` +
        'the runner needs a release of @modelcontextprotocol/conformance that ships its CLI.',
    );
  }
  return resolve(dirname(manifestPath), bin);
}

/**
 * Every `checks.json` below `dir`, depth-first, as absolute paths in a stable order.
 * @param {string} dir
 * @returns {string[]}
 */
function findChecksFiles(dir) {
  if (!existsSync(dir)) return [];
  const out = [];
  const entries = readdirSync(dir, { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name));
  for (const entry of entries) {
    const full = join(dir, entry.name);
    if (entry.isDirectory()) out.push(...findChecksFiles(full));
    else if (entry.name === 'checks.json') out.push(full);
  }
  return out;
}

// The suite names each result folder `server-<scenario>-<ISO timestamp with dashes>`.
function scenarioFromFolder(folder) {
  return folder.replace(/^server-/, '').replace(/-\d{4}-\d{2}-\d{2}T[\d-]+Z$/, '');
}

/**
 * @typedef {object} ConformanceIssue
 * @property {string} scenario Scenario name (from the result folder).
 * @property {string} id Check id, e.g. `wire-schema-valid`.
 * @property {'FAILURE' | 'WARNING'} status
 * @property {string} description What the check verifies.
 * @property {string | undefined} message The suite's `errorMessage`, when it gave one.
 * @property {unknown} details The suite's `details` object, verbatim.
 * @property {string} file The `checks.json` the entry came from.
 */

/**
 * Reads every `checks.json` below `outDir` and returns its FAILURE and WARNING checks.
 * @param {string} outDir
 * @returns {{ failures: ConformanceIssue[], warnings: ConformanceIssue[], checked: number }}
 */
export function collectIssues(outDir) {
  const failures = [];
  const warnings = [];
  let checked = 0;
  for (const file of findChecksFiles(outDir)) {
    let checks;
    try {
      checks = JSON.parse(readFileSync(file, 'utf8'));
    } catch (error) {
      // A half-written file means the suite crashed mid-scenario; report it instead of hiding it.
      failures.push({
        scenario: scenarioFromFolder(relative(outDir, dirname(file))),
        id: 'checks-json-unreadable',
        status: 'FAILURE',
        description: 'The runner could not parse a checks.json written by the suite',
        message: `${file}: ${error instanceof Error ? error.message : String(error)}`,
        details: undefined,
        file,
      });
      continue;
    }
    if (!Array.isArray(checks)) continue;
    const scenario = scenarioFromFolder(relative(outDir, dirname(file)));
    for (const check of checks) {
      checked += 1;
      if (check?.status !== 'FAILURE' && check?.status !== 'WARNING') continue;
      const issue = {
        scenario,
        id: String(check.id),
        status: check.status,
        description: String(check.description ?? ''),
        message: typeof check.errorMessage === 'string' ? check.errorMessage : undefined,
        details: check.details,
        file,
      };
      (check.status === 'FAILURE' ? failures : warnings).push(issue);
    }
  }
  return { failures, warnings, checked };
}

/**
 * Runs one leg of the conformance suite against `url` and collects its results.
 *
 * The previous results of the same leg are deleted first so that a summary never mixes runs.
 * Output is streamed to this process's stdout/stderr unless `stream` is false.
 *
 * @param {object} options
 * @param {string} options.url MCP endpoint; must use localhost, 127.0.0.1 or [::1].
 * @param {'2025' | '2026' | 'latest' | 'extension'} options.leg
 * @param {string} [options.scenario] Run only this scenario.
 * @param {string} [options.outDir] Defaults to `<repo>/.conformance/<leg>`.
 * @param {boolean} [options.stream=true] Pipe the suite's output through.
 * @param {number} [options.timeoutMs] Passed as `--timeout` (per scenario).
 * @param {string[]} [options.extraArgs] Appended to the suite's command line.
 * @returns {Promise<{ exitCode: number, total: string, failures: ConformanceIssue[], warnings: ConformanceIssue[], checked: number, outDir: string, output: string }>}
 */
export async function runConformance({ url, leg, scenario, outDir, stream = true, timeoutMs, extraArgs = [] }) {
  const legSpec = LEGS[leg];
  if (!legSpec) {
    throw new Error(`Unknown conformance leg "${leg}"; use one of: ${Object.keys(LEGS).join(', ')}.`);
  }
  if (typeof url !== 'string' || !/^https?:\/\//.test(url)) {
    throw new Error(`The conformance --url must be an http(s) URL of the MCP endpoint, got ${JSON.stringify(url)}.`);
  }
  const bin = conformanceBin(legSpec.packageName);
  const out = resolve(outDir ?? join(root, '.conformance', leg));
  rmSync(out, { recursive: true, force: true });

  const args = ['--import', registerUrl, bin, 'server', '--url', url, ...legSpec.args, '-o', out];
  if (scenario) args.push('--scenario', scenario);
  if (timeoutMs !== undefined) args.push('--timeout', String(timeoutMs));
  args.push(...extraArgs);

  const child = spawn(process.execPath, args, { cwd: root, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout.on('data', (chunk) => {
    output += chunk;
    if (stream) process.stdout.write(chunk);
  });
  child.stderr.on('data', (chunk) => {
    output += chunk;
    if (stream) process.stderr.write(chunk);
  });
  const exitCode = await new Promise((resolveExit, reject) => {
    child.on('error', reject);
    // A signal-killed suite has no exit code; treat it as a failed run.
    child.on('close', (code) => resolveExit(code ?? 1));
  });

  const lines = stripAnsi(output)
    .split('\n')
    .map((line) => line.trim());
  // A full run ends with `Total: ...`; a single-scenario run only prints `Passed: x/y, ...`.
  const total =
    lines.findLast((line) => line.startsWith('Total:')) ?? lines.findLast((line) => line.startsWith('Passed:')) ?? '';
  const { failures, warnings, checked } = collectIssues(out);
  return { exitCode, total, failures, warnings, checked, outDir: out, output };
}

/**
 * Renders issues as a compact, plain-text block: one header line per issue, then its message and
 * its details on indented lines (details cut at `maxDetails` characters).
 * @param {ConformanceIssue[]} issues
 * @param {{ maxDetails?: number }} [options]
 * @returns {string}
 */
export function formatIssues(issues, { maxDetails = 600 } = {}) {
  const blocks = [];
  for (const issue of issues) {
    const lines = [`${issue.status} ${issue.scenario} › ${issue.id}: ${issue.description}`];
    if (issue.message) lines.push(...issue.message.split('\n').map((line) => `    ${line}`));
    if (issue.details !== undefined) {
      let details = JSON.stringify(issue.details);
      if (details.length > maxDetails) details = `${details.slice(0, maxDetails)}… (see ${issue.file})`;
      lines.push(`    details: ${details}`);
    }
    blocks.push(lines.join('\n'));
  }
  return blocks.join('\n');
}
