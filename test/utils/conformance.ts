import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

export type ConformanceLib = typeof import('../../scripts/conformance-lib.mjs');

/** One check of the conformance suite's `checks.json`. */
export type ConformanceCheck = {
  id: string;
  status: string;
  errorMessage?: string;
  details?: { statuses?: number[]; result?: { content?: Array<{ type: string; text?: string }>; isError?: boolean } };
};

/** The suite's runner: a plain .mjs in the repo's scripts/ folder, reached from dist/test/**. */
export function loadConformanceLib(): Promise<ConformanceLib> {
  return import(new URL('../../../scripts/conformance-lib.mjs', import.meta.url).href) as Promise<ConformanceLib>;
}

/** Every check of one scenario, read from the `checks.json` files the suite wrote. */
export function scenarioChecks(outDir: string, scenario: string): ConformanceCheck[] {
  const folder = readdirSync(outDir).find((name) => name.startsWith(`server-${scenario}-`));
  assert.ok(folder, `the suite wrote no results for scenario ${scenario} in ${outDir}`);
  return JSON.parse(readFileSync(join(outDir, folder, 'checks.json'), 'utf8')) as ConformanceCheck[];
}
