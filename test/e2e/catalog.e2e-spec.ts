/**
 * The `nestjs-model-context catalog` command, run as a user's CI runs it (a child process, the
 * package's bin): its JSON is what the live endpoint lists to the official clients, its Markdown
 * documents every tool, and its gate fails a module with undocumented and unportable tools.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, describe, it } from 'node:test';
import { startApp, type RunningApp } from '../utils/app.js';
import { connectModernClient, connectSdkClient } from '../utils/clients.js';
import { mintToken as enterpriseToken } from '../fixtures/enterprise-auth.module.js';

type Json = Record<string, any>;

const root = fileURLToPath(new URL('../../..', import.meta.url));
const bin = join(root, 'dist/lib/cli/main.js');
// The bin the package declares, run with node: `npx` in the repository would run the package's
// `prepare`, which can rebuild dist/ under the specs that are running.
const declaredBin = join(
  root,
  (JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { bin: Record<string, string> }).bin[
    'nestjs-model-context'
  ],
);

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

function run(command: string, args: string[], env: NodeJS.ProcessEnv = {}): Promise<Run> {
  return new Promise((resolve) => {
    execFile(
      command,
      args,
      { cwd: root, timeout: 240_000, maxBuffer: 16 * 1024 * 1024, env: { ...process.env, ...env } },
      (error, stdout, stderr) =>
        resolve({ code: error ? (typeof error.code === 'number' ? error.code : 1) : 0, stdout, stderr }),
    );
  });
}

function catalog(args: string[], env?: NodeJS.ProcessEnv): Promise<Run> {
  return run(process.execPath, [bin, 'catalog', ...args], env);
}

/** Every page of the four lists, through a client we did not write. */
async function listAll(client: { request: (...args: any[]) => Promise<any> } & Json): Promise<Json> {
  const pages = async (fetchPage: (cursor?: string) => Promise<Json>, key: string): Promise<Json[]> => {
    const items: Json[] = [];
    let cursor: string | undefined;
    do {
      const page = await fetchPage(cursor);
      items.push(...(page[key] as Json[]));
      cursor = page.nextCursor;
    } while (cursor !== undefined);
    return items;
  };
  const caps = (client.getServerCapabilities() ?? {}) as Json;
  return {
    tools: caps.tools ? await pages((cursor) => client.listTools(cursor ? { cursor } : undefined), 'tools') : [],
    resources: caps.resources
      ? await pages((cursor) => client.listResources(cursor ? { cursor } : undefined), 'resources')
      : [],
    resourceTemplates: caps.resources
      ? await pages((cursor) => client.listResourceTemplates(cursor ? { cursor } : undefined), 'resourceTemplates')
      : [],
    prompts: caps.prompts
      ? await pages((cursor) => client.listPrompts(cursor ? { cursor } : undefined), 'prompts')
      : [],
  };
}

function freePort(): Promise<number> {
  return import('node:net').then(
    ({ createServer }) =>
      new Promise<number>((resolve) => {
        const s = createServer().listen(0, '127.0.0.1', () => {
          const { port } = s.address() as AddressInfo;
          s.close(() => resolve(port));
        });
      }),
  );
}

/**
 * Every numbered sample: the gate holds for all of them. Sample 06 runs on memory without
 * REDIS_URL (and on the shared Redis with it): its tool list is the same either way.
 */
const SAMPLES = [
  '01-basic',
  '02-streaming',
  '03-interactive',
  '04-resources-prompts',
  '05-auth-guards',
  '06-scale-out',
  '07-existing-app',
  '08-tasks',
  '09-apps-skills',
];
/** Sample 05 lists per caller: an admin with both scopes sees every tool. */
const ADMIN = ['--principal', 'alice', '--scopes', 'invoices:read,invoices:write', '--claims', '{"roles":["admin"]}'];
/** Sample 07's command and query are guarded by the app's bearer guard: its token lists them. */
const SAMPLE_07_TOKEN = 'Bearer dev-token';
const callerArgs = (sample: string): string[] =>
  sample === '05-auth-guards'
    ? ADMIN
    : sample === '07-existing-app'
      ? ['--header', `Authorization: ${SAMPLE_07_TOKEN}`]
      : [];

describe('nestjs-model-context catalog', () => {
  let resource: string;
  let mintToken: (sub: string, roles: string[], scopes: string[]) => string;

  before(async () => {
    // Sample 05's token audience is its own URL: fix the port before its modules load.
    const port = await freePort();
    resource = `http://127.0.0.1:${port}/mcp`;
    process.env.MCP_RESOURCE = resource;
    ({ mintToken } = await import('../../sample/05-auth-guards/mint-token.js'));
  });
  after(() => {
    delete process.env.MCP_RESOURCE;
  });

  it("runs as the acceptance command (the package's declared bin): nestjs-model-context catalog --module dist/sample/01-basic/app.module.js --format json", async () => {
    const result = await run(process.execPath, [
      declaredBin,
      'catalog',
      '--module',
      'dist/sample/01-basic/app.module.js',
      '--format',
      'json',
    ]);
    assert.equal(result.code, 0, result.stderr);
    const printed = JSON.parse(result.stdout) as Json;
    assert.deepEqual(Object.keys(printed), ['tools', 'resources', 'resourceTemplates', 'prompts']);
    assert.deepEqual(
      printed.tools.map((t: Json) => t.name),
      ['create_task', 'list_tasks', 'get_task', 'complete_task', 'delete_task'],
    );
    assert.match(result.stderr, /Description coverage: 100% .*\nLint: 0 warning\(s\)/);
  });

  for (const sample of SAMPLES) {
    it(`${sample}: prints the JSON the live endpoint lists to the official clients (both eras), and passes the gate at 100% and 0 warnings`, async () => {
      const auth = sample === '05-auth-guards';
      const result = await catalog(
        [
          '--module',
          `dist/sample/${sample}/app.module.js`,
          '--format',
          'json',
          '--min-coverage',
          '100',
          '--max-warnings',
          '0',
          ...callerArgs(sample),
        ],
        { MCP_RESOURCE: resource },
      );
      assert.equal(result.code, 0, result.stderr);
      const printed = JSON.parse(result.stdout) as Json;
      assert.ok(printed.tools.length > 0, `${sample} lists tools`);
      assert.match(
        result.stderr,
        /Description coverage: 100% \(tools \d+\/\d+, parameters \d+\/\d+, resources \d+\/\d+, templates \d+\/\d+, prompts \d+\/\d+\)\nLint: 0 warning\(s\)\n/,
      );

      const { AppModule } = (await import(`../../sample/${sample}/app.module.js`)) as { AppModule: never };
      const server: RunningApp = await startApp(AppModule, auth ? { port: Number(new URL(resource).port) } : {});
      const headers = auth
        ? { Authorization: `Bearer ${mintToken('alice', ['admin'], ['invoices:read', 'invoices:write'])}` }
        : sample === '07-existing-app'
          ? { Authorization: SAMPLE_07_TOKEN }
          : undefined;
      const legacy = await connectSdkClient(server.url, { headers });
      const modern = await connectModernClient(server.url, { headers });
      try {
        const { eras, ...base } = printed;
        assert.deepEqual(
          base,
          await listAll(legacy.client as never),
          `${sample}: the catalog's JSON is what 2025-11-25 lists`,
        );
        assert.deepEqual(
          { ...base, ...eras?.['2026-07-28'] },
          await listAll(modern.client as never),
          `${sample}: and what 2026-07-28 lists`,
        );
      } finally {
        await legacy.close();
        await modern.close();
        await server.close();
      }
    });
  }

  it('documents every tool of every sample in Markdown: title, description, parameter table, annotations, output schema, example call', async () => {
    for (const sample of SAMPLES) {
      const args = ['--module', `dist/sample/${sample}/app.module.js`, ...callerArgs(sample)];
      const json = JSON.parse(
        (await catalog([...args, '--format', 'json', '--quiet'], { MCP_RESOURCE: resource })).stdout,
      ) as Json;
      const md = await catalog([...args, '--format', 'markdown', '--quiet'], { MCP_RESOURCE: resource });
      assert.equal(md.code, 0, md.stderr);
      assert.equal(md.stderr, '');
      for (const tool of json.tools as Json[]) {
        const start = md.stdout.indexOf(`### ${tool.title} (\`${tool.name}\`)`);
        assert.ok(start !== -1, `${sample}: no section for ${tool.name}`);
        const next = md.stdout.indexOf('\n### ', start + 1);
        const section = md.stdout.slice(start, next === -1 ? undefined : next);
        assert.ok(section.includes(tool.description), `${sample}/${tool.name}: description`);
        for (const [name, schema] of Object.entries((tool.inputSchema.properties ?? {}) as Record<string, Json>)) {
          assert.match(
            section,
            new RegExp(
              `\\| \`${name}\` \\| [^|]+ \\| (yes|no) \\|.*\\| ${schema.description.replace(/[.()?*+]/g, '\\$&')} \\|`,
            ),
            `${sample}/${tool.name}: parameter ${name}`,
          );
        }
        if (tool.annotations)
          assert.ok(
            section.includes(`Annotations: \`${Object.keys(tool.annotations)[0]}:`),
            `${sample}/${tool.name}: annotations`,
          );
        if (tool.outputSchema) assert.ok(section.includes('Output schema:'), `${sample}/${tool.name}: output schema`);
        const example = /Example call:\n\n```json\n([\s\S]+?)\n```/.exec(section);
        assert.ok(example, `${sample}/${tool.name}: example call`);
        assert.equal(JSON.parse(example[1]).params.name, tool.name);
      }
    }
    // The enum and nested parameters of sample 01 are in the table.
    const basic = (await catalog(['--module', 'dist/sample/01-basic/app.module.js', '--format', 'markdown', '--quiet']))
      .stdout;
    assert.match(basic, /\| `priority` \| string \| no \| {2}\| `"low"`, `"medium"`, `"high"` \|/);
    assert.match(basic, /\| `assignee.email` \| string \(email\) \| yes \|/);
  });

  it('fails the gate (exit 1) on a module with an undocumented parameter and an unportable schema, and prints why', async () => {
    const fixture = ['--module', 'dist/test/fixtures/catalog-lint.module.js#CatalogLintModule'];
    const plain = await catalog([...fixture, '--format', 'json']);
    assert.equal(plain.code, 0, 'without a bound, the findings are reported and the command succeeds');
    const gated = await catalog([...fixture, '--format', 'json', '--min-coverage', '100', '--max-warnings', '0']);
    assert.equal(gated.code, 1, gated.stderr);
    assert.match(gated.stderr, /Description coverage: 75% \(tools 3\/3, parameters 3\/5/);
    assert.match(gated.stderr, /Description coverage 75% is below --min-coverage 100\./);
    assert.match(gated.stderr, /\d+ lint warning\(s\), more than --max-warnings 0\./);
    for (const expected of [
      /\[description-missing\] tool search, parameter query has no description/,
      /\[schema-unportable\] tool lookup\.v2, input schema at \/key: "anyOf"/,
      /\[schema-unportable\] tool lookup\.v2, input schema at \/code: "\$ref"/,
      /\[schema-unportable\] tool lookup\.v2, input schema: "\$defs"/,
      /\[schema-unportable\] tool lookup\.v2, input schema at \/note: "type" is an array/,
      /\[name-portable\] tool lookup\.v2: the name is outside the portable pattern/,
      /\[name-ambiguous\] tools "search", "Search_" differ only by case or separator/,
      /\[description-short\] tool search: the description "Search\." is shorter than 10 characters/,
      /\[description-duplicate\] tool search, tool Search_ share one description/,
      /\[title-missing\] tool search has no title/,
      /\[annotations-missing\] tool Search_ has no annotations/,
    ])
      assert.match(gated.stderr, expected);
    // Each bound fails on its own.
    assert.equal((await catalog([...fixture, '--min-coverage', '75', '--quiet'])).code, 0);
    assert.equal((await catalog([...fixture, '--min-coverage', '76', '--quiet'])).code, 1);
    assert.equal((await catalog([...fixture, '--max-warnings', '1000', '--quiet'])).code, 0);
  });

  it('writes machine-readable findings: GitHub annotations on stdout and a JSON report file', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'nmc-catalog-'));
    try {
      const report = join(dir, 'report.json');
      const result = await catalog([
        '--module',
        'dist/test/fixtures/catalog-lint.module.js#CatalogLintModule',
        '--format',
        'github',
        '--report',
        report,
        '--quiet',
      ]);
      assert.equal(result.code, 0, result.stderr);
      const lines = result.stdout.trim().split('\n');
      const written = JSON.parse(readFileSync(report, 'utf8')) as Json;
      assert.equal(lines.filter((l) => l.startsWith('::warning title=MCP catalog ')).length, written.findings.length);
      assert.match(lines.at(-1)!, /^::notice title=MCP catalog::description coverage 75%, \d+ lint warning\(s\)$/);
      assert.equal(written.coverage.percent, 75);
      assert.deepEqual(written.coverage.undocumented, [
        'tool search, parameter query',
        'tool Search_, parameter query',
      ]);
      assert.ok(
        written.findings.every(
          (f: Json) => typeof f.rule === 'string' && typeof f.target === 'string' && typeof f.message === 'string',
        ),
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('renders the view of a caller: guard-aware lists hide what the principal may not call', async () => {
    const list = async (extra: string[]): Promise<string[]> =>
      (
        JSON.parse(
          (
            await catalog(['--module', 'dist/sample/05-auth-guards/app.module.js', '--quiet', ...extra], {
              MCP_RESOURCE: resource,
            })
          ).stdout,
        ) as Json
      ).tools.map((t: Json) => t.name);
    assert.deepEqual(await list([]), []);
    assert.deepEqual(await list(['--principal', 'bob', '--scopes', 'invoices:read']), ['list_invoices']);
    assert.deepEqual(await list(['--principal', 'bob', '--scopes', 'invoices:read invoices:write']), [
      'list_invoices',
      'create_invoice',
    ]);
    assert.deepEqual(await list(ADMIN), ['list_invoices', 'create_invoice', 'wipe_invoices']);
  });

  it('fails the gate when the caller was not shown the whole catalog, says how many and which, unless --allow-hidden', async () => {
    const module = ['--module', 'dist/sample/05-auth-guards/app.module.js'];
    // What a 100% gate passed before: the anonymous caller saw no tool, so nothing was undocumented.
    const gated = await catalog([...module, '--format', 'json', '--min-coverage', '100', '--max-warnings', '0'], {
      MCP_RESOURCE: resource,
    });
    assert.equal(gated.code, 1, gated.stderr);
    assert.match(
      gated.stderr,
      /Hidden from the caller \(anonymous: no --principal, --user or --authenticate\): 3 \(tools 3: list_invoices, create_invoice, wipe_invoices; resources 0; templates 0; prompts 0\)/,
    );
    assert.match(
      gated.stderr,
      /3 catalog item\(s\) were hidden from the caller the catalog listed as \(anonymous[^)]*\): its guards or scopes refused them.*--allow-hidden/,
    );
    const user = await catalog(
      [...module, '--quiet', '--principal', 'bob', '--scopes', 'invoices:read,invoices:write'],
      { MCP_RESOURCE: resource },
    );
    assert.equal(user.code, 1, 'a role guard hid the admin tool');
    const allowed = await catalog(
      [
        ...module,
        '--format',
        'json',
        '--allow-hidden',
        '--principal',
        'bob',
        '--scopes',
        'invoices:read,invoices:write',
      ],
      { MCP_RESOURCE: resource },
    );
    assert.equal(allowed.code, 0, allowed.stderr);
    assert.match(allowed.stderr, /Hidden from the caller \(principal "bob"\): 1 \(tools 1: wipe_invoices;/);
    const dir = mkdtempSync(join(tmpdir(), 'nmc-catalog-'));
    try {
      const report = join(dir, 'report.json');
      const annotated = await catalog(
        [...module, '--format', 'github', '--allow-hidden', '--quiet', '--report', report],
        { MCP_RESOURCE: resource },
      );
      assert.match(annotated.stdout, /^::error title=MCP catalog hidden::3 item\(s\) were hidden/m);
      assert.deepEqual((JSON.parse(readFileSync(report, 'utf8')) as Json).hidden.tools, [
        'list_invoices',
        'create_invoice',
        'wipe_invoices',
      ]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
    const markdown = await catalog([...module, '--format', 'markdown', '--allow-hidden', '--quiet'], {
      MCP_RESOURCE: resource,
    });
    assert.match(markdown.stdout, /\*\*3\*\* item\(s\) hidden from the caller that listed it: this catalog is partial/);
  });

  it("lists as the app's own auth sees a real token (--authenticate), or as the user object its guards read (--user)", async () => {
    const enterprise = [
      '--module',
      'dist/test/fixtures/enterprise-auth.module.js#EnterprisePassportAppModule',
      '--format',
      'json',
      '--min-coverage',
      '0',
    ];
    const admin = await catalog([
      ...enterprise,
      '--authenticate',
      '--header',
      `Authorization: Bearer ${enterpriseToken('alice', ['admin'], ['reports:read', 'reports:write'])}`,
    ]);
    assert.equal(admin.code, 0, admin.stderr);
    assert.deepEqual(
      (JSON.parse(admin.stdout) as Json).tools.map((t: Json) => t.name),
      ['whoami', 'admin_report', 'write_report'],
    );
    assert.match(admin.stderr, /Hidden from the caller \(authenticated by the app from --header\): 0 /);
    const user = await catalog([
      ...enterprise,
      '--authenticate',
      '--header',
      `Authorization: Bearer ${enterpriseToken('bob', ['user'], ['reports:read'])}`,
    ]);
    assert.equal(user.code, 1);
    assert.match(user.stderr, /tools 2: admin_report, write_report/);
    const refused = await catalog([...enterprise, '--authenticate', '--header', 'Authorization: Bearer forged']);
    assert.equal(refused.code, 2);
    assert.match(
      refused.stderr,
      /the app's authentication refused the catalog's caller \(HTTP 401\): Unauthorized: the bearer token was refused/,
    );
    assert.doesNotMatch(refused.stderr, /\n\s+at /, 'no stack trace');
    // Sample 05: its guards read request.user.roles and its audit service request.user.sub.
    const asUser = await catalog(
      [
        '--module',
        'dist/sample/05-auth-guards/app.module.js',
        '--format',
        'json',
        '--user',
        '{"sub":"alice","scope":"invoices:read invoices:write","roles":["admin"]}',
      ],
      { MCP_RESOURCE: resource },
    );
    assert.equal(asUser.code, 0, asUser.stderr);
    assert.deepEqual(
      (JSON.parse(asUser.stdout) as Json).tools.map((t: Json) => t.name),
      ['list_invoices', 'create_invoice', 'wipe_invoices'],
    );
  });

  it('names where each kind of tool takes a fix: @Tool(), @ExposeRoute() / expose.routes, the expose.commands entry, McpRegistry.addTool()', async () => {
    const result = await catalog([
      '--module',
      'dist/test/fixtures/catalog-sources.module.js#CatalogSourcesModule',
      '--format',
      'json',
    ]);
    assert.equal(result.code, 0, result.stderr);
    for (const expected of [
      /\[title-missing\] tool decorated_tool has no title: clients show the raw name; set \{ title \} on @Tool\(\)\./,
      /\[title-missing\] tool get has no title: clients show the raw name; set \{ title \} in @ExposeRoute\(\{ \.\.\. \}\) on the route, or in its expose\.routes entry/,
      /\[description-missing\] tool get, parameter id has no description: .*argumentDescriptions in @ExposeRoute\(\) or the expose\.routes entry/,
      /\[annotations-missing\] tool archive_order has no annotations: .* in its expose\.commands \/ expose\.queries entry/,
      /\[title-missing\] tool runtime_tool has no title: .* in McpRegistry\.addTool\(/,
    ])
      assert.match(result.stderr, expected);
    assert.doesNotMatch(
      result.stderr,
      /tool (get|archive_order|runtime_tool)[^\n]*on @Tool\(\)/,
      'no route, message or runtime tool is sent to @Tool()',
    );
  });

  it('says what is wrong with its arguments, with exit code 2', async () => {
    const cases: Array<[string[], RegExp]> = [
      [['--format', 'json'], /--module is required/],
      [
        ['--module', 'dist/sample/01-basic/app.module.js', '--format', 'yaml'],
        /--format "yaml" is not one of json, markdown, github/,
      ],
      [
        ['--module', 'dist/sample/01-basic/app.module.js#Nope'],
        /has no export "Nope" \(it exports: AppModule\); name it with --module/,
      ],
      [['--module', 'sample/01-basic/app.module.ts'], /is TypeScript: build the app first/],
      [['--module', 'dist/nowhere.js'], /Could not load --module dist\/nowhere\.js/],
      [
        ['--module', 'dist/sample/01-basic/app.module.js', '--min-coverage', 'lots'],
        /--min-coverage "lots" is not a non-negative number/,
      ],
      [['--module', 'dist/sample/01-basic/app.module.js', '--claims', '[1]'], /--claims must be a JSON object/],
      [
        ['--module', 'dist/sample/01-basic/app.module.js', '--header', 'no-colon'],
        /--header "no-colon" is not "Name: value"/,
      ],
      [['--module', 'dist/sample/01-basic/app.module.js', '--user', 'alice'], /--user is not JSON/],
      [
        ['--module', 'dist/sample/01-basic/app.module.js', '--authenticate', '--principal', 'alice'],
        /--authenticate runs the app's own auth/,
      ],
    ];
    for (const [args, message] of cases) {
      const result = await catalog(args);
      assert.equal(result.code, 2, `${args.join(' ')}: ${result.stderr}`);
      assert.match(result.stderr, message);
      assert.equal(result.stdout, '');
    }
    const unknown = await run(process.execPath, [bin, 'lint']);
    assert.equal(unknown.code, 2);
    assert.match(unknown.stderr, /Unknown command "lint": the command is "catalog"/);
    const help = await run(process.execPath, [bin, '--help']);
    assert.equal(help.code, 0);
    assert.match(help.stdout, /^Usage: nestjs-model-context catalog --module/);
  });
});
