/**
 * `npm run sample:apps` (sample/09-apps-skills, started as its own process on a free port) as
 * MCP Inspector 2.12's CLI judges it:
 * - `--advertise-apps --app-info --method tools/list` reports the dashboard tool's view (resource
 *   URI, CSP, permissions, MIME type) and the app-only tool's visibility;
 * - without `--advertise-apps` the app-only tool is not listed;
 * - `--method skills/list --verify --require-digests` exits 0 on both eras, every file verified.
 */
import assert from 'node:assert/strict';
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { after, before, describe, it } from 'node:test';
import { endProcess, guard } from '../utils/wait.js';
import { GUARDED_NODE_ARGS } from '../utils/child-guard.js';

const require = createRequire(import.meta.url);
const inspectorRoot = dirname(require.resolve('@modelcontextprotocol/inspector/package.json'));
const inspectorBin = join(
  inspectorRoot,
  (require('@modelcontextprotocol/inspector/package.json') as { bin: Record<string, string> }).bin['mcp-inspector'],
);
const SAMPLE_MAIN = fileURLToPath(new URL('../../sample/09-apps-skills/main.js', import.meta.url));

function inspect(url: string, args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [inspectorBin, '--cli', url, ...args],
      { timeout: 90_000, env: { ...process.env, NO_COLOR: '1' } },
      (error, stdout, stderr) =>
        resolve({ code: error ? ((error as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    );
  });
}

const ndjson = (stdout: string) =>
  stdout
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as Record<string, unknown>);

describe('sample:apps (sample/09-apps-skills) under MCP Inspector 2.12 CLI', () => {
  let child: ChildProcess;
  let url: string;
  let stderr = '';

  before(async () => {
    child = spawn(process.execPath, ['--enable-source-maps', ...GUARDED_NODE_ARGS, SAMPLE_MAIN], {
      env: { ...process.env, PORT: '0', HOST: '127.0.0.1' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    child.stderr!.on('data', (chunk) => (stderr += String(chunk)));
    const lines = createInterface({ input: child.stdout! });
    url = await guard(
      new Promise<string>((resolve, reject) => {
        child.once('exit', (code) => reject(new Error(`the sample exited with ${code}:\n${stderr}`)));
        lines.on('line', (line) => {
          const match = /^MCP endpoint: (http:\/\/\S+)$/.exec(line);
          if (match) resolve(match[1]!);
        });
      }),
      'the sample printing its endpoint',
      90_000,
    );
  });
  after(() => endProcess(child, 'SIGTERM', 10_000));

  it('--advertise-apps --app-info --method tools/list reports the dashboard view: URI, CSP, permissions', async () => {
    const run = await inspect(url, ['--advertise-apps', '--app-info', '--method', 'tools/list']);
    assert.equal(run.code, 0, `exit ${run.code}\n${run.stderr}`);
    const byTool = new Map(ndjson(run.stdout).map((line) => [line.toolName, line]));
    assert.deepEqual(byTool.get('order_dashboard'), {
      hasApp: true,
      toolName: 'order_dashboard',
      resourceUri: 'ui://orders/dashboard',
      csp: { connectDomains: [], resourceDomains: [] },
      permissions: { clipboardWrite: {} },
      prefersBorder: true,
      resourceMimeType: 'text/html;profile=mcp-app',
    });
    assert.deepEqual(
      byTool.get('ship_order')?.visibility,
      ['app'],
      'a client that advertises MCP Apps sees the app-only tool, marked so',
    );
  });

  it('without --advertise-apps the app-only tool is not listed', async () => {
    const run = await inspect(url, ['--method', 'tools/list', '--format', 'json']);
    assert.equal(run.code, 0, `exit ${run.code}\n${run.stderr}`);
    const envelope = JSON.parse(run.stdout.trim().split('\n').at(-1)!) as {
      result: { tools: Array<{ name: string }> };
    };
    assert.deepEqual(
      envelope.result.tools.map((t) => t.name),
      ['order_dashboard'],
    );
  });

  for (const era of ['legacy', 'modern'] as const) {
    it(`--method skills/list --verify --require-digests exits 0 (${era} era), every file verified`, async () => {
      const run = await inspect(url, [
        '--method',
        'skills/list',
        '--verify',
        '--require-digests',
        '--protocol-era',
        era,
      ]);
      assert.equal(run.code, 0, `exit ${run.code}\n${run.stdout}\n${run.stderr}`);
      const reports = ndjson(run.stdout) as Array<{
        uri: string;
        ok: boolean;
        outcome: string;
        files: Array<{ uri: string; status: string }>;
      }>;
      assert.deepEqual(
        reports.map((r) => [r.uri, r.ok, r.outcome]),
        [
          ['skill://order-dashboard/SKILL.md', true, 'verified'],
          ['skill://order-shipping/SKILL.md', true, 'verified'],
        ],
      );
      assert.deepEqual(
        reports.flatMap((r) => r.files.map((f) => `${f.uri} ${f.status}`)),
        [
          'skill://order-dashboard/SKILL.md verified',
          'skill://order-shipping/SKILL.md verified',
          'skill://order-shipping/references/POLICY.md verified',
        ],
      );
    });
  }
});
