/**
 * `nestjs-model-context catalog`: boots the app's module as an application context (no port),
 * prints its MCP catalog, and gates it on description coverage and lint. The logic lives in
 * lib/catalog; this file reads arguments, loads the module and sets the exit code.
 */
import { writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import type { McpPrincipal } from '../auth/mcp-auth.interface.js';
import { catalogCoverage, lintCatalog, type McpCatalog } from '../catalog/catalog.js';
import {
  CATALOG_ERAS,
  collectCatalog,
  type McpCollectOptions,
  type McpCollected,
  type McpHiddenEntries,
} from './collect.js';
import { renderCatalogMarkdown, renderGithubAnnotations } from '../catalog/report.js';
import { McpTestError } from '../testing/mcp-test-error.js';

const USAGE = `Usage: nestjs-model-context catalog --module <file>[#ExportName] [options]

Boots the module (an application context, no port), prints its MCP catalog and checks it.

Options:
  --module <file>[#Name]   Compiled module file (JavaScript); the export defaults to AppModule.
  --format <format>        json (default): {"tools","resources","resourceTemplates","prompts"}
                           markdown: a readable reference
                           github: lint findings as GitHub Actions annotations
  --report <file>          Also write {"coverage","findings"} as JSON to <file>.
  --min-coverage <N>       Exit 1 when description coverage is below N percent.
  --max-warnings <N>       Exit 1 when there are more than N lint warnings.
  --principal <id>         List as this caller (guard-aware lists).
  --scopes <a,b>           The caller's scopes (with --principal; default id "catalog").
  --claims <json>          The caller's claims, a JSON object (roles, tenant).
  --user <json>            The user object the app's own auth puts on request.user (what its
                           passport strategy returns), which its guards read; the principal is
                           derived from it as the endpoint does, unless --principal is given.
  --header <Name: value>   A request header the app's guards read (repeatable).
  --authenticate           Run the app's real auth: the endpoint's guards and McpModule's auth
                           check the --header values (e.g. "Authorization: Bearer <token>").
  --allow-hidden           Pass the gate even when the caller was not shown every tool,
                           resource, template and prompt (by default that fails: the coverage
                           and lint would judge a partial catalog).
  --quiet                  Do not print the coverage and lint summary on stderr.
  --help                   This text.
`;

class UsageError extends Error {}

export interface CliIo {
  out(text: string): void;
  err(text: string): void;
}

/** Runs the CLI; resolves to the exit code (0 ok, 1 gate failed, 2 usage or load error). */
export async function runCli(argv: string[], io: CliIo): Promise<number> {
  let values: Record<string, string | boolean | string[] | undefined>;
  let positionals: string[];
  try {
    ({ values, positionals } = parseArgs({
      args: argv,
      allowPositionals: true,
      options: {
        module: { type: 'string' },
        format: { type: 'string', default: 'json' },
        report: { type: 'string' },
        'min-coverage': { type: 'string' },
        'max-warnings': { type: 'string' },
        principal: { type: 'string' },
        scopes: { type: 'string' },
        claims: { type: 'string' },
        user: { type: 'string' },
        authenticate: { type: 'boolean', default: false },
        'allow-hidden': { type: 'boolean', default: false },
        header: { type: 'string', multiple: true },
        quiet: { type: 'boolean', default: false },
        help: { type: 'boolean', default: false },
      },
    }));
  } catch (error) {
    io.err(`${(error as Error).message}\n\n${USAGE}`);
    return 2;
  }
  if (values.help) {
    io.out(USAGE);
    return 0;
  }
  try {
    if (positionals[0] !== 'catalog' || positionals.length > 1)
      throw new UsageError(`Unknown command "${positionals.join(' ')}": the command is "catalog".`);
    const format = String(values.format);
    if (!['json', 'markdown', 'github'].includes(format))
      throw new UsageError(`--format "${format}" is not one of json, markdown, github.`);
    const minCoverage = numberOption(values['min-coverage'], '--min-coverage');
    const maxWarnings = numberOption(values['max-warnings'], '--max-warnings');
    if (typeof values.module !== 'string')
      throw new UsageError(
        '--module is required: the compiled file of the module to boot, e.g. --module dist/app.module.js.',
      );
    const caller = callerOf(values);
    const { byEra, hidden, toolSources } = await loadCatalog(values.module, caller);
    const catalog = byEra[CATALOG_ERAS[0]];
    const coverage = catalogCoverage(catalog);
    const findings = lintCatalog(catalog, { toolSources });
    const hiddenCount = Object.values(hidden).reduce((sum, names) => sum + names.length, 0);
    if (format === 'json') io.out(`${JSON.stringify(withEras(byEra), null, 2)}\n`);
    else if (format === 'markdown')
      io.out(`${renderCatalogMarkdown(catalog, { coverage, findings, hidden: hiddenCount })}\n`);
    else io.out(`${renderGithubAnnotations(coverage, findings, hiddenCount)}\n`);
    if (typeof values.report === 'string')
      writeFileSync(values.report, `${JSON.stringify({ coverage, findings, hidden }, null, 2)}\n`);
    if (!values.quiet) io.err(summary(coverage, findings, hidden, describeCaller(caller)));
    let code = 0;
    if (hiddenCount > 0 && !values['allow-hidden']) {
      io.err(
        `${hiddenCount} catalog item(s) were hidden from the caller the catalog listed as (${describeCaller(caller)}): its guards or scopes refused them, so the coverage and lint above judge a partial catalog. List as a caller that sees everything (--principal with --scopes/--claims, --user, or --authenticate with --header "Authorization: Bearer <token>"), or pass --allow-hidden to accept a partial catalog.\n`,
      );
      code = 1;
    }
    if (minCoverage !== undefined && coverage.percent < minCoverage) {
      io.err(`Description coverage ${coverage.percent}% is below --min-coverage ${minCoverage}.\n`);
      code = 1;
    }
    if (maxWarnings !== undefined && findings.length > maxWarnings) {
      io.err(`${findings.length} lint warning(s), more than --max-warnings ${maxWarnings}.\n`);
      code = 1;
    }
    return code;
  } catch (error) {
    if (error instanceof UsageError) io.err(`${error.message}\n\n${USAGE}`);
    else if (error instanceof McpTestError && (error.data as { status?: number } | undefined)?.status !== undefined) {
      io.err(
        `nestjs-model-context catalog: the app's authentication refused the catalog's caller (HTTP ${(error.data as { status: number }).status}): ${error.message}\n`,
      );
    } else io.err(`nestjs-model-context catalog: ${(error as Error).stack ?? String(error)}\n`);
    return 2;
  }
}

function numberOption(value: unknown, name: string): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (value === '' || !Number.isFinite(n) || n < 0)
    throw new UsageError(`${name} "${String(value)}" is not a non-negative number.`);
  return n;
}

function headersOf(values: unknown): Record<string, string> | undefined {
  if (!Array.isArray(values)) return undefined;
  const headers: Record<string, string> = {};
  for (const line of values as string[]) {
    const colon = line.indexOf(':');
    if (colon <= 0) throw new UsageError(`--header "${line}" is not "Name: value".`);
    headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
  }
  return headers;
}

function callerOf(values: Record<string, unknown>): McpCollectOptions {
  const headers = headersOf(values.header);
  const principal = principalOf(values);
  const user = jsonOption(values.user, '--user', '{"userId":"1","roles":["admin"]}');
  if (values.authenticate) {
    if (principal !== undefined || user !== undefined)
      throw new UsageError(
        "--authenticate runs the app's own auth, which decides the caller: give it --header values, not --principal, --scopes, --claims or --user.",
      );
    return { authenticate: true, headers };
  }
  return { principal, user, headers };
}

function describeCaller(caller: McpCollectOptions): string {
  if (caller.authenticate) return 'authenticated by the app from --header';
  if (caller.principal) return `principal "${caller.principal.id}"`;
  if (caller.user !== undefined) return '--user';
  return 'anonymous: no --principal, --user or --authenticate';
}

function jsonOption(value: unknown, name: string, example: string): Record<string, unknown> | undefined {
  if (typeof value !== 'string') return undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(value);
  } catch (error) {
    throw new UsageError(`${name} is not JSON: ${(error as Error).message}`);
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed))
    throw new UsageError(`${name} must be a JSON object, e.g. ${name} '${example}'.`);
  return parsed as Record<string, unknown>;
}

function principalOf(values: Record<string, unknown>): McpPrincipal | undefined {
  if (values.principal === undefined && values.scopes === undefined && values.claims === undefined) return undefined;
  const principal: McpPrincipal = { id: typeof values.principal === 'string' ? values.principal : 'catalog' };
  if (typeof values.scopes === 'string') principal.scopes = values.scopes.split(/[\s,]+/).filter(Boolean);
  const claims = jsonOption(values.claims, '--claims', '{"roles":["admin"]}');
  if (claims) principal.claims = claims;
  return principal;
}

/** The legacy era's lists; the 2026-07-28 ones under `eras` only where they differ. */
function withEras(byEra: Record<string, McpCatalog>): McpCatalog & { eras?: Record<string, Partial<McpCatalog>> } {
  const base = byEra[CATALOG_ERAS[0]];
  const eras: Record<string, Partial<McpCatalog>> = {};
  for (const era of CATALOG_ERAS.slice(1)) {
    const other = byEra[era];
    const differs: Partial<McpCatalog> = {};
    for (const key of ['tools', 'resources', 'resourceTemplates', 'prompts'] as const) {
      if (JSON.stringify(other[key]) !== JSON.stringify(base[key])) differs[key] = other[key];
    }
    if (Object.keys(differs).length > 0) eras[era] = differs;
  }
  return Object.keys(eras).length > 0 ? { ...base, eras } : base;
}

async function loadCatalog(spec: string, options: McpCollectOptions): Promise<McpCollected> {
  const hash = spec.lastIndexOf('#');
  const file = hash > 0 ? spec.slice(0, hash) : spec;
  const exportName = hash > 0 ? spec.slice(hash + 1) : 'AppModule';
  if (/\.[cm]?tsx?$/.test(file))
    throw new UsageError(
      `--module ${file} is TypeScript: build the app first and give the compiled .js file (e.g. dist/app.module.js).`,
    );
  let loaded: Record<string, unknown>;
  try {
    loaded = (await import(pathToFileURL(resolve(file)).href)) as Record<string, unknown>;
  } catch (error) {
    throw new UsageError(`Could not load --module ${file}: ${(error as Error).message}`);
  }
  const module = loaded[exportName] ?? (loaded.default as Record<string, unknown> | undefined)?.[exportName];
  if (typeof module !== 'function' && (typeof module !== 'object' || module === null)) {
    const names = Object.keys(loaded).filter((k) => k !== 'default');
    throw new UsageError(
      `${file} has no export "${exportName}" (it exports: ${names.join(', ') || 'nothing'}); name it with --module ${file}#ExportName.`,
    );
  }
  const { NestFactory } = await import('@nestjs/core');
  const app = await NestFactory.createApplicationContext(module as never, {
    logger: stderrLogger,
    abortOnError: false,
  });
  try {
    return await collectCatalog(app, options);
  } finally {
    await app.close();
  }
}

/** Nest's logs on stderr, warnings and errors only: stdout carries the catalog alone. */
const stderrLogger = {
  log: () => undefined,
  debug: () => undefined,
  verbose: () => undefined,
  warn: (message: unknown) => void process.stderr.write(`[nest] warn ${String(message)}\n`),
  error: (message: unknown, trace?: unknown) =>
    void process.stderr.write(`[nest] error ${String(message)}${trace ? `\n${String(trace)}` : ''}\n`),
};

function summary(
  coverage: ReturnType<typeof catalogCoverage>,
  findings: ReturnType<typeof lintCatalog>,
  hidden: McpHiddenEntries,
  caller: string,
): string {
  const part = (label: string, c: { described: number; total: number }): string => `${label} ${c.described}/${c.total}`;
  const lines = [
    `Description coverage: ${coverage.percent}% (${[
      part('tools', coverage.tools),
      part('parameters', coverage.parameters),
      part('resources', coverage.resources),
      part('templates', coverage.resourceTemplates),
      part('prompts', coverage.prompts),
    ].join(', ')})`,
    `Lint: ${findings.length} warning(s)`,
    ...findings.map((f) => `  warning [${f.rule}] ${f.message}`),
    `Hidden from the caller (${caller}): ${Object.values(hidden).reduce((sum, names) => sum + names.length, 0)} (${[
      ['tools', hidden.tools],
      ['resources', hidden.resources],
      ['templates', hidden.resourceTemplates],
      ['prompts', hidden.prompts],
    ]
      .map(
        ([label, names]) =>
          `${label as string} ${(names as string[]).length}${(names as string[]).length ? `: ${(names as string[]).join(', ')}` : ''}`,
      )
      .join('; ')})`,
  ];
  return `${lines.join('\n')}\n`;
}
