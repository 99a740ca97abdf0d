/**
 * Schema portability as MCP Inspector 2.12 judges it: `mcp-inspector --cli <url> --method
 * tools/list --strict` on each sample reports no finding (no warning, no error). Type unions
 * such as `["string", "null"]` are what single-type dialects refuse.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Type } from '@nestjs/common';
import { AppModule as Basic } from '../../sample/01-basic/app.module.js';
import { AppModule as Streaming } from '../../sample/02-streaming/app.module.js';
import { AppModule as Interactive } from '../../sample/03-interactive/app.module.js';
import { AppModule as ResourcesPrompts } from '../../sample/04-resources-prompts/app.module.js';
import { startApp, type RunningApp } from '../utils/app.js';

const require = createRequire(import.meta.url);
const inspectorRoot = dirname(require.resolve('@modelcontextprotocol/inspector/package.json'));
const inspectorBin = join(
  inspectorRoot,
  (require('@modelcontextprotocol/inspector/package.json') as { bin: Record<string, string> }).bin['mcp-inspector'],
);

function inspect(url: string): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [inspectorBin, '--cli', url, '--method', 'tools/list', '--strict', '--format', 'json'],
      { timeout: 240_000, env: { ...process.env, NO_COLOR: '1' } },
      (error, stdout, stderr) =>
        resolve({ code: error ? ((error as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    );
  });
}

const SAMPLES: [string, Type<unknown>][] = [
  ['01-basic', Basic],
  ['02-streaming', Streaming],
  ['03-interactive', Interactive],
  ['04-resources-prompts', ResourcesPrompts],
];

describe('Inspector 2.12 --strict: 0 schema portability findings on samples 01 to 04', () => {
  for (const [name, module] of SAMPLES) {
    describe(name, () => {
      let server: RunningApp;
      before(async () => {
        server = await startApp(module);
      });
      after(() => server.close());

      it('lists its tools with no finding', async () => {
        const run = await inspect(server.url);
        assert.equal(run.code, 0, `exit ${run.code}\n${run.stderr}`);
        const envelope = JSON.parse(run.stdout.trim().split('\n').at(-1)!) as {
          result: { tools: unknown[] };
          schemaFindings?: unknown[];
        };
        assert.ok(envelope.result.tools.length > 0, run.stdout);
        assert.deepEqual(envelope.schemaFindings ?? [], [], run.stderr);
        assert.doesNotMatch(run.stderr, /portability/i);
      });
    });
  }
});
