// Types of scripts/conformance-lib.mjs, for the TypeScript tests that drive it.

export type ConformanceLeg = '2025' | '2026' | 'latest' | 'extension';

export interface ConformanceIssue {
  /** Scenario name (from the result folder). */
  scenario: string;
  /** Check id, e.g. `wire-schema-valid`. */
  id: string;
  status: 'FAILURE' | 'WARNING';
  description: string;
  /** The suite's `errorMessage`, when it gave one. */
  message: string | undefined;
  /** The suite's `details` object, verbatim. */
  details: unknown;
  /** The `checks.json` the entry came from. */
  file: string;
}

export interface ConformanceRun {
  exitCode: number;
  /** The suite's `Total: N passed, M failed` line (or `Passed: …` for a single scenario). */
  total: string;
  failures: ConformanceIssue[];
  warnings: ConformanceIssue[];
  /** How many checks the suite wrote. */
  checked: number;
  outDir: string;
  output: string;
}

export const LEGS: Readonly<Record<ConformanceLeg, { packageName: string; args: string[] }>>;

export function stripAnsi(text: string): string;

export function conformanceBin(packageName: string): string;

export function collectIssues(outDir: string): {
  failures: ConformanceIssue[];
  warnings: ConformanceIssue[];
  checked: number;
};

export function runConformance(options: {
  url: string;
  leg: ConformanceLeg;
  scenario?: string;
  outDir?: string;
  stream?: boolean;
  timeoutMs?: number;
  extraArgs?: string[];
}): Promise<ConformanceRun>;

export function formatIssues(issues: ConformanceIssue[], options?: { maxDetails?: number }): string;
