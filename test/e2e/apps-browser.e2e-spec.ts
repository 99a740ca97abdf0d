/**
 * The order dashboard view of sample/09-apps-skills in a real browser (headless Chromium through
 * playwright-core). A minimal host page written for this test plays the host side of MCP Apps
 * (SEP-1865): it reads the view over the real endpoint, renders it in a sandboxed iframe under
 * the CSP its `_meta.ui` declares, answers `ui/initialize`, sends the tool input and result, and
 * forwards the view's `tools/call` to the endpoint, refusing tools whose visibility leaves out
 * "app". The test sees the orders rendered and the view's call to the app-only `ship_order`
 * change the server's state.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Page } from 'playwright-core';
import { AppModule } from '../../sample/09-apps-skills/app.module.js';
import { OrdersService } from '../../sample/09-apps-skills/orders.service.js';
import { startApp, type RunningApp } from '../utils/app.js';
import { browserAvailable, launchBrowser, type TestBrowser } from '../utils/browser.js';

/** The host page: an MCP client of the 2026-07-28 wire that declares MCP Apps, and the view's host. */
const HOST_PAGE = String.raw`<!DOCTYPE html>
<html><head><meta charset="utf-8"><title>test host</title></head>
<body>
<div id="host-status">starting</div>
<script>
const UI = 'io.modelcontextprotocol/ui';
const MIME = 'text/html;profile=mcp-app';
const capabilities = { extensions: { [UI]: { mimeTypes: [MIME] } } };
window.forwarded = [];
let nextRpc = 1;

async function mcp(method, params, name) {
  const id = nextRpc++;
  const headers = { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream', 'MCP-Protocol-Version': '2026-07-28', 'Mcp-Method': method };
  if (name !== undefined) headers['Mcp-Name'] = name;
  const _meta = { 'io.modelcontextprotocol/protocolVersion': '2026-07-28', 'io.modelcontextprotocol/clientCapabilities': capabilities };
  const response = await fetch('/mcp', { method: 'POST', headers, body: JSON.stringify({ jsonrpc: '2.0', id, method, params: { ...params, _meta } }) });
  const text = await response.text();
  const messages = (response.headers.get('content-type') || '').includes('text/event-stream')
    ? text.split('\n').filter((line) => line.startsWith('data:')).map((line) => line.slice(5).trim()).filter(Boolean).map((data) => JSON.parse(data))
    : [JSON.parse(text)];
  const reply = messages.find((message) => message.id === id);
  if (reply.error) throw Object.assign(new Error(reply.error.message), { code: reply.error.code });
  return reply.result;
}

// The host's CSP for the view, built from _meta.ui.csp as SEP-1865 shows it.
function cspFor(csp) {
  const list = (domains) => (domains || []).join(' ');
  return [
    "default-src 'none'",
    "script-src 'self' 'unsafe-inline' " + list(csp && csp.resourceDomains),
    "style-src 'self' 'unsafe-inline' " + list(csp && csp.resourceDomains),
    "connect-src 'self' " + list(csp && csp.connectDomains),
    "img-src 'self' data: " + list(csp && csp.resourceDomains),
    "font-src 'self' " + list(csp && csp.resourceDomains),
    "media-src 'self' data: " + list(csp && csp.resourceDomains),
    'frame-src ' + ((csp && csp.frameDomains && csp.frameDomains.length) ? list(csp.frameDomains) : "'none'"),
    "object-src 'none'",
    'base-uri ' + ((csp && csp.baseUriDomains && csp.baseUriDomains.length) ? list(csp.baseUriDomains) : "'self'"),
  ].join('; ');
}

async function main() {
  const { tools } = await mcp('tools/list', {});
  const byName = new Map(tools.map((tool) => [tool.name, tool]));
  const tool = byName.get('order_dashboard');
  const uri = tool._meta.ui.resourceUri;
  const read = await mcp('resources/read', { uri }, uri);
  const content = read.contents[0];
  if (content.mimeType !== MIME) throw new Error('view MIME type ' + content.mimeType);
  const ui = (content._meta && content._meta.ui) || {};
  window.viewCsp = cspFor(ui.csp);
  const html = content.text.replace('<head>', '<head><meta http-equiv="Content-Security-Policy" content="' + window.viewCsp + '">');
  const call = mcp('tools/call', { name: tool.name, arguments: {} }, tool.name);

  const iframe = document.createElement('iframe');
  iframe.setAttribute('sandbox', 'allow-scripts');
  iframe.title = 'view';
  const reply = (id, body) => iframe.contentWindow.postMessage({ jsonrpc: '2.0', id, ...body }, '*');
  const notify = (method, params) => iframe.contentWindow.postMessage({ jsonrpc: '2.0', method, params }, '*');
  window.addEventListener('message', async (event) => {
    if (event.source !== iframe.contentWindow) return;
    const message = event.data;
    if (!message || message.jsonrpc !== '2.0' || typeof message.method !== 'string') return;
    if (message.method === 'ui/initialize') {
      reply(message.id, { result: {
        protocolVersion: '2026-01-26',
        hostInfo: { name: 'test-host', version: '1.0.0' },
        hostCapabilities: { serverTools: {}, serverResources: {} },
        hostContext: { toolInfo: { tool }, displayMode: 'inline', theme: 'light', platform: 'web' },
      } });
    } else if (message.method === 'ui/notifications/initialized') {
      notify('ui/notifications/tool-input', { arguments: {} });
      notify('ui/notifications/tool-result', await call);
      document.getElementById('host-status').textContent = 'result sent';
    } else if (message.method === 'tools/call') {
      const target = byName.get(message.params && message.params.name);
      const visibility = (target && target._meta && target._meta.ui && target._meta.ui.visibility) || ['model', 'app'];
      if (!target || !visibility.includes('app')) {
        reply(message.id, { error: { code: -32602, message: 'tool not callable by the app' } });
        return;
      }
      try {
        const result = await mcp('tools/call', message.params, message.params.name);
        window.forwarded.push({ name: message.params.name, arguments: message.params.arguments, result });
        reply(message.id, { result });
      } catch (error) {
        reply(message.id, { error: { code: error.code || -32603, message: error.message } });
      }
    } else if (message.id !== undefined) {
      reply(message.id, { error: { code: -32601, message: 'Method not found: ' + message.method } });
    }
  });
  iframe.srcdoc = html;
  document.body.append(iframe);
}
main().catch((error) => { document.getElementById('host-status').textContent = 'host failed: ' + error.message; });
</script>
</body></html>`;

describe(
  'MCP Apps: the sample dashboard view in headless Chromium through a minimal host page',
  { skip: browserAvailable() ? false : 'Chromium is not installed (/usr/bin/chromium)' },
  () => {
    let server: RunningApp;
    let browser: TestBrowser;
    let page: Page;

    before(async () => {
      server = await startApp(AppModule);
      browser = await launchBrowser();
      page = await browser.context.newPage();
      // The host page is served at the server's own origin, so its fetches to /mcp are same-origin.
      await page.route(`${server.base}/host.html`, (route) =>
        route.fulfill({ contentType: 'text/html', body: HOST_PAGE }),
      );
      await page.goto(`${server.base}/host.html`);
    });
    after(async () => {
      await browser?.close();
      await server?.close();
    });

    it('renders the tool result the host passes to the sandboxed view', async () => {
      const iframe = page.locator('iframe[title="view"]');
      assert.equal(
        await iframe.getAttribute('sandbox'),
        'allow-scripts',
        'the view has no same-origin access to the host',
      );
      const view = page.frameLocator('iframe[title="view"]');
      await view.locator('tr[data-order="A-1001"] td.open').waitFor();
      assert.deepEqual(
        await view
          .locator('tbody tr')
          .evaluateAll((rows) => rows.map((row) => (row as unknown as { dataset: { order: string } }).dataset.order)),
        ['A-1001', 'A-1002', 'A-1003'],
      );
      assert.equal(await view.locator('tr[data-order="A-1003"] td.shipped').textContent(), 'shipped');
      assert.equal(await page.locator('#host-status').textContent(), 'result sent');
      assert.match(
        await page.evaluate(() => (globalThis as unknown as { viewCsp: string }).viewCsp),
        /^default-src 'none'; script-src 'self' 'unsafe-inline' ; .*connect-src 'self' ; .*frame-src 'none'; object-src 'none'; base-uri 'self'$/,
      );
    });

    it("the view's Ship button calls the app-only ship_order through the host and the real endpoint", async () => {
      const view = page.frameLocator('iframe[title="view"]');
      await view.locator('tr[data-order="A-1001"] button', { hasText: 'Ship' }).click();
      await view.locator('tr[data-order="A-1001"] td.shipped').waitFor();
      assert.equal(await view.locator('#status').textContent(), 'Order A-1001 shipped.');
      const forwarded = await page.evaluate(
        () =>
          (
            globalThis as unknown as {
              forwarded: Array<{
                name: string;
                arguments: unknown;
                result: { structuredContent: { shipped: string } };
              }>;
            }
          ).forwarded,
      );
      assert.deepEqual(
        forwarded.map((f) => [f.name, f.arguments, f.result.structuredContent.shipped]),
        [['ship_order', { id: 'A-1001' }, 'A-1001']],
      );
      // The server's own state changed: the call went through the endpoint, not around it.
      const order = server.app
        .get(OrdersService)
        .list()
        .find((o) => o.id === 'A-1001');
      assert.equal(order?.status, 'shipped');
    });
  },
);
