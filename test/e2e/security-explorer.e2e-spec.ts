/**
 * The explorer page and the protected-resource metadata from the attacker's side, in an app with
 * a global passport-jwt guard, a global prefix and URI versioning, on Express and Fastify. Both are
 * public by nature and served beside Nest's router: the metadata exactly where the bearer
 * challenge points (RFC 9728 path insertion), the page wherever the endpoint is. Neither opens the
 * endpoint: the page's calls carry the token pasted in it through the endpoint's own auth, so no
 * token, a bad token or another principal's token gets from the page what it gets from any client.
 */
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, describe, it } from 'node:test';
import { Injectable, UseGuards, type CanActivate } from '@nestjs/common';
import type { Page } from 'playwright-core';
import {
  configureEnterpriseApp,
  EnterpriseAuthModule,
  mintToken,
  Public,
  resourceFor,
} from '../fixtures/enterprise-auth.module.js';
import { SecurityWireModule } from '../fixtures/security-wire.module.js';
import { startApp, type RunningApp } from '../utils/app.js';
import { browserAvailable, launchBrowser, type TestBrowser } from '../utils/browser.js';
import { modernRpc } from '../utils/clients.js';
import { rawGet } from '../utils/http.js';

type Json = Record<string, any>;

const alice = mintToken('alice', ['admin'], ['reports:read', 'reports:write']);
const bob = mintToken('bob', ['user'], ['reports:read']);
const artifacts = join(fileURLToPath(new URL('../../..', import.meta.url)), 'artifacts');

/** A guard the app might put on the MCP endpoint: it refuses everything. */
@Injectable()
class DenyAllGuard implements CanActivate {
  canActivate(): boolean {
    return false;
  }
}

/** The metadata URL a 401 points at, as a path on the test server. */
async function challengedMetadataPath(endpoint: string): Promise<string> {
  const missing = await modernRpc(endpoint, 'tools/list');
  assert.equal(missing.status, 401);
  const url = /resource_metadata="([^"]+)"/.exec(missing.headers.get('www-authenticate') ?? '')?.[1];
  assert.ok(url, 'the challenge names the metadata URL');
  return new URL(url).pathname;
}

for (const platform of ['express', 'fastify'] as const) {
  describe(`${platform}: metadata and explorer behind a global passport guard, prefix api + URI versioning`, () => {
    let server: RunningApp;
    let endpoint: string;

    before(async () => {
      server = await startApp(EnterpriseAuthModule.register({ guard: 'passport' }), {
        platform,
        configure: configureEnterpriseApp,
      });
      endpoint = `${server.base}/api/mcp`;
    });
    after(() => server.close());

    it('serves the metadata document exactly where the challenge points, with no token, through the global guard', async () => {
      const path = await challengedMetadataPath(endpoint);
      assert.equal(path, '/.well-known/oauth-protected-resource/api/mcp');
      const res = await fetch(`${server.base}${path}`);
      assert.equal(res.status, 200);
      assert.equal(res.headers.get('access-control-allow-origin'), '*');
      assert.deepEqual(await res.json(), {
        resource: 'http://127.0.0.1/api/mcp',
        authorization_servers: ['https://idp.example.test'],
        bearer_methods_supported: ['header'],
        scopes_supported: ['reports:read', 'reports:write'],
      });
      // Not also under the prefix or a version, where the app's guard would answer.
      for (const elsewhere of [
        '/api/.well-known/oauth-protected-resource/api/mcp',
        '/api/v1/.well-known/oauth-protected-resource/api/mcp',
        '/.well-known/oauth-protected-resource/mcp',
      ]) {
        assert.equal((await fetch(`${server.base}${elsewhere}`)).status, 404, elsewhere);
      }
    });

    it('serves the explorer page to a browser that has no token, and the page opens nothing: the endpoint still needs one', async () => {
      const page = await rawGet(`${server.base}/api/mcp/explorer`);
      assert.equal(page.status, 200, page.body);
      assert.match(page.body, /<body data-endpoint="\/api\/mcp">/);
      assert.equal(page.headers['cache-control'], 'no-store');
      // The page holds no catalog and no secret: what a caller may see comes through the endpoint.
      for (const hidden of ['whoami', 'admin_report', 'reports:write', 'idp.example.test'])
        assert.ok(!page.body.includes(hidden), `the page carries ${hidden}`);
      assert.equal((await modernRpc(endpoint, 'tools/list')).status, 401);
      assert.equal(
        (await rawGet(`${server.base}/api/mcp/explorer`, { Host: 'attacker.example' })).status,
        403,
        "the endpoint's Host check holds for the page",
      );
      assert.equal((await rawGet(`${server.base}/mcp/explorer`)).status, 404, 'only where the endpoint is');
    });

    it("lets no client get from the endpoint behind the page what its token does not grant: none, a bad one, another principal's", async () => {
      assert.equal(
        (await modernRpc(endpoint, 'tools/list', {}, { headers: { Authorization: 'Bearer not-a-token' } })).status,
        401,
      );
      const asBob = await modernRpc(endpoint, 'tools/list', {}, { headers: { Authorization: `Bearer ${bob}` } });
      assert.deepEqual(
        (asBob.json as Json).result.tools.map((t: Json) => t.name),
        ['whoami'],
      );
      const refused = await modernRpc(
        endpoint,
        'tools/call',
        { name: 'write_report', arguments: {} },
        { headers: { Authorization: `Bearer ${bob}` } },
      );
      assert.equal(refused.status, 403);
    });
  });

  describe(`${platform}: a versioned endpoint (/api/v2/mcp)`, () => {
    it('serves its metadata at the RFC 9728 path of /api/v2/mcp and its page beside it', async () => {
      const server = await startApp(EnterpriseAuthModule.register({ guard: 'passport', endpointVersion: '2' }), {
        platform,
        configure: configureEnterpriseApp,
      });
      try {
        const path = await challengedMetadataPath(`${server.base}/api/v2/mcp`);
        assert.equal(path, '/.well-known/oauth-protected-resource/api/v2/mcp');
        assert.equal(((await (await fetch(`${server.base}${path}`)).json()) as Json).resource, resourceFor('2'));
        const page = await rawGet(`${server.base}/api/v2/mcp/explorer`);
        assert.equal(page.status, 200);
        assert.match(page.body, /data-endpoint="\/api\/v2\/mcp"/);
      } finally {
        await server.close();
      }
    });
  });

  describe(`${platform}: the app decides the page's decorators apart from the endpoint's`, () => {
    it("keeps the endpoint's controllerDecorators off the page and the metadata", async () => {
      const server = await startApp(
        EnterpriseAuthModule.register({ guard: 'passport', controllerDecorators: [UseGuards(DenyAllGuard)] }),
        { platform, configure: configureEnterpriseApp },
      );
      try {
        assert.equal(
          (
            await modernRpc(
              `${server.base}/api/mcp`,
              'tools/list',
              {},
              { headers: { Authorization: `Bearer ${alice}` } },
            )
          ).status,
          403,
        );
        assert.equal((await rawGet(`${server.base}/api/mcp/explorer`)).status, 200);
        assert.equal((await fetch(`${server.base}/.well-known/oauth-protected-resource/api/mcp`)).status, 200);
      } finally {
        await server.close();
      }
    });

    it('puts the page behind the router with explorer.decorators: the global guard applies unless they mark it @Public()', async () => {
      const guarded = await startApp(
        EnterpriseAuthModule.register({ guard: 'passport', explorer: { decorators: [] } }),
        { platform, configure: configureEnterpriseApp },
      );
      const marked = await startApp(
        EnterpriseAuthModule.register({ guard: 'passport', explorer: { decorators: [Public()] } }),
        { platform, configure: configureEnterpriseApp },
      );
      try {
        const refused = await rawGet(`${guarded.base}/api/mcp/explorer`);
        assert.equal(refused.status, 401, "the app's global guard answers");
        assert.equal((JSON.parse(refused.body) as Json).app, 'enterprise', "and the app's filter");
        const page = await rawGet(`${marked.base}/api/mcp/explorer`);
        assert.equal(page.status, 200);
        assert.match(page.body, /data-endpoint="\/api\/mcp"/);
      } finally {
        await guarded.close();
        await marked.close();
      }
    });
  });
}

const browserReason = browserAvailable()
  ? false
  : 'Debian chromium is not installed at /usr/bin/chromium (apt-get install chromium)';

describe('the explorer page behind a global guard, in a real browser', { skip: browserReason }, () => {
  before(() => mkdirSync(artifacts, { recursive: true }));

  it("shows the endpoint's JSON-RPC 401 (id null) with the paste-a-token hint, then connects with a pasted token (verifyToken)", async () => {
    const server = await startApp(SecurityWireModule.register({ explorer: true } as never));
    const browser: TestBrowser = await launchBrowser();
    try {
      const page = await browser.context.newPage();
      await page.goto(`${server.url}/explorer`);
      const alert = page.locator('#status [role="alert"]');
      await alert.waitFor();
      const text = await alert.innerText();
      assert.doesNotMatch(text, /no JSON-RPC response/);
      assert.match(
        text,
        /^Error -32600: Unauthorized: this MCP endpoint needs a bearer token\..*\(HTTP 401: paste a bearer token that grants it\)$/s,
      );
      await page.fill('#token', 'alice-token');
      await page.click('#connect button');
      await page.waitForSelector('body[data-ready]');
      assert.deepEqual(await page.locator('#catalog section[data-kind="tools"] button.entry').allInnerTexts(), [
        'read_notes',
        'write_note',
        'who_answers',
      ]);
    } finally {
      await browser.close();
      await server.close();
    }
  });

  for (const platform of ['express', 'fastify'] as const) {
    it(`${platform}: opens without a token and says to paste one; a bad token is refused; each token sees its own catalog; the token is kept nowhere`, async () => {
      const server = await startApp(EnterpriseAuthModule.register({ guard: 'passport' }), {
        platform,
        configure: configureEnterpriseApp,
      });
      // A browser per server: its keep-alive connections end with it, so the server can close.
      const browser: TestBrowser = await launchBrowser();
      const page: Page = await browser.context.newPage();
      const authorized: string[] = [];
      page.on('request', (r) => {
        if (r.headers().authorization) authorized.push(`${r.method()} ${new URL(r.url()).pathname}`);
      });
      try {
        await page.goto(`${server.base}/api/mcp/explorer`);
        const status = page.locator('#status [role="alert"]');
        await status.waitFor();
        const anonymous = await status.innerText();
        assert.match(anonymous, /^Error -32600: Unauthorized: this MCP endpoint needs a bearer token\./);
        assert.match(anonymous, /\(HTTP 401: paste a bearer token that grants it\)$/);
        assert.doesNotMatch(anonymous, /no JSON-RPC response/);
        await page.screenshot({ path: join(artifacts, `explorer-needs-token-${platform}.png`), fullPage: true });

        await page.fill('#token', 'Bearer not-a-token');
        await page.click('#connect button');
        await page.locator('#status [role="alert"]', { hasText: 'refused' }).waitFor();
        assert.match(
          await status.innerText(),
          /Unauthorized: the bearer token was refused: .*\(HTTP 401: paste a bearer token that grants it\)$/,
        );

        await page.fill('#token', bob);
        await page.click('#connect button');
        await page.waitForSelector('body[data-ready]');
        assert.deepEqual(await page.locator('#catalog section[data-kind="tools"] button.entry').allInnerTexts(), [
          'whoami',
        ]);
        await page.click('button.entry[data-name="whoami"]');
        await page.click('#run');
        await page.waitForSelector('#detail .result[data-done]');
        assert.match(await page.locator('.result pre.text').innerText(), /"userId":"bob"/);

        await page.evaluate(() => (globalThis as any).document.body.removeAttribute('data-ready'));
        await page.fill('#token', alice);
        await page.click('#connect button');
        await page.waitForSelector('body[data-ready]');
        assert.deepEqual(await page.locator('#catalog section[data-kind="tools"] button.entry').allInnerTexts(), [
          'whoami',
          'admin_report',
          'write_report',
        ]);

        // The pasted tokens went to the endpoint only, and the page kept none of them.
        assert.ok(authorized.length > 0);
        assert.deepEqual([...new Set(authorized)], ['POST /api/mcp']);
        assert.deepEqual(
          await page.evaluate(() => [
            (globalThis as any).localStorage.length,
            (globalThis as any).sessionStorage.length,
            (globalThis as any).document.cookie,
          ]),
          [0, 0, ''],
        );
      } finally {
        await browser.close();
        await server.close();
      }
    });
  }
});
