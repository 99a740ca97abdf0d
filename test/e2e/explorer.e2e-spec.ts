/**
 * The explorer page: served beside the endpoint only when turned on, one self-contained HTML page
 * under a hash-pinned CSP and the endpoint's Host/Origin checks, on Express and Fastify; then
 * driven in Debian's headless Chromium on samples 02 (streaming) and 03 (elicitation).
 */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, describe, it } from 'node:test';
import { Injectable, Module, VersioningType } from '@nestjs/common';
import type { Page } from 'playwright-core';
import { Args, Content, McpModule, Tool } from 'nestjs-model-context';
import { startApp, type RunningApp } from '../utils/app.js';
import { rawGet as get } from '../utils/http.js';
import { browserAvailable, launchBrowser, type TestBrowser } from '../utils/browser.js';
import { AppModule as BasicModule } from '../../sample/01-basic/app.module.js';
import { AppModule as StreamingModule } from '../../sample/02-streaming/app.module.js';
import { AppModule as InteractiveModule } from '../../sample/03-interactive/app.module.js';
import { ReportTools } from '../../sample/02-streaming/reports.tools.js';
import { TasksService } from '../../sample/01-basic/tasks.service.js';
import { TasksTools } from '../../sample/01-basic/tasks.tools.js';

/** A 1x1 PNG: the explorer shows image content as an image. */
const PIXEL = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==';

/** Schema features a form must render: defaults, a date, an enum default, nested and arrays of objects. */
@Injectable()
class FormTools {
  @Tool({
    name: 'plan_trip',
    title: 'Plan a trip',
    description: 'Echo the plan back, to check the form the explorer renders.',
    annotations: { readOnlyHint: true },
    input: {
      type: 'object',
      properties: {
        start: { type: 'string', format: 'date', default: '2026-05-01', description: 'First day.' },
        nights: { type: 'integer', minimum: 1, default: 3, description: 'How many nights.' },
        pace: { type: 'string', enum: ['slow', 'fast'], default: 'slow', description: 'Travel pace.' },
        flexible: { type: 'boolean', default: false, description: 'Dates may move.' },
        stops: {
          type: 'array',
          description: 'Cities on the way.',
          items: {
            type: 'object',
            properties: { city: { type: 'string' }, days: { type: 'integer', default: 1 } },
            required: ['city'],
          },
        },
      },
      required: ['start'],
    },
  })
  plan(@Args() args: Record<string, unknown>): unknown {
    return { content: [Content.text('planned'), Content.image(PIXEL, 'image/png')], structuredContent: args };
  }
}

const root = fileURLToPath(new URL('../../..', import.meta.url));
const artifacts = join(root, 'artifacts');

function sha256(text: string): string {
  return `'sha256-${createHash('sha256').update(text, 'utf8').digest('base64')}'`;
}

/** What a served page must be: self-contained, hash-pinned CSP, no cache, its endpoint named. */
function assertPage(
  page: { status: number; headers: Record<string, string | string[] | undefined>; body: string },
  endpoint: string,
): void {
  assert.equal(page.status, 200, page.body);
  assert.equal(page.headers['content-type'], 'text/html; charset=utf-8');
  const csp = String(page.headers['content-security-policy']);
  const script = /<script>([\s\S]*?)<\/script>/.exec(page.body)![1];
  const style = /<style>([\s\S]*?)<\/style>/.exec(page.body)![1];
  assert.equal(
    csp,
    `default-src 'none'; script-src ${sha256(script)}; style-src ${sha256(style)}; connect-src 'self'; img-src data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'`,
  );
  assert.equal(page.headers['cache-control'], 'no-store');
  assert.equal(page.headers['x-content-type-options'], 'nosniff');
  assert.equal((page.body.match(/<script/g) ?? []).length, 1, 'one inline script, no script src');
  assert.doesNotMatch(page.body, /\b(src|href)=|https?:\/\//, 'no external resource of any kind');
  assert.ok(Buffer.byteLength(page.body) < 40_000, `the page is small (${Buffer.byteLength(page.body)} bytes)`);
  assert.match(page.body, new RegExp(`<body data-endpoint="${endpoint}">`));
}

describe('explorer page over HTTP', () => {
  it('is off by default: sample 01 serves no page', async () => {
    const server = await startApp(BasicModule);
    try {
      assert.equal((await get(`${server.url}/explorer`)).status, 404);
    } finally {
      await server.close();
    }
  });

  for (const platform of ['express', 'fastify'] as const) {
    it(`${platform}: sample 02 serves it at /mcp/explorer with a CSP, and refuses a foreign Host or Origin as the endpoint does`, async () => {
      const server = await startApp(StreamingModule, { platform });
      try {
        assertPage(await get(`${server.url}/explorer`), '/mcp');
        const foreignHost = await get(`${server.url}/explorer`, { Host: 'attacker.example' });
        assert.equal(foreignHost.status, 403);
        assert.match(foreignHost.body, /Host "attacker\.example" is not a loopback name/);
        const foreignOrigin = await get(`${server.url}/explorer`, { Origin: 'http://attacker.example' });
        assert.equal(foreignOrigin.status, 403);
        assert.match(foreignOrigin.body, /Origin "http:\/\/attacker\.example" is not allowed/);
        assert.equal((await get(`${server.url}/explorer`, { Origin: server.base })).status, 200);
      } finally {
        await server.close();
      }
    });
  }

  it('follows the global prefix and URI versioning of the endpoint, and a path of its own', async () => {
    @Module({
      imports: [McpModule.forRoot({ name: 'versioned', version: '1.0.0', endpointVersion: '1', explorer: true })],
      providers: [ReportTools],
    })
    class VersionedModule {}
    @Module({
      imports: [
        McpModule.forRoot({ name: 'own-path', version: '1.0.0', path: 'tools/mcp', explorer: { path: 'dev/try' } }),
      ],
      providers: [ReportTools],
    })
    class OwnPathModule {}
    const versioned = await startApp(VersionedModule, {
      configure: (app) => {
        app.setGlobalPrefix('api');
        app.enableVersioning({ type: VersioningType.URI });
      },
    });
    const ownPath = await startApp(OwnPathModule);
    try {
      assertPage(await get(`${versioned.base}/api/v1/mcp/explorer`), '/api/v1/mcp');
      assert.equal((await get(`${versioned.base}/mcp/explorer`)).status, 404);
      assertPage(await get(`${ownPath.base}/dev/try`), '/tools/mcp');
    } finally {
      await versioned.close();
      await ownPath.close();
    }
  });
});

const browserReason = browserAvailable()
  ? false
  : 'Debian chromium is not installed at /usr/bin/chromium (apt-get install chromium)';

describe('explorer page in a real browser', { skip: browserReason }, () => {
  let browser: TestBrowser;
  let streaming: RunningApp;
  let interactive: RunningApp;

  before(async () => {
    mkdirSync(artifacts, { recursive: true });
    browser = await launchBrowser();
    streaming = await startApp(StreamingModule);
    interactive = await startApp(InteractiveModule);
  });
  after(async () => {
    await browser?.close();
    await streaming?.close();
    await interactive?.close();
  });

  /** A page that records every request it makes and every CSP report or script error. */
  async function open(server: RunningApp): Promise<{ page: Page; requests: string[]; problems: string[] }> {
    const page = await browser.context.newPage();
    const requests: string[] = [];
    const problems: string[] = [];
    page.on('request', (r) => requests.push(r.url()));
    page.on('pageerror', (e) => problems.push(`pageerror: ${e.message}`));
    page.on('console', (m) => {
      // The browser logs each HTTP error status it gets; an error shown on purpose is not a fault.
      if (
        m.type() === 'error' &&
        !m.text().startsWith('Failed to load resource: the server responded with a status of')
      )
        problems.push(`console: ${m.text()}`);
    });
    await page.goto(`${server.url}/explorer`);
    await page.waitForSelector('body[data-ready]');
    return { page, requests, problems };
  }

  function assertSameOrigin(server: RunningApp, requests: string[], problems: string[]): void {
    assert.ok(requests.length > 1, 'the page called its endpoint');
    assert.deepEqual(
      requests.filter((url) => !url.startsWith(`${server.base}/`)),
      [],
      'no request outside the page origin',
    );
    assert.deepEqual(problems, [], 'no script error and no CSP violation');
  }

  it('sample 02: lists the catalog, fills the form, streams progress and logs before the result, shows an error, sends the pasted token', async () => {
    const { page, requests, problems } = await open(streaming);
    try {
      assert.equal(await page.locator('#status').innerText(), 'reports 1.0.0');
      assert.deepEqual(await page.locator('#catalog section h2').allInnerTexts(), [
        'TOOLS (1)',
        'RESOURCES (0)',
        'RESOURCE TEMPLATES (0)',
        'PROMPTS (0)',
      ]);
      await page.click('button.entry[data-name="build_report"]');
      assert.equal(await page.locator('#detail h2').innerText(), 'Build a report');
      assert.match(await page.locator('#detail').innerText(), /The title printed on the report\./);
      // The order in which the output appears, recorded in the page as it happens.
      await page.evaluate(() => {
        // Runs in the page (the test's tsconfig has no DOM types).
        const w = globalThis as any;
        const seen: string[] = [];
        w.seen = seen;
        new w.MutationObserver((records: any[]) => {
          for (const record of records) {
            for (const node of Array.from(record.addedNodes as ArrayLike<any>))
              if (node.matches?.('.events li')) seen.push(node.className);
            if (record.type === 'attributes' && record.target.hasAttribute('data-done')) seen.push('done');
          }
        }).observe(w.document.getElementById('detail'), {
          subtree: true,
          childList: true,
          attributes: true,
          attributeFilter: ['data-done'],
        });
      });
      await page.fill('#detail [name="title"]', 'Quarterly');
      await page.fill('#detail [name="sections"]', '4');
      await page.click('#run');
      await page.waitForSelector('#detail .result[data-done]');
      const seen = await page.evaluate(() => (globalThis as any).seen as string[]);
      assert.deepEqual(seen, ['progress', 'progress', 'progress', 'progress', 'log', 'done']);
      assert.deepEqual(
        await page.locator('.events li.progress').allInnerTexts(),
        [1, 2, 3, 4].map((n) => `progress ${n}/4: Section ${n} of 4`),
      );
      assert.equal(
        await page.locator('.events li.log').innerText(),
        '[info] reports Report "Quarterly" built with 4 sections.',
      );
      assert.equal(await page.locator('progress').evaluate((p: any) => `${p.value}/${p.max}`), '4/4');
      const structured = JSON.parse(await page.locator('.result pre.json').innerText()) as Record<string, unknown>;
      assert.deepEqual(structured, { title: 'Quarterly', sections: 4, summary: '"Quarterly" has 4 sections.' });
      await page.screenshot({ path: join(artifacts, 'explorer-sample-02.png'), fullPage: true });

      // A value the schema refuses: the tool's error is shown, not swallowed.
      await page.fill('#detail [name="sections"]', '0');
      await page.click('#run');
      await page.waitForSelector('#detail .result[data-done]');
      // Invalid arguments are the tool's isError result, shown as an error with the reason.
      assert.equal(await page.locator('.result [role="alert"]').innerText(), 'The tool reported an error (isError).');
      assert.equal(
        await page.locator('.result pre.text').innerText(),
        'Invalid arguments for tool "build_report":\n- sections: must not be less than 1 (min)',
      );
      await page.screenshot({ path: join(artifacts, 'explorer-sample-02-error.png'), fullPage: true });

      // The pasted token goes to the endpoint as a bearer token.
      const sent = page.waitForRequest((r) => r.method() === 'POST' && r.headers()['mcp-method'] === 'server/discover');
      await page.fill('#token', 'pasted-token');
      await page.click('#connect button');
      assert.equal((await sent).headers().authorization, 'Bearer pasted-token');
      await page.waitForSelector('body[data-ready]');
      assertSameOrigin(streaming, requests, problems);
    } finally {
      await page.close();
    }
  });

  it('renders forms from input schemas (nested objects, arrays, enums, formats, defaults) and shows image results', async () => {
    @Module({
      imports: [McpModule.forRoot({ name: 'forms', version: '1.0.0', explorer: true })],
      providers: [TasksService, TasksTools, FormTools],
    })
    class FormsModule {}
    const server = await startApp(FormsModule);
    const { page, requests, problems } = await open(server);
    try {
      // Sample 01's create_task: an enum, an array of strings, a nested object with an email.
      await page.click('button.entry[data-name="create_task"]');
      assert.deepEqual(await page.locator('#detail select[name="priority"] option').allInnerTexts(), [
        '(none)',
        'low',
        'medium',
        'high',
      ]);
      assert.equal(await page.locator('#detail input[name="assignee.email"]').getAttribute('type'), 'email');
      await page.fill('#detail [name="title"]', 'Write the explorer docs');
      await page.selectOption('#detail select[name="priority"]', { label: 'high' });
      await page.click('#detail button:has-text("Add tags")');
      await page.click('#detail button:has-text("Add tags")');
      await page.fill('#detail [name="tags[0]"]', 'docs');
      await page.fill('#detail [name="tags[1]"]', 'ui');
      await page.fill('#detail [name="assignee.name"]', 'Ada');
      await page.fill('#detail [name="assignee.email"]', 'ada@example.com');
      await page.click('#run');
      await page.waitForSelector('#detail .result[data-done]');
      const task = JSON.parse(await page.locator('.result pre.json').innerText()) as Record<string, unknown>;
      assert.deepEqual(
        { ...task, id: typeof task.id },
        {
          id: 'string',
          title: 'Write the explorer docs',
          priority: 'high',
          tags: ['docs', 'ui'],
          assignee: { name: 'Ada', email: 'ada@example.com' },
          done: false,
        },
      );

      // Defaults fill the form; a date input for format "date"; an array of objects.
      await page.click('button.entry[data-name="plan_trip"]');
      assert.equal(await page.locator('#detail input[name="start"]').getAttribute('type'), 'date');
      assert.equal(await page.locator('#detail input[name="start"]').inputValue(), '2026-05-01');
      assert.equal(await page.locator('#detail input[name="nights"]').inputValue(), '3');
      assert.equal(await page.locator('#detail select[name="pace"] option:checked').innerText(), 'slow');
      await page.click('#detail button:has-text("Add stops")');
      await page.fill('#detail [name="stops[0].city"]', 'Lyon');
      await page.click('#run');
      await page.waitForSelector('#detail .result[data-done]');
      assert.deepEqual(JSON.parse(await page.locator('.result pre.json').innerText()), {
        start: '2026-05-01',
        nights: 3,
        pace: 'slow',
        flexible: false,
        stops: [{ city: 'Lyon', days: 1 }],
      });
      assert.equal(await page.locator('.result img.image').getAttribute('src'), `data:image/png;base64,${PIXEL}`);
      assert.equal(
        await page.locator('.result img.image').evaluate((img: any) => img.naturalWidth),
        1,
        'the image decoded under the CSP',
      );
      assertSameOrigin(server, requests, problems);
    } finally {
      await page.close();
      await server.close();
    }
  });

  it('sample 03: answers an elicitation form in the page (input_required rounds), declines another, and shows a protocol error', async () => {
    const { page, requests, problems } = await open(interactive);
    try {
      await page.click('button.entry[data-name="delete_project"]');
      await page.fill('#detail [name="name"]', 'apollo');
      await page.click('#run');
      const ask = page.locator('form[data-elicitation]');
      await ask.waitFor();
      assert.match(await ask.innerText(), /Delete project "apollo" and all its data\?/);
      assert.match(await ask.innerText(), /Delete it \*/);
      await ask.locator('[name="confirm"]').check();
      await ask.locator('[name="reason"]').fill('moved to a new repo');
      await page.screenshot({ path: join(artifacts, 'explorer-sample-03-elicitation.png'), fullPage: true });
      await ask.locator('button[type="submit"]').click();
      await page.waitForSelector('#detail .result[data-done]');
      assert.equal(
        await page.locator('.result pre.text').innerText(),
        'Deleted project "apollo" (moved to a new repo).',
      );

      await page.fill('#detail [name="name"]', 'gemini');
      await page.click('#run');
      await page.locator('form[data-elicitation]').waitFor();
      await page.click('form[data-elicitation] button:has-text("Decline")');
      await page.waitForSelector('#detail .result[data-done]');
      assert.equal(await page.locator('.result pre.text').innerText(), 'Kept project "gemini".');

      // summarize needs sampling, which the page does not declare: the JSON-RPC error is shown.
      await page.click('button.entry[data-name="summarize"]');
      await page.fill('#detail [name="text"]', 'A long text.');
      await page.click('#run');
      await page.waitForSelector('#detail .result[data-done]');
      assert.match(await page.locator('.result [role="alert"]').innerText(), /^Error -?\d+: .*sampling/);
      assertSameOrigin(interactive, requests, problems);
    } finally {
      await page.close();
    }
  });
});
