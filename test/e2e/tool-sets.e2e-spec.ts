/**
 * Tool sets and progressive disclosure (issue 29), as an app uses them: sets from `@Tool({ sets })`,
 * a class's `@ToolSets()` and an exposed route's `sets`; each caller's sets from `select` (per
 * principal, cached), `?toolsets=` or the default; and progressive mode, whose discovery tools find
 * a tool and call it through the same pipeline as a direct call (guards, scopes, events and spans
 * naming the real tool), on both eras.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { filter, firstValueFrom } from 'rxjs';
import { McpToolSets } from 'nestjs-model-context';
import { McpEvents, type McpRequestFinishedEvent } from 'nestjs-model-context/telemetry';
import { startApp, type RunningApp } from '../utils/app.js';
import { installOtel, type InstalledOtel } from '../utils/otel.js';
import { ENTRY_PATHS, PathClient } from '../utils/paths.js';
import { ROLE_SETS, ToolSetsAppModule, ran } from '../fixtures/tool-sets.module.js';
import { AppModule as ToolSetsSample } from '../../sample/10-toolsets/app.module.js';

type Json = Record<string, any>;

const EVERY_TOOL = [
  'list_invoices',
  'create_invoice',
  'export_ledger',
  'regional_revenue',
  'void_invoice',
  'find_customer',
  'whoami',
  'revenue_report',
];
const bearer = (token: string): Record<string, string> => ({ Authorization: `Bearer ${token}` });

async function names(
  client: PathClient,
  path: (typeof ENTRY_PATHS)[number],
  headers: Record<string, string> = {},
): Promise<string[]> {
  const answer = await client.call(path, 'tools/list', {}, headers);
  assert.equal(answer.status, 200, JSON.stringify(answer.body));
  return (answer.body.result.tools as Json[]).map((tool) => tool.name as string).sort();
}

describe('tool sets', () => {
  let otel: InstalledOtel;
  before(() => {
    otel = installOtel();
  });
  after(() => otel.shutdown());

  describe('without toolSets configured', () => {
    let app: RunningApp;
    before(async () => {
      app = await startApp(ToolSetsAppModule.register({ toolSets: false }));
    });
    after(() => app.close());

    it('lists every tool as before, on every path: a tool naming sets is a tool like any other', async () => {
      const client = new PathClient(`${app.url}?toolsets=crm`);
      for (const path of ENTRY_PATHS) assert.deepEqual(await names(client, path), [...EVERY_TOOL].sort(), path);
    });
  });

  describe('anonymous callers choosing sets in the URL', () => {
    let app: RunningApp;
    before(async () => {
      app = await startApp(ToolSetsAppModule.register({}));
    });
    after(() => app.close());

    it('gives the default (every tool) without ?toolsets=, and the named sets with it, on both eras', async () => {
      for (const path of ENTRY_PATHS) {
        assert.deepEqual(await names(new PathClient(app.url), path), [...EVERY_TOOL].sort(), path);
        assert.deepEqual(
          await names(new PathClient(`${app.url}?toolsets=crm`), path),
          ['find_customer', 'whoami'],
          path,
        );
        // The class's set and the exposed route's set.
        assert.deepEqual(
          await names(new PathClient(`${app.url}?toolsets=billing`), path),
          [
            'create_invoice',
            'export_ledger',
            'list_invoices',
            'regional_revenue',
            'revenue_report',
            'void_invoice',
            'whoami',
          ],
          path,
        );
      }
    });

    it('calls a tool of the chosen sets, and answers one outside them exactly as a name never registered', async () => {
      const client = new PathClient(`${app.url}?toolsets=crm`);
      for (const path of ENTRY_PATHS) {
        const found = await client.call(path, 'tools/call', { name: 'find_customer', arguments: { name: 'Acme' } });
        assert.equal(found.body.result.content[0].text, 'customer Acme');
        const outside = await client.call(path, 'tools/call', {
          name: 'list_invoices',
          arguments: { customer: 'Acme' },
        });
        const never = await client.call(path, 'tools/call', { name: 'list_invoicez', arguments: { customer: 'Acme' } });
        assert.equal(outside.status, never.status);
        assert.equal(outside.body.error.code, never.body.error.code);
        assert.equal(
          outside.body.error.message.replace('list_invoices', 'X'),
          never.body.error.message.replace('list_invoicez', 'X'),
        );
      }
      assert.ok(!ran.includes('list_invoices:Acme'));
    });
  });

  describe('on Fastify', () => {
    let app: RunningApp;
    before(async () => {
      app = await startApp(ToolSetsAppModule.register({}), { platform: 'fastify' });
    });
    after(() => app.close());

    it('reads ?toolsets= and ?mode= from a Fastify request too', async () => {
      assert.deepEqual(await names(new PathClient(`${app.url}?toolsets=crm`), 'modern'), ['find_customer', 'whoami']);
      assert.equal((await names(new PathClient(`${app.url}?toolsets=crm&mode=progressive`), 'legacy')).length, 5);
    });
  });

  describe('principals with sets from select', () => {
    let app: RunningApp;
    before(async () => {
      ToolSetsAppModule.selects.clear();
      app = await startApp(ToolSetsAppModule.register({ auth: true }));
    });
    after(() => app.close());

    it("shows each principal its role's sets, asks select once per principal, and lets the URL only narrow", async () => {
      const client = new PathClient(app.url);
      for (const path of ENTRY_PATHS) {
        assert.deepEqual(
          await names(client, path, bearer('ann-token')),
          [
            'create_invoice',
            'export_ledger',
            'list_invoices',
            'regional_revenue',
            'revenue_report',
            'void_invoice',
            'whoami',
          ],
          path,
        );
        assert.deepEqual(await names(client, path, bearer('sam-token')), ['find_customer', 'whoami'], path);
        assert.deepEqual(await names(client, path, bearer('root-token')), [...EVERY_TOOL, 'purge_tenant'].sort(), path);
      }
      assert.equal(ToolSetsAppModule.selects.get('ann'), 1, 'select is cached per principal');
      // ann asks for crm in the URL: select did not grant it, so she gets no set's tools.
      assert.deepEqual(await names(new PathClient(`${app.url}?toolsets=crm`), 'modern', bearer('ann-token')), [
        'whoami',
      ]);
    });

    it("takes a change of a principal's sets at once on McpToolSets.refresh(), and tells clients the list changed", async () => {
      const client = new PathClient(app.url);
      const sales = ROLE_SETS.sales!;
      try {
        assert.deepEqual(await names(client, 'modern', bearer('sam-token')), ['find_customer', 'whoami']);
        ROLE_SETS.sales = ['crm', 'billing'];
        assert.deepEqual(
          await names(client, 'modern', bearer('sam-token')),
          ['find_customer', 'whoami'],
          'the cached answer holds until refreshed',
        );
        const changed = firstValueFrom(
          app.app.get(McpEvents).events$.pipe(filter((e) => e.type === 'list.changed' && e.kind === 'tools')),
        );
        app.app.get(McpToolSets).refresh('sam');
        await changed;
        assert.ok((await names(client, 'legacy', bearer('sam-token'))).includes('list_invoices'));
      } finally {
        ROLE_SETS.sales = sales;
        app.app.get(McpToolSets).refresh();
      }
    });
  });

  describe('progressive mode', () => {
    let app: RunningApp;
    let events: McpEvents;
    before(async () => {
      app = await startApp(ToolSetsAppModule.register({ auth: true, toolSets: { mode: 'progressive' } }));
      events = app.app.get(McpEvents);
    });
    after(() => app.close());

    it('lists the discovery tools instead of the catalog, each call tool with the worst hints it reaches', async () => {
      const client = new PathClient(app.url);
      for (const path of ENTRY_PATHS) {
        const answer = await client.call(path, 'tools/list', {}, bearer('ann-token'));
        const tools = answer.body.result.tools as Json[];
        assert.deepEqual(
          tools.map((tool) => tool.name),
          ['list_tool_sets', 'search_tools', 'call_tool_read', 'call_tool_write', 'call_tool_destructive'],
        );
        const hints = Object.fromEntries(tools.map((tool) => [tool.name, tool.annotations]));
        assert.equal(hints.call_tool_read.readOnlyHint, true);
        assert.equal(hints.call_tool_read.openWorldHint, false, 'every read-only tool of the catalog is closed-world');
        assert.equal(hints.call_tool_write.destructiveHint, false);
        assert.equal(hints.call_tool_destructive.destructiveHint, true);
        assert.equal(hints.call_tool_destructive.openWorldHint, true, 'void_invoice does not say it is closed-world');
      }
    });

    it("lists the caller's sets, finds its tools by words, and calls one in three requests on every path", async () => {
      const client = new PathClient(app.url);
      for (const path of ENTRY_PATHS) {
        const sets = await client.call(
          path,
          'tools/call',
          { name: 'list_tool_sets', arguments: {} },
          bearer('ann-token'),
        );
        assert.deepEqual(sets.body.result.structuredContent, {
          sets: [{ name: 'billing', title: 'Billing', description: 'Invoices and revenue reports.', tools: 6 }],
          ungroupedTools: 1,
        });
        const search = await client.call(
          path,
          'tools/call',
          { name: 'search_tools', arguments: { query: 'list invoices of a customer' } },
          bearer('ann-token'),
        );
        const hit = search.body.result.structuredContent.tools[0];
        assert.equal(hit.name, 'list_invoices');
        assert.equal(hit.callWith, 'call_tool_read');
        assert.deepEqual(hit.inputSchema.required, ['customer']);
        const call = await client.call(
          path,
          'tools/call',
          { name: hit.callWith, arguments: { name: hit.name, arguments: { customer: `c-${path}` } } },
          bearer('ann-token'),
        );
        assert.equal(call.body.result.content[0].text, `invoices of c-${path}`);
      }
    });

    it('runs a destructive tool only through call_tool_destructive, and events and spans name the real tool', async () => {
      const client = new PathClient(app.url);
      const refused = await client.call(
        'modern',
        'tools/call',
        { name: 'call_tool_read', arguments: { name: 'void_invoice', arguments: { invoiceId: 'i-1' } } },
        bearer('ann-token'),
      );
      assert.equal(refused.body.error.code, -32602);
      assert.match(
        refused.body.error.message,
        /"void_invoice" is destructive .* call it through "call_tool_destructive"/,
      );
      assert.ok(!ran.includes('void_invoice:i-1'));
      const finished = firstValueFrom(
        events.events$.pipe(
          filter((e): e is McpRequestFinishedEvent => e.type === 'request.finished' && e.tool === 'void_invoice'),
        ),
      );
      const done = await client.call(
        'modern',
        'tools/call',
        { name: 'call_tool_destructive', arguments: { name: 'void_invoice', arguments: { invoiceId: 'i-2' } } },
        bearer('ann-token'),
      );
      assert.equal(done.body.result.content[0].text, 'voided i-2');
      const event = await finished;
      assert.equal(event.principal, 'ann');
      assert.equal(event.outcome, 'ok');
      const span = otel.spans().find((s) => s.attributes['gen_ai.tool.name'] === 'void_invoice');
      assert.ok(span, 'a span names the real tool');
    });

    it("keeps the real tool's scopes: a principal without them gets the 403 a direct call gets", async () => {
      const client = new PathClient(app.url);
      // tim has the billing set but not the billing scope that void_invoice requires.
      for (const path of ENTRY_PATHS) {
        const direct = await client.call(
          path,
          'tools/call',
          { name: 'void_invoice', arguments: { invoiceId: 'i-3' } },
          bearer('tim-token'),
        );
        const viaDiscovery = await client.call(
          path,
          'tools/call',
          { name: 'call_tool_destructive', arguments: { name: 'void_invoice', arguments: { invoiceId: 'i-3' } } },
          bearer('tim-token'),
        );
        assert.equal(direct.status, 403, path);
        assert.equal(viaDiscovery.status, 403, path);
        assert.deepEqual({ ...viaDiscovery.body, id: 0 }, { ...direct.body, id: 0 });
      }
      assert.ok(!ran.includes('void_invoice:i-3'));
      // sam has neither the set nor the scope: the tool is unknown to sam, through either door, not refused.
      const direct = await client.call(
        'modern',
        'tools/call',
        { name: 'void_invoice', arguments: { invoiceId: 'i-4' } },
        bearer('sam-token'),
      );
      const viaDiscovery = await client.call(
        'modern',
        'tools/call',
        { name: 'call_tool_destructive', arguments: { name: 'void_invoice', arguments: { invoiceId: 'i-4' } } },
        bearer('sam-token'),
      );
      assert.equal(direct.body.error.code, -32602);
      assert.equal(viaDiscovery.body.error.code, -32602);
      assert.equal(direct.body.error.message, viaDiscovery.body.error.message);
    });

    it('answers the full catalog to a request asking ?mode=full', async () => {
      assert.deepEqual(await names(new PathClient(`${app.url}?mode=full`), 'modern', bearer('sam-token')), [
        'find_customer',
        'whoami',
      ]);
    });
  });

  describe('sample 10: 300 tools, sets per role from a store, progressive', () => {
    let app: RunningApp;
    before(async () => {
      app = await startApp(ToolSetsSample);
    });
    after(() => app.close());

    it("shows each user the discovery tools, finds only its roles' tools, and gives the full catalog of its sets on ?mode=full", async () => {
      const client = new PathClient(app.url);
      const alice = bearer('alice-token');
      assert.deepEqual(await names(client, 'modern', alice), [
        'call_tool_destructive',
        'call_tool_read',
        'call_tool_write',
        'list_tool_sets',
        'search_tools',
      ]);
      const sets = await client.call('legacy', 'tools/call', { name: 'list_tool_sets', arguments: {} }, alice);
      assert.deepEqual(
        sets.body.result.structuredContent.sets.map((s: Json) => s.name),
        ['billing', 'finance', 'procurement', 'payroll'],
      );
      const invoices = await client.call(
        'modern',
        'tools/call',
        { name: 'search_tools', arguments: { query: 'list invoices by status' } },
        alice,
      );
      assert.ok((invoices.body.result.structuredContent.tools as Json[]).some((t) => t.name === 'list_invoices'));
      const shipments = await client.call(
        'modern',
        'tools/call',
        { name: 'search_tools', arguments: { query: 'shipment carrier tracking' } },
        alice,
      );
      assert.ok((shipments.body.result.structuredContent.tools as Json[]).every((t) => !/shipment/.test(t.name)));
      const call = await client.call(
        'modern',
        'tools/call',
        { name: 'call_tool_read', arguments: { name: 'get_invoice', arguments: { id: 'inv-1' } } },
        alice,
      );
      assert.equal(call.body.result.content[0].text, 'get_invoice: done');
      assert.equal(
        (await names(new PathClient(`${app.url}?mode=full`), 'modern', bearer('bob-token'))).length,
        45,
        'bob: crm, sales and marketing',
      );
    });
  });
});
