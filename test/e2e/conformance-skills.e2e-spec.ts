/**
 * The SEP-2640 (Skills extension) scenarios of the official MCP conformance suite against the
 * fixture app (sample/conformance), one `--scenario` at a time, on the 2026-07-28 and 2025-11-25
 * wires (the legs' `--suite all --spec-version`, plus `--force`): zero FAILURE checks, and no check skipped because the extension (or its directoryRead
 * setting) was not declared.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { AppModule } from '../../sample/conformance/app.module.js';
import { scenarioChecks, scenarioHarness } from '../utils/conformance.js';

const SCENARIOS = ['sep-2640-skills-enumeration', 'sep-2640-skills-manifest', 'sep-2640-skills-directory'] as const;
const NOT_DECLARED = /did not declare|not declare directoryRead|declared the skills extension but not directoryRead/;

describe('official MCP conformance suite, SEP-2640 skills scenarios, against sample/conformance', () => {
  const harness = scenarioHarness(AppModule);

  for (const leg of ['2026', '2025'] as const) {
    for (const scenario of SCENARIOS) {
      it(`${scenario} on leg ${leg}: no FAILURE, nothing skipped as not declared`, async () => {
        const [lib, server, outDir] = [harness.lib(), harness.server(), harness.outDir(`skills-${leg}`)];
        // Extension scenarios sit outside the spec timeline: --force runs them on the leg's wire.
        const run = await lib.runConformance({
          url: server.url,
          leg,
          scenario,
          outDir,
          stream: false,
          extraArgs: ['--force'],
        });
        const checks = scenarioChecks(outDir, scenario);
        const tally = new Map<string, number>();
        for (const check of checks) tally.set(check.status, (tally.get(check.status) ?? 0) + 1);
        const counts = [...tally].map(([status, n]) => `${status} ${n}`).join(', ');
        console.log(`conformance ${leg} ${scenario}: ${run.total || '(no summary line)'} [${counts}]`);
        if (run.failures.length > 0) console.log(lib.formatIssues(run.failures));
        if (run.warnings.length > 0) console.log(lib.formatIssues(run.warnings));
        assert.ok(
          checks.length > 0,
          `the suite wrote no checks; its output:\n${lib.stripAnsi(run.output).slice(-2000)}`,
        );
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
        const undeclared = checks.filter((c) => c.status === 'SKIPPED' && NOT_DECLARED.test(c.errorMessage ?? ''));
        assert.deepEqual(
          undeclared.map((c) => c.id),
          [],
          'checks skipped because the extension was not declared',
        );
        assert.equal(run.exitCode, 0, 'the suite exit code');
      });
    }
  }
});
