/**
 * The official MCP conformance suite's `io.modelcontextprotocol/tasks` scenarios (SEP-2663),
 * each run on its own with `--scenario` (extension scenarios belong to no suite), against the
 * fixture app (sample/conformance) on a real port. Each must record zero FAILURE and zero WARNING
 * checks, and the scenarios that test something must record SUCCESS checks (the suite marks
 * `tasks-status-notifications` SKIPPED: its harness is pending upstream).
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { AppModule } from '../../sample/conformance/app.module.js';
import { scenarioChecks, scenarioHarness } from '../utils/conformance.js';

/** The ten scenarios and the SUCCESS checks each must record (0.2.0-alpha.12). */
const SCENARIOS: Record<string, number> = {
  'tasks-lifecycle': 9,
  'tasks-capability-negotiation': 5,
  'tasks-wire-fields': 4,
  'tasks-request-state-removal': 3,
  'tasks-mrtr-input': 4,
  'tasks-request-headers': 5,
  'tasks-dispatch-and-envelope': 9,
  'tasks-status-notifications': 0,
  'tasks-required-task-error': 3,
  'tasks-mrtr-composition': 2,
};

describe('official MCP conformance suite: io.modelcontextprotocol/tasks scenarios against sample/conformance', () => {
  const harness = scenarioHarness(AppModule);

  it('the suite lists exactly these ten tasks scenarios', async () => {
    const { execFileSync } = await import('node:child_process');
    const root = new URL('../../../', import.meta.url);
    const lib = harness.lib();
    const bin = lib.conformanceBin('@modelcontextprotocol/conformance');
    const listed = execFileSync(
      process.execPath,
      ['--import', new URL('scripts/conformance-register.mjs', root).href, bin, 'list', '--server'],
      { encoding: 'utf8' },
    );
    const names = [...lib.stripAnsi(listed).matchAll(/^\s*-\s+(tasks-[a-z-]+)/gm)].map((m) => m[1]).sort();
    assert.deepEqual(names, Object.keys(SCENARIOS).sort());
  });

  for (const [scenario, successes] of Object.entries(SCENARIOS)) {
    it(`${scenario} records no FAILURE or WARNING`, async () => {
      const [lib, server, outDir] = [harness.lib(), harness.server(), harness.outDir(scenario)];
      const run = await lib.runConformance({ url: server.url, leg: 'extension', scenario, outDir, stream: false });
      console.log(`conformance ${scenario}: ${run.total || '(no summary line)'}`);
      if (run.failures.length > 0) console.log(lib.formatIssues(run.failures));
      if (run.warnings.length > 0) console.log(lib.formatIssues(run.warnings));
      assert.ok(run.checked > 0, `the suite wrote no checks; its output:\n${lib.stripAnsi(run.output).slice(-2000)}`);
      assert.deepEqual(
        run.failures.map((f) => `${f.id}: ${f.message ?? f.description}`),
        [],
        'FAILURE checks (details printed above)',
      );
      assert.deepEqual(
        run.warnings.map((w) => `${w.id}: ${w.message ?? w.description}`),
        [],
        'WARNING checks (details printed above)',
      );
      const passed = scenarioChecks(outDir, scenario).filter((check) => check.status === 'SUCCESS').length;
      assert.ok(passed >= successes, `${scenario}: ${passed} SUCCESS checks, expected at least ${successes}`);
      assert.equal(run.exitCode, 0);
    });
  }
});
