import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

export type ConformanceLib = typeof import('../../scripts/conformance-lib.mjs');
export type ConformanceCheck = {
  id: string;
  status: string;
  details?: { statuses?: number[]; result?: { content?: Array<{ type: string; text?: string }>; isError?: boolean } };
};

// Tests run from dist/test/…; the runner stays a plain .mjs in the repo's scripts/ folder.
const libUrl = new URL('../../../scripts/conformance-lib.mjs', import.meta.url);

/** The conformance runner (scripts/conformance-lib.mjs). */
export async function loadConformanceLib(): Promise<ConformanceLib> {
  return (await import(libUrl.href)) as ConformanceLib;
}

/** Every check of one scenario, read from the `checks.json` files the suite wrote. */
export function scenarioChecks(outDir: string, scenario: string): ConformanceCheck[] {
  const folder = readdirSync(outDir).find((name) => name.startsWith(`server-${scenario}-`));
  assert.ok(folder, `the suite wrote no results for scenario ${scenario} in ${outDir}`);
  return JSON.parse(readFileSync(join(outDir, folder, 'checks.json'), 'utf8')) as ConformanceCheck[];
}
