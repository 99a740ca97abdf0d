/**
 * Real agent clients: the MCP clients of the agent frameworks people build on, installed from the
 * registry at pinned versions (test/agent-clients, its lockfile, npm's cache with
 * `--prefer-offline`), each run by its own driver script through the framework's MCP API — no
 * model is called — against sample/01-basic, the conformance fixture and sample/09-apps-skills, on
 * Express and on Fastify. A wire tap in front of each server records the era each client
 * negotiates and the capabilities it declares; the drivers run under a guard that refuses any
 * connection off loopback (telemetry, tracing).
 *
 * MCP Apps: a client sees the app-only tool `ship_order` only if it declares
 * `io.modelcontextprotocol/ui` with `text/html;profile=mcp-app` in `mimeTypes`, as the extension
 * says; Mastra declares the extension with no `mimeTypes` on every connection and must not see it.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, describe, it } from 'node:test';
import { AppModule as BasicModule } from '../../sample/01-basic/app.module.js';
import { AppModule as FixtureModule } from '../../sample/conformance/app.module.js';
import { AppModule as AppsModule } from '../../sample/09-apps-skills/app.module.js';
import { startApp, type RunningApp, type TestPlatform } from '../utils/app.js';
import { toolListings, WireTap, type TappedRequest } from '../utils/wire-tap.js';

type Json = Record<string, any>;

const root = fileURLToPath(new URL('../../..', import.meta.url));
const source = join(root, 'test/agent-clients');
const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
const pinned = (
  JSON.parse(readFileSync(join(source, 'package.json'), 'utf8')) as { dependencies: Record<string, string> }
).dependencies;

const LEGACY = '2025-11-25';
const MODERN = '2026-07-28';
const UI = 'io.modelcontextprotocol/ui';
const APPS_DECLARED = { mimeTypes: ['text/html;profile=mcp-app'] };
const BLOCKED_MARKER = '[loopback-only] refused a connection to';

/** One client in one configuration, and what it must do. */
interface Case {
  label: string;
  driver: string;
  variant: string;
  package: string;
  /** The `MCP-Protocol-Version` its requests carry to the server. */
  wire: string;
  /** What the client's own API says it negotiated, where it exposes that. */
  negotiated?: string;
  /** What it declares under `io.modelcontextprotocol/ui` (undefined: nothing). */
  ui?: Json;
  prompts: boolean;
  /** Whether its API calls a tool by name (LangChain and Mastra call only the tools they listed). */
  callsByName: boolean;
  /** How a tool result with isError reaches the caller. */
  toolError: 'isError' | 'thrown';
  /** A gap of the client that the matrix pins, so a fix upstream shows up here. */
  headerParam?: 'not mirrored';
}

const CASES: Case[] = [
  {
    label: 'Vercel AI SDK',
    driver: 'ai-sdk',
    variant: 'default',
    package: '@ai-sdk/mcp',
    wire: MODERN,
    negotiated: MODERN,
    prompts: true,
    callsByName: true,
    toolError: 'isError',
  },
  {
    label: 'Vercel AI SDK, server/discover off',
    driver: 'ai-sdk',
    variant: 'initialize',
    package: '@ai-sdk/mcp',
    wire: LEGACY,
    negotiated: LEGACY,
    prompts: true,
    callsByName: true,
    toolError: 'isError',
  },
  {
    label: 'Vercel AI SDK with mcpAppClientCapabilities',
    driver: 'ai-sdk',
    variant: 'apps',
    package: '@ai-sdk/mcp',
    wire: MODERN,
    negotiated: MODERN,
    ui: APPS_DECLARED,
    prompts: true,
    callsByName: true,
    toolError: 'isError',
  },
  {
    label: 'LangChain',
    driver: 'langchain',
    variant: 'default',
    package: '@langchain/mcp-adapters',
    wire: LEGACY,
    negotiated: LEGACY,
    prompts: false,
    callsByName: false,
    toolError: 'thrown',
  },
  {
    label: 'OpenAI Agents JS',
    driver: 'openai-agents',
    variant: 'default',
    package: '@openai/agents-core',
    wire: MODERN,
    prompts: false,
    callsByName: true,
    toolError: 'isError',
  },
  {
    label: 'Mastra',
    driver: 'mastra',
    variant: 'default',
    package: '@mastra/mcp',
    wire: MODERN,
    ui: {},
    prompts: true,
    callsByName: false,
    toolError: 'thrown',
  },
  {
    label: "Mastra, protocolVersion 'legacy'",
    driver: 'mastra',
    variant: 'legacy',
    package: '@mastra/mcp',
    wire: LEGACY,
    ui: {},
    prompts: true,
    callsByName: false,
    toolError: 'thrown',
  },
  {
    label: 'mcp-use',
    driver: 'mcp-use',
    variant: 'default',
    package: 'mcp-use',
    wire: LEGACY,
    prompts: true,
    callsByName: true,
    toolError: 'isError',
  },
  {
    label: 'mcp-remote (SDK stdio host)',
    driver: 'mcp-remote',
    variant: 'legacy',
    package: 'mcp-remote',
    wire: LEGACY,
    negotiated: LEGACY,
    prompts: true,
    callsByName: true,
    toolError: 'isError',
  },
  // The bridge answers the host's handshake itself (2025-11-25) and speaks 2026-07-28 upstream.
  {
    label: 'mcp-remote --protocol auto',
    driver: 'mcp-remote',
    variant: 'auto',
    package: 'mcp-remote',
    wire: MODERN,
    negotiated: LEGACY,
    prompts: true,
    callsByName: true,
    toolError: 'isError',
    headerParam: 'not mirrored',
  },
  {
    label: 'mcp-remote --protocol auto, host declares MCP Apps',
    driver: 'mcp-remote',
    variant: 'apps',
    package: 'mcp-remote',
    wire: MODERN,
    negotiated: LEGACY,
    ui: APPS_DECLARED,
    prompts: true,
    callsByName: true,
    toolError: 'isError',
    headerParam: 'not mirrored',
  },
];

/** A client supports MCP Apps only with the view MIME type in `mimeTypes`. */
const seesAppOnly = (c: Case): boolean =>
  Array.isArray(c.ui?.mimeTypes) && c.ui.mimeTypes.includes('text/html;profile=mcp-app');

function run(
  command: string,
  args: string[],
  cwd: string,
  env: NodeJS.ProcessEnv,
  timeout: number,
): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(command, args, { cwd, env, timeout, maxBuffer: 32 * 1024 * 1024 }, (error, stdout, stderr) =>
      resolve({ code: error ? (typeof error.code === 'number' ? error.code : 1) : 0, stdout, stderr }),
    );
  });
}

interface Servers {
  basic: WireTap;
  conformance: WireTap;
  apps: WireTap;
  close(): Promise<void>;
}

async function startServers(platform: TestPlatform): Promise<Servers> {
  const apps: RunningApp[] = [];
  const taps: WireTap[] = [];
  const tapped = async (module: Parameters<typeof startApp>[0]) => {
    const app = await startApp(module, { platform });
    apps.push(app);
    const tap = await WireTap.start(app.url);
    taps.push(tap);
    return tap;
  };
  return {
    basic: await tapped(BasicModule),
    conformance: await tapped(FixtureModule),
    apps: await tapped(AppsModule),
    async close() {
      for (const tap of taps) await tap.close();
      for (const app of apps) await app.close();
    },
  };
}

/** What one driver run produced: its report and what each server's tap saw. */
interface Run {
  report: Json;
  output: string;
  wire: Record<'basic' | 'conformance' | 'apps', TappedRequest[]>;
}

const textOf = (outcome: Json | undefined): string => String(outcome?.text ?? '');

describe(
  'real agent clients × (sample/01-basic, conformance fixture, sample/09-apps-skills)',
  { timeout: 1_800_000 },
  () => {
    let work: string;
    let env: NodeJS.ProcessEnv;
    const servers = {} as Record<TestPlatform, Servers>;

    before(
      async () => {
        work = mkdtempSync(join(tmpdir(), 'nmc-agent-clients-'));
        cpSync(source, work, { recursive: true, filter: (src) => !/node_modules/.test(src) });
        // Install scripts stay off: some would fetch binaries or report installs over the network.
        const install = await run(
          npm,
          ['ci', '--no-audit', '--no-fund', '--prefer-offline', '--ignore-scripts'],
          work,
          { ...process.env, CI: 'true' },
          600_000,
        );
        assert.equal(install.code, 0, `${install.stdout}\n${install.stderr}`);
        const { NODE_TEST_CONTEXT: _, NODE_OPTIONS: __, ...inherited } = process.env;
        env = {
          ...inherited,
          NO_COLOR: '1',
          MCP_USE_ANONYMIZED_TELEMETRY: 'false',
          OPENAI_AGENTS_DISABLE_TRACING: '1',
          MCP_REMOTE_CONFIG_DIR: join(work, 'mcp-auth'),
        };
        servers.express = await startServers('express');
        servers.fastify = await startServers('fastify');
      },
      { timeout: 900_000 },
    );

    after(async () => {
      for (const platform of ['express', 'fastify'] as const) await servers[platform]?.close();
      if (work) rmSync(work, { recursive: true, force: true });
    });

    async function drive(c: Case, platform: TestPlatform): Promise<Run> {
      const s = servers[platform];
      for (const tap of [s.basic, s.conformance, s.apps]) tap.clear();
      const config = {
        variant: c.variant,
        urls: { basic: s.basic.url, conformance: s.conformance.url, apps: s.apps.url },
      };
      // A guard against a hung client, not a speed check.
      const result = await run(
        process.execPath,
        ['--import', './loopback-only.mjs', `${c.driver}.mjs`, JSON.stringify(config)],
        work,
        env,
        180_000,
      );
      const output = `exit ${result.code}\n--- stdout\n${result.stdout.slice(-6000)}\n--- stderr\n${result.stderr.slice(-6000)}`;
      const line = result.stdout.split('\n').find((l) => l.startsWith('AGENT-CLIENT-REPORT '));
      assert.ok(line, `the ${c.driver} driver printed no report\n${output}`);
      assert.ok(
        !result.stderr.includes(BLOCKED_MARKER) && !result.stdout.includes(BLOCKED_MARKER),
        `${c.label} tried to leave loopback\n${output}`,
      );
      return {
        report: JSON.parse(line.slice('AGENT-CLIENT-REPORT '.length)) as Json,
        output,
        wire: { basic: [...s.basic.requests], conformance: [...s.conformance.requests], apps: [...s.apps.requests] },
      };
    }

    for (const c of CASES) {
      for (const platform of ['express', 'fastify'] as const) {
        describe(`${c.label} over Streamable HTTP (${platform === 'express' ? 'Express' : 'Fastify'})`, () => {
          let r: Run;
          before(async () => {
            r = await drive(c, platform);
          });
          const scenario = (name: string): Json => {
            const result = r.report.scenarios[name] as Json | undefined;
            assert.ok(
              result && !result.failed,
              `${name}: ${result?.failed ?? 'not run'}\n${result?.stack ?? ''}\n${r.output}`,
            );
            return result;
          };

          it(`is the pinned ${c.package} and speaks ${c.wire} to the server`, () => {
            assert.equal(r.report.version, pinned[c.package], 'the installed version is the pinned one');
            for (const [name, requests] of Object.entries(r.wire)) {
              const listings = toolListings(requests);
              assert.ok(listings.length > 0, `${name}: the tap saw tools/list`);
              assert.deepEqual(
                [...new Set(listings.map((l) => l.protocolVersion ?? '(no header)'))],
                [c.wire],
                `${name}: MCP-Protocol-Version of tools/list`,
              );
              if (c.wire === MODERN)
                assert.deepEqual(
                  requests.filter((q) => q.sessionId !== undefined),
                  [],
                  `${name}: no session on ${MODERN}`,
                );
              else
                assert.deepEqual(
                  [...new Set(listings.map((l) => l.offeredVersion))],
                  [LEGACY],
                  `${name}: the version its initialize offered`,
                );
              if (c.negotiated !== undefined)
                assert.equal(
                  r.report.scenarios[name]?.negotiated,
                  c.negotiated,
                  `${name}: what the client says it negotiated`,
                );
            }
          });

          it(`declares ${c.ui === undefined ? 'no MCP Apps support' : `${UI} ${JSON.stringify(c.ui)}`} for the requests that list tools`, () => {
            for (const [name, requests] of Object.entries(r.wire)) {
              for (const listing of toolListings(requests))
                assert.deepEqual(
                  listing.declared?.extensions?.[UI],
                  c.ui,
                  `${name}: declared ${JSON.stringify(listing.declared)}`,
                );
            }
          });

          it('sample/01-basic: lists the five tools and creates and lists a task', () => {
            const basic = scenario('basic');
            assert.deepEqual(basic.tools, ['create_task', 'list_tasks', 'get_task', 'complete_task', 'delete_task']);
            assert.ok(!basic.created.thrown && !basic.created.isError, JSON.stringify(basic.created));
            assert.equal(basic.created.structured?.title, 'from an agent client', JSON.stringify(basic.created));
            const id = basic.created.structured.id as string;
            assert.ok(
              (basic.listed.structured?.tasks as Json[] | undefined)?.some((t) => t.id === id),
              JSON.stringify(basic.listed),
            );
          });

          it(`conformance fixture: tools, a tool error${c.prompts ? ', resources and prompts' : ' and resources (no prompts API)'}`, () => {
            const fx = scenario('conformance');
            for (const name of [
              'test_x_mcp_header',
              'test_simple_text',
              'test_error_handling',
              'json_schema_2020_12_tool',
            ])
              assert.ok(fx.tools.includes(name), `tools/list has ${name}`);
            assert.equal(fx.simple.isError, false, JSON.stringify(fx.simple));
            assert.match(textOf(fx.simple), /This is a simple text response for testing\./);
            if (c.toolError === 'isError') {
              assert.equal(fx.failing.isError, true, JSON.stringify(fx.failing));
              assert.match(textOf(fx.failing), /intentionally returns an error/);
            } else {
              assert.match(String(fx.failing.thrown), /intentionally returns an error/, JSON.stringify(fx.failing));
            }
            if (c.headerParam === 'not mirrored') {
              // The client puts `region` in the body without its Mcp-Param-Region header: the spec's 400 + -32020.
              assert.equal(fx.header.code, -32020, JSON.stringify(fx.header));
              assert.match(String(fx.header.thrown), /Mcp-Param-Region header is required/);
            } else {
              assert.match(textOf(fx.header), /region=eu-west, level=2/, JSON.stringify(fx.header));
            }
            assert.ok((fx.resources.value as string[]).includes('test://static-text'), JSON.stringify(fx.resources));
            assert.equal(
              fx.staticText.value?.[0]?.text,
              'This is the content of the static text resource.',
              JSON.stringify(fx.staticText),
            );
            assert.match(String(fx.templated.value?.[0]?.text), /4711/, JSON.stringify(fx.templated));
            if (c.prompts) {
              assert.ok(
                (fx.prompts.value as string[]).includes('test_prompt_with_arguments'),
                JSON.stringify(fx.prompts),
              );
              assert.match(String(fx.prompt.value), /alpha[\s\S]*beta/, JSON.stringify(fx.prompt));
            } else {
              assert.deepEqual(
                [fx.prompts, fx.prompt],
                [{ missing: true }, { missing: true }],
                'the client has no prompts API',
              );
            }
          });

          const sees = seesAppOnly(c);
          it(`sample/09-apps-skills: the model-visible tool${sees ? ' and the app-only tool (MCP Apps declared with its MIME type)' : ', never the app-only tool'}`, () => {
            const apps = scenario('apps');
            const names = (apps.tools as Json[]).map((t) => t.name);
            assert.deepEqual(
              names,
              sees ? ['order_dashboard', 'ship_order'] : ['order_dashboard'],
              `tools the client shows (declared ${JSON.stringify(c.ui)})`,
            );
            assert.ok(!apps.dashboard.thrown && !apps.dashboard.isError, JSON.stringify(apps.dashboard));
            assert.match(textOf(apps.dashboard), /A-1001/, 'the dashboard result reads as text');
            if (!c.callsByName) {
              assert.deepEqual(apps.appOnlyCall, { missing: true });
            } else if (sees) {
              assert.match(textOf(apps.appOnlyCall), /Order A-1002 is shipped/, JSON.stringify(apps.appOnlyCall));
            } else {
              // Called by name anyway, it answers as a tool the server does not have.
              assert.equal(apps.appOnlyCall.code, -32602, JSON.stringify(apps.appOnlyCall));
              assert.match(String(apps.appOnlyCall.thrown), /Unknown tool "ship_order"/);
            }
          });
        });
      }
    }
  },
);
