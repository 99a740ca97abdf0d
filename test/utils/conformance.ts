import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before } from 'node:test';
import { startApp, type RunningApp } from './app.js';

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

/**
 * For a spec file that runs single scenarios: starts `module` on a real port and loads the runner
 * before its tests, and removes every output folder it handed out after them.
 */
export function scenarioHarness(module: unknown): {
  server: () => RunningApp;
  lib: () => ConformanceLib;
  outDir: (scenario: string) => string;
} {
  let server: RunningApp | undefined;
  let lib: ConformanceLib | undefined;
  const outDirs: string[] = [];
  before(async () => {
    lib = await loadConformanceLib();
    server = await startApp(module as Parameters<typeof startApp>[0]);
  });
  after(async () => {
    await server?.close();
    for (const dir of outDirs) rmSync(dir, { recursive: true, force: true });
  });
  return {
    server: () => server!,
    lib: () => lib!,
    outDir: (scenario) => {
      const dir = mkdtempSync(join(tmpdir(), `mcp-conformance-${scenario}-`));
      outDirs.push(dir);
      return dir;
    },
  };
}
